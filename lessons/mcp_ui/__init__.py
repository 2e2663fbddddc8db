"""The notebook side of the lesson: an MCP client with an ipywidgets user interface.

Every notebook in lessons/ does `import mcp_ui as ui` and uses what is re-exported here:

    lab = ui.NotesLab()                   # a temporary notes folder (removed at the end)
    conn = await lab.connect()            # a NotesServer in this kernel + the lesson's client
    await conn.call("notes_delete", {"title": "TPS report"},
                    scripted=[{"action": "accept", "content": {...}}])
    conn.transcript(last_call=True)       # the frames that crossed, one line each
    ui.revisar("ejercicio2")              # runs the grader on soluciones/ and shows feedback

Who answers the server's questions (forms and URL consents): the learner, in the cell (the
call waits for the click; in JupyterLite, where a waiting cell cannot get clicks, the cell
runs as a task and fills in its output as it goes: cells.py); with LESSON_USER=scripted (what
`make test` sets), or `simulate=True` on one call, a scripted user plays the answers listed in
`scripted=[...]` through the same widgets. Answering a widget never moves the notebook's
selection (focus.py), so the next Shift+Enter runs the next cell.

One file per job: forms.py (the form widget), consent.py (the URL consent), users.py (who
answers), lab.py, lab_client.py and records.py (the lab, its server and client, what they
keep), checks.py (the exercise checks), transcript.py (frames as text), pages.py (the setup
page from the notebook), review.py (check my work), recap.py (quiz and code tour), cells.py
(JupyterLite's cells as tasks), focus.py (clicks that keep the selection), sdk.py (the official
SDK in JupyterLite), diagnose.py (`ui.diagnostico()`: is this notebook set up?), interrupt.py
(■ stops a waiting call at once), server_log.py (the server's log in Spanish), weak_sealers.py
and attacks.py (notebook 6: deliberately broken requestState sealers, and the attacks that
break them), prereqs.py (a call to an exercise's tool before the exercise says which notebook
to do first), replicas.py (notebook 6: two `serve --http` replicas behind a round-robin front),
naive.py (`ui.naive.connect(lab)`: a server with the shortcuts the core's predictions show
failing beside the lesson's), try_flow.py (exercise 3B with your own clicks: the client follows
−32042). env.py says where things are and what the kernel can do; importing the package only
puts code/ on sys.path.

Deliberate simplifications: the same process runs the kernel, the server and the learner's
solution (the grader isolates solutions; this is a practice lab).
"""

from . import (  # env first: it puts code/ on sys.path for the modules below
    env,  # noqa: F401
    naive,  # ui.naive.connect: the naive server of notebooks 1, 2 and 4
)
from .attacks import Outcome  # also makes ui.attacks (notebook 6: ui.attacks.forge(conn))
from .checks import GUARD_CASES, check
from .consent import ConsentDialog, preview_consent
from .diagnose import diagnostico
from .env import CODE, LESSONS, REPO, SOLUTIONS, Kernel, current_kernel, scripted_mode
from .forms import ElicitationForm, FormField, check_form, options_of
from .lab import NotesLab
from .lab_client import CallRecord, LabClient, ToolResult
from .pages import SimulatedPage, open_page, submit_page
from .recap import code_tour, load_quiz, quiz
from .replicas import Fleet  # also makes ui.replicas (notebook 6: ui.replicas.start(lab))
from .review import Review, revisar
from .sdk import install_sdk
from .transcript import peek_state, side_by_side, summarize_frame
from .users import CallPanel, NoAnswer, Raw, WidgetUser
from .weak_sealers import EncodedOnly, ForeverReusable, KeyedButUnbound, UnkeyedHash

__all__ = [
    "CODE", "GUARD_CASES", "LESSONS", "REPO", "SOLUTIONS", "CallPanel", "CallRecord",
    "EncodedOnly", "ForeverReusable", "KeyedButUnbound", "Outcome", "UnkeyedHash", "attacks",
    "Fleet", "replicas", "weak_sealers",
    "ConsentDialog", "ElicitationForm", "FormField", "Kernel", "LabClient", "NoAnswer",
    "NotesLab", "Raw", "naive",
    "Review", "SimulatedPage", "ToolResult", "WidgetUser", "check", "check_form", "code_tour",
    "current_kernel", "diagnostico", "install_sdk", "load_quiz", "open_page", "options_of",
    "peek_state", "preview_consent", "quiz", "revisar", "scripted_mode", "side_by_side",
    "submit_page", "summarize_frame",
]
