"""The autograder for the lesson "Roots y Elicitación": `python -m grader PATH...`.

It turns each submission into a notes server running in a sandbox, talks MCP to it as a
scripted client, and grades what comes over the wire and what happens on disk. See
grader/README.md.
"""
