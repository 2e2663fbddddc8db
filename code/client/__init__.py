"""The lesson's MCP client: a sans-I/O core (client_core) and its drivers, blocking
(sync_client: the demo, the tests, the grader) and asyncio (async_client: the notebooks), over
Streamable HTTP too (http_client), with a simulated user and browser (simulated_user).
Imports transports/ (the loopbacks), notes/ (roots) and shared/."""
