"""Run a command the way a Docker container runs the Gradescope bundle: root, namespaces refused.

    python tests/grader/nonamespaces.py [--no-landlock] COMMAND [ARG...]

Docker starts a container's processes as root (uid 0) without CAP_SYS_ADMIN, under a seccomp
profile that refuses `unshare`, `setns` and `clone` with namespace flags (and gives `clone3`
ENOSYS). This launcher builds exactly that condition in the current process and then execs
COMMAND: it installs a seccomp filter with those rules (while it still may: without
no_new_privs that needs CAP_SYS_ADMIN), then drops CAP_SYS_ADMIN from the bounding, effective,
permitted and inheritable sets, and execs. Everything COMMAND starts inherits both. The
grader's sandbox then cannot build its namespaces and falls back to its plain mode, the way it
does on Gradescope. `--no-landlock` also refuses the Landlock calls, as Docker's profile did
before 23.0: plain mode then has no Landlock, and only file permissions keep what is private.

Deliberate simplifications: no_new_privs is left off (as in Docker); only CAP_SYS_ADMIN is
dropped (Docker drops more; none of the others decides whether namespaces can be made).
"""

import ctypes
import os
import sys

CAP_SYS_ADMIN = 21
PR_CAPBSET_DROP = 24
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
LINUX_CAPABILITY_VERSION_3 = 0x20080522
DENIED = ("unshare", "setns", "clone3", "clone (namespace or pidfd flags)")


NO_LANDLOCK = ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self")


def refuse_namespaces(landlock=True):
    """The seccomp filter of Docker's default profile, as far as namespaces (and, before 23.0,
    Landlock) go."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(os.path.dirname(here)))
    from grader.hosts import zygote  # the same BPF builder as the sandbox (x86_64, aarch64)
    denied = DENIED + (() if landlock else NO_LANDLOCK)
    program = zygote.seccomp_program(denied, os.uname().machine)
    filters = (zygote._SockFilter * len(program))(*[zygote._SockFilter(*op) for op in program])
    fprog = zygote._SockFprog(len(program), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog),
                  ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")


def drop_sys_admin():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(CAP_SYS_ADMIN), ctypes.c_ulong(0),
                  ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        raise OSError(ctypes.get_errno(), "PR_CAPBSET_DROP")
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # {effective, permitted, inheritable} x 2 words
    if libc.capget(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    for index in range(3):
        data[index] &= ~(1 << CAP_SYS_ADMIN)
    if libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def main(argv):
    landlock = argv[:1] != ["--no-landlock"]
    argv = argv if landlock else argv[1:]
    if not argv:
        sys.exit(__doc__)
    refuse_namespaces(landlock)
    drop_sys_admin()
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
