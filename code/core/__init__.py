"""The protocol core, sans I/O: what a tool is (tooling) and may ask (elicitation), the sealed
requestState (request_state, spent_states), what a tool sees (context), the calls of a session
(calls), where the two revisions part (revisions) and one client's session (session).
Imports shared/ and notes/ only."""
