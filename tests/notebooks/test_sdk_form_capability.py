"""Notebook 5's `notes_delete` asks with a form only a client that declared form mode.

2025-11-25, Client › Elicitation › Capabilities: a client declares the modes it supports;
`"elicitation": {}` means form mode (the 2025-06-18 shape), `{"url": {}}` alone means URL mode
only, and a server MUST NOT send a mode the client did not declare. The notebook's tool reads
the SDK's `ClientCapabilities` through `supports_form` (code/core/elicitation.py); these tests run
that very cell against a stand-in `Context` whose session records what would have been sent.
"""

import asyncio
from types import SimpleNamespace

import mcp.types as types
import pytest
from notebook_helpers import code_cells, import_mcp_ui

from elicitation import supports_form  # code/

ui = import_mcp_ui()
URL_ONLY = types.ClientCapabilities(roots=types.RootsCapability(),
                                    elicitation=types.ElicitationCapability(
                                        url=types.UrlElicitationCapability()))
BARE = types.ClientCapabilities(roots=types.RootsCapability(),
                                elicitation=types.ElicitationCapability())
NONE = types.ClientCapabilities(roots=types.RootsCapability())


def declared(caps):
    return caps.model_dump(mode="json", by_alias=True, exclude_none=True)


@pytest.mark.parametrize(("caps", "form"), [(URL_ONLY, False), (BARE, True), (NONE, False)])
def test_the_sdk_capabilities_declare_form_mode_as_the_spec_reads_them(caps, form):
    assert supports_form(declared(caps)) is form


def notebook_tool():
    (cell,) = [c for c in code_cells("05_sdk_oficial.ipynb")
               if "sdk_server = MCPServer" in c.source]
    namespace: dict = {}
    exec(compile(cell.source, "05_sdk_oficial.ipynb", "exec"), namespace)  # noqa: S102
    return namespace["notes_delete"]


def run_tool(caps):
    """Call the notebook's tool for the two «TPS report» notes; return its text and the forms
    it sent."""
    sent = []

    async def list_roots():
        return SimpleNamespace(model_dump=lambda mode=None: {"roots": [{"uri": lab.uri("Notas")}]})

    async def elicit_form(message, schema, related_request_id=None):
        sent.append(schema)
        return SimpleNamespace(action="decline", content=None)

    lab = ui.NotesLab(quiet=True)
    try:
        ctx = SimpleNamespace(client_capabilities=caps, request_id=1, session=SimpleNamespace(
            list_roots=list_roots, elicit_form=elicit_form))
        text = asyncio.run(notebook_tool()("TPS report", ctx))
        return text, sent, lab.snapshot()
    finally:
        lab.close()


def test_a_url_only_client_gets_no_form_and_nothing_is_deleted():
    text, sent, _ = run_tool(URL_ONLY)
    assert sent == [] and "no admite formularios" in text


def test_a_bare_elicitation_object_gets_the_form():
    text, sent, _ = run_tool(BARE)
    assert len(sent) == 1 and text == "No se borró nada."
