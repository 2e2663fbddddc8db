"""Answering a widget never moves the notebook's selection.

JupyterLab (and JupyterLite, the same page) makes a cell the active one when the mouse goes
down in it or something inside it takes the focus. So a click on a form selects the form's own
cell, and the learner's next Shift+Enter runs that cell again: a second call, a second form.
`keep_selection(box)` marks a widget box (class `mcp-keep-selection`) and puts in it a hidden
Output whose JavaScript (run once per page) does two things for every marked box:

- `mousedown`, `pointerdown` and `focusin` inside the box stop at the box: the widget handles
  them as usual, the notebook never sees them, so the active cell stays the one the learner
  had reached (after Shift+Enter, the cell below the call);
- a press on something that cannot take the focus (an option's words, a label, the question's
  text) moves the focus to the nearest thing that can: the widget's own cell. That focus
  change, between the button going down in a box and going up, is kept from the notebook too;
- after a click on anything but a text field, the keyboard goes back to that active cell
  (buttons are disabled once answered, and a disabled button drops the focus), so the next
  Shift+Enter runs the next cell.

Where JavaScript outputs do not run (VS Code, a static page) nothing changes.

Deliberate simplifications: the script is a display output inside the widget, the only channel
a kernel has to a page; it is idempotent, not removable; text fields keep the focus (typing in
them must work), so Shift+Enter there runs the active cell directly.
"""

from __future__ import annotations

import ipywidgets as w

CLASS = "mcp-keep-selection"  # also spelled out in SCRIPT
SCRIPT = """(() => {
  if (window.__mcpKeepSelection2) { return; }
  window.__mcpKeepSelection2 = true;
  const BOX = '.mcp-keep-selection';
  const TYPING = 'input:not([type]), input[type=text], input[type=number], input[type=email],'
    + ' input[type=url], input[type=date], input[type=password], textarea, select';
  const shield = event => {
    const box = event.target instanceof Element && event.target.closest(BOX);
    if (!box || box.__mcpShielded) { return; }
    box.__mcpShielded = true;
    for (const type of ['mousedown', 'pointerdown', 'focusin']) {
      box.addEventListener(type, e => e.stopPropagation());
    }
  };
  for (const type of ['mousedown', 'pointerdown', 'focusin']) {
    document.addEventListener(type, shield, true);
  }
  let pressed = null;  // the marked box the mouse button went down in, until it goes up
  document.addEventListener('pointerdown', event => {
    pressed = event.target instanceof Element ? event.target.closest(BOX) : null;
  }, true);
  document.addEventListener('pointerup', () => { pressed = null; }, true);
  document.addEventListener('focusin', event => {
    if (pressed && !pressed.contains(event.target)) { event.stopPropagation(); }
  }, true);
  document.addEventListener('click', event => {
    const target = event.target instanceof Element ? event.target : null;
    const box = target && target.closest(BOX);
    if (!box || target.closest(TYPING)) { return; }
    const notebook = box.closest('.jp-Notebook');
    if (!notebook) { return; }
    setTimeout(() => {
      const active = notebook.querySelector('.jp-Cell.jp-mod-active') || notebook;
      active.focus({preventScroll: true});
    }, 0);
  }, true);
})();"""


def installer() -> w.Output:
    """A hidden Output holding the script (outputs of an Output widget are trusted)."""
    out = w.Output(layout=w.Layout(display="none"))
    out.outputs = ({"output_type": "display_data", "metadata": {},
                    "data": {"application/javascript": SCRIPT, "text/plain": ""}},)
    out.add_class("mcp-keep-selection-script")
    return out


def keep_selection(box: w.Box) -> w.Box:
    """Mark `box` so clicks and focus inside it leave the notebook's selection alone."""
    if CLASS not in box._dom_classes:
        box.add_class(CLASS)
        box.children = (installer(), *box.children)
    return box
