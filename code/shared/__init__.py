"""What every layer, and both ends of the wire, share: the protocol's names, the JSON-RPC framing
and the 2026-07-28 HTTP headers. Imports nothing else of code/."""
