"""The URL-mode consent dialog: show everything about the URL, fetch nothing, ask for consent.

The dialog shows the server's message, the full URL with its host marked and its site in bold,
and every warning a careful client gives (the server's own `url_mode.url_problems`, plus hosts
with non-ASCII letters). Accept only means "I agree to open it": the page is opened afterwards
(a link appears, or the simulated page is drawn; see users.py). `preview_consent` draws the
dialog for any URL with its buttons disabled.

Deliberate simplifications: the "site" is the last two labels of the host (no public suffix
list: `x.co.uk` would give `co.uk`).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import ipywidgets as w
from IPython.display import display

from shared.protocol import SERVER_INFO, URL_MODE
from urlflow import url_mode

from .dialog import BOX, Dialog
from .text import esc


def site_of(host: str) -> str:
    """The part of a host that says who you are talking to: the last two labels
    (`notas-sync.example.evil.example` -> `evil.example`), or the whole IP / localhost."""
    if url_mode.is_loopback(host) or re.fullmatch(r"[\d.]+|\[?[0-9a-f:]+\]?", host or ""):
        return host
    labels = host.split(".")
    return ".".join(labels[-2:]) if len(labels) > 2 else host


def highlight_host(url: str) -> str:
    """The full URL as HTML with its host marked (and its site in bold); all escaped and
    nothing clickable."""
    parts = urlsplit(url)
    host, netloc = parts.hostname or "", parts.netloc
    start = netloc.lower().find(host, netloc.rfind("@") + 1) if host else -1
    if start < 0:
        return f"<code>{esc(url)}</code>"
    before = f"{parts.scheme}://{netloc[:start]}" if parts.scheme else netloc[:start]
    after = url[len(before) + len(host):] if url.startswith(before) else ""
    shown = netloc[start:start + len(host)]
    site = site_of(host)
    head = shown[:len(shown) - len(site)] if shown.lower().endswith(site) else ""
    return (f"<code style='word-break:break-all'>{esc(before)}"
            f"<mark style='background:#ffe58f'>{esc(head)}<b>{esc(shown[len(head):])}</b></mark>"
            f"{esc(after)}</code>")


def url_warnings(url: str) -> list[str]:
    """What a careful client warns about before asking for consent (Spanish sentences)."""
    warnings = list(url_mode.url_problems(url))
    host = urlsplit(url).hostname or ""
    if any(ord(c) > 127 for c in host):
        try:
            ascii_host = host.encode("idna").decode()
        except UnicodeError:
            ascii_host = "no representable"
        warnings.append(f"el host tiene caracteres no ASCII (en punycode: {ascii_host}); "
                        "comprueba que es el sitio que esperas")
    return warnings


def host_note(url: str) -> str:
    host = urlsplit(url).hostname or "(sin host)"
    if url_mode.is_loopback(host):
        return f"{host}: esta misma máquina (loopback)"
    site = site_of(host)
    return site if site == host else f"{site} (host completo: {host})"


AFTER_CONSENT = {
    "link": "Si aceptas, verás un enlace para abrirla tú",
    "inline": "Si aceptas, verás debajo una simulación de esa página (en el navegador no hay "
              "servidor web)",
}


class ConsentDialog(Dialog):
    accept_label = "Acepto abrir la página"

    def __init__(self, params: dict, server: str = SERVER_INFO["name"], preview: bool = False,
                 opens: str = "link"):
        super().__init__()
        self.params = params
        url = str(params.get("url", ""))
        self.warnings = url_warnings(url)
        rows = [f"<div>🌐 El servidor <b>{esc(server)}</b> quiere que abras una página "
                "fuera de este cliente:</div>",
                f"<div style='margin:4px 0'>{esc(params.get('message', ''))}</div>",
                "<div>Dirección completa:</div>", f"<div>{highlight_host(url)}</div>",
                f"<div>Dominio: <b>{esc(host_note(url))}</b></div>"]
        rows += [f"<div style='color:#c0392b'>⚠ {esc(text)}</div>" for text in self.warnings]
        rows.append("<div style='color:#555;font-size:90%'>El cliente no ha descargado nada "
                    f"de esta dirección. {AFTER_CONSENT[opens]}; lo que escribas allí no pasa "
                    "por el cliente ni por el modelo.</div>")
        self.html = w.HTML("".join(rows))
        self.widget = w.VBox([self.html, w.HBox(list(self.buttons.values())), self.status],
                             layout=w.Layout(**BOX))
        if preview:
            for button in self.buttons.values():
                button.disabled = True
            self.status.value = "<i>Vista previa: estos botones no envían nada.</i>"


def preview_consent(url: str, message: str = "Conecta tu cuenta.") -> ConsentDialog:
    """Draw the consent dialog for a URL, with its warnings; nothing is fetched or sent."""
    dialog = ConsentDialog({"mode": URL_MODE, "message": message, "url": url}, preview=True)
    display(dialog.widget)
    return dialog
