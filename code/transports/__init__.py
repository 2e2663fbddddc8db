"""How the sans-I/O core meets the world: stdio, the in-process loopbacks and their clocks
(transport), Streamable HTTP (streamable_http, its streams and answers in http_streams), the one
thread that reads every HTTP connection (http_front), each 2026-07-28 HTTP client's own space
(client_spaces) and the setup page served over HTTP (page_http). Imports urlflow/, core/,
notes/ and shared/."""
