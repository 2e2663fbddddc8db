"""The grader's own exceptions, in a module that imports nothing: every host (the Linux sandbox,
the portable self-check, the in-process self-check) and the harness share them.

- `Refused`: something the grader did not make is where it looked (a link, a FIFO, a swapped
  folder); the message is a Spanish sentence for the learner's report.
- `Full`: the submission filled its own disk.
- `HostError`: the place where servers run could not do what was asked (it died, did not answer,
  or could not start a server); grader.hosts.sandbox.SandboxError is the sandbox's kind of it.
"""


class Refused(Exception):
    """Something the grader did not make is where it looked; the message is Spanish."""


class Full(Refused):
    """The sandbox's disk (its own tmpfs) is full."""


class HostError(Exception):
    """The server host could not do what was asked (it died, or did not answer in time)."""
