"""Protocol constants: one home for every version, `_meta` key, error code and name on the wire.

Everything else imports its constants from here, so a revision or a key is spelled once.

Deliberate simplifications: only what this lesson uses; the MCP error codes that JSON-RPC
itself defines (-32700 ... -32603) live in wire.py with the framing.
"""

# -- revisions --------------------------------------------------------------------------------
LATEST_HANDSHAKE = "2025-11-25"      # negotiated with `initialize`; has URL mode
FORM_ONLY = "2025-06-18"             # the first revision with elicitation: forms only
HANDSHAKE_VERSIONS = (LATEST_HANDSHAKE, FORM_ONLY, "2025-03-26", "2024-11-05")
STATELESS_VERSION = "2026-07-28"     # no handshake: `_meta` on every request, input_required
REVISIONS = (LATEST_HANDSHAKE, STATELESS_VERSION)  # the two the lesson teaches, side by side;
                                                   # both have URL mode

# -- elicitation modes (`params.mode`, and the keys of `capabilities.elicitation`) -------------
FORM_MODE = "form"                   # the client shows a form; the answer comes back in-band
URL_MODE = "url"                     # the user goes to a page; nothing secret crosses the client

# -- the 2026-07-28 `_meta` envelope ----------------------------------------------------------
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

# -- MCP error codes (JSON-RPC's own are in wire.py) -----------------------------------------
URL_ELICITATION_REQUIRED = -32042    # 2025-11-25 only; reserved and retired in 2026-07-28
MISSING_CLIENT_CAPABILITY = -32021   # 2026-07-28
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28
HEADER_MISMATCH = -32020             # 2026-07-28, Streamable HTTP: headers differ from the body

# -- this lesson's names -----------------------------------------------------------------------
SERVER_INFO = {"name": "notas-roots-elicitacion", "title": "Notas (lección Roots y Elicitación)",
               "version": "1.0.0"}
CLIENT_INFO = {"name": "cliente-de-la-leccion", "version": "1.0.0"}
SOLUTION_META_KEY = "io.github.curso-mcp/solution"  # what a learner's solution loaded
SETUP_PAGE_METHOD = "io.github.curso-mcp/setupPage"  # `serve --setup-page rpc`: the page
SECOND_SESSION_METHOD = "io.github.curso-mcp/secondSession"  # `serve --second-user`: its frames
PROVIDER_METHOD = "io.github.curso-mcp/provider"     # `serve --provider rpc`: Nube de Copias
SYNC_PROVIDER = "notas-sync"                         # the simulated third-party provider
SIMULATED_SDK_VERSION = "2.3.0"                      # what the stdlib server pretends to run on
