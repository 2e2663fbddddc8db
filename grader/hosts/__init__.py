"""Where a submission's servers run: the official sandbox, or one of the two self-check hosts,
and everything that only they use.

Every host offers the same interface, so the checks (grader/checks/) are the same code in every
mode; channels.py, runs.py, lab.py and notes_tree.py of grader/checks/ are the only code that
talks to one:

    mode, plan, notice        what is in force (the report's `protections`), and a Spanish
                              sentence saying plainly what this mode is ("" when official)
    processes                 True: servers are processes (`spawn`); False: in-process
                              (`new_server(settings)` -> a NotesServer; settings are
                              server.Config fields)
    start() / close()         set up and tear down (close leaves nothing running)
    kill()                    end every server now, from any thread (the budget watchdog)
    sweep()                   end every server (between tests, after one misbehaved)
    lend(lending)             the submission lends its busy slot while its checks wait on the
                              clock: its servers get the least CPU meanwhile (root mode's
                              cgroups; nothing elsewhere)
    identity()                who one test's servers run as (a fresh uid where the host has
                              private uids, else None)
    release(identity)         that test is over: end every process that ran as it
    data                      the data folder: make_dir, write_file, make_link, move, remove,
                              remove_link, snapshot, close
    inner(name)               where the server sees "solution" and "data"
    spawn(argv, private, identity) -> process
                              `argv` is every server's command line, `private` this test's
                              options (never on the command line); the process offers
                              read(timeout), send(data), close_input(), close_output(), kill(),
                              status(wait), stderr(), pid

The three kinds, each a class of grader/hosts/kinds.py (how a submission is read before its
host starts, its workspace, its host, the flags the command line needs), chosen once by
`kind(name)` from the `KINDS` table, as httpcore's AutoBackend picks its backend:

| kind        | class           | its host                                  | for              |
| ----------- | --------------- | ----------------------------------------- | ---------------- |
| `sandbox`   | `SandboxKind`   | sandbox.py: servers forked by a zygote    | official grading |
| `portable`  | `PortableKind`  | portable.py: `python launch.py ... serve` | ui.revisar       |
|             |                 | (or forked by `launch.py --fork-server`)  |                  |
| `inprocess` | `InProcessKind` | inprocess.py: NotesServer + Client.local  | ui.revisar, Lite |

`auto` is the sandbox where it can run (Linux, with its system python3) and portable elsewhere;
a new kind is one host module, one class in kinds.py and one row of `KINDS`.

What lives here, besides the kinds (grader/intake/ reads the submission; grader/boundary.py,
the one trust boundary, is shared with intake and the checks):

    sandbox.py      the grader's side of the sandbox: its modes, its plan, forking servers
    zygote.py       inside the sandbox: builds it and forks the servers; launched by path under
                    /usr/bin/python3 -I, so it imports nothing of the grader
    ahead.py        a sandbox built before its submission is known, by a warm helper's worker
    tempspace.py    the sandbox's temporary folders and cgroups, removed when their owner died
    uids.py         a fresh uid for each test (root); reaper.py ends every process of one
                    (plain mode has no PID namespace)
    plainmode.py    what plain mode (and the portable fallback) may grade, decided before grading
    portable.py     the portable host; launch.py starts one of its servers (launched by path,
                    imports nothing of the grader), or is its fork server where the system
                    has fork; forks.py is the host's side of that fork server
    inprocess.py    the in-process host
    plainfs.py      the self-checks' note folders, by path
    protections.py  what a report lists under `protections`, for every kind

Deliberate simplifications: the kind is chosen per run, not per submission.
"""

import os

from grader.hosts import kinds
from grader.hosts.kinds import InProcessKind, PortableKind, SandboxKind

KINDS = {"sandbox": SandboxKind, "portable": PortableKind, "inprocess": InProcessKind}
NAMES = ("auto", *KINDS)  # what --host takes


def kind(name="sandbox"):
    """The kind called `name`, built once; `auto` may be forced with GRADER_HOST (to test the
    portable self-check on Linux, as ui.revisar runs it: `--host auto`). None (no --host given)
    is the sandbox where it can run and the portable host elsewhere (the report says so)."""
    automatic = name in (None, "auto")
    if name is None:
        name = "sandbox" if kinds.sandbox_possible() else "portable"
    if name == "auto":
        name = os.environ.get("GRADER_HOST") or "auto"
    if name == "auto":
        name = "sandbox" if kinds.sandbox_possible() else "portable"
    if name not in KINDS:
        raise ValueError(f"unknown host {name!r} (use one of {', '.join(NAMES)})")
    return KINDS[name](automatic=automatic)
