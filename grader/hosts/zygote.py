"""Inside the sandbox: build it, then fork one notes server per request of the grader.

Run by the grader (never imported by it) as

    /usr/bin/python3 -I grader/hosts/zygote.py CTL_FD

where CTL_FD is the control socket; its first message is the configuration (JSON), so that no
path or uid of the sandbox shows in any process's command line.

Stdlib only, single-threaded (it forks). It first ties itself to the grader (parent-death
signal: if the grader dies, so does the sandbox), joins the cgroups the grader made for it,
then builds what `config["mode"]` allows:

- "root" (the grader runs as root on Linux): new mount, network, PID, IPC and UTS namespaces;
  a tmpfs becomes the new root with read-only binds of /usr (and /lib*), the server code and
  this learner's solution, and a few device files; `lo` is brought up; then it forks the
  "zygote" (PID 1 of the new PID namespace), which chroots into that tree. Servers are forked
  through its template (below) and drop to an unprivileged uid before any learner code runs:
  the test's own (the grader gives each test a fresh one), in the sandbox's group, which reads
  the solution.
- "userns" (not root, unprivileged user namespaces allowed): the same tree inside a new user
  namespace; servers drop every capability instead of changing uid (one uid for every test).
- "plain": no namespaces (a container that refuses them, as Gradescope's may). The zygote
  becomes a child subreaper (orphans stay its descendants) and, as root, checks that the
  sandbox's private uids can reach what they need; servers drop to their test's uid (or,
  without root, keep the grader's), with rlimits, a minimal environment and umask 077. Where
  the kernel offers Landlock, the zygote confines itself (and everything it forks) to reading
  the system folders, the server code and the solution, and to its own work, data and TMPDIR
  folders (plus no TCP, no abstract Unix socket and no signal outside, by ABI version); each
  server adds a layer of its own without /proc.

Nothing of the sandbox can serve a test as memory of another (grader/README.md, *No memory
between tests*): the working folder (HOME, the current folder) and the TMPDIR are empty and
read-only (a read-only bind in the namespaces, root's folders in plain mode); the data area
lets the servers through to their own test's folder but not list or write it (in the
namespaces each test's folder is a tmpfs of its own, mounted for the test by the zygote's
mounter and unmounted when it ends: `Volumes`); with private
uids, `release` ends every process of a test's uid when the test ends (`kill(-1)` as that uid,
repeated until none is left: daemons in new sessions too). In every mode the seccomp filter
also refuses every socket (socketpair only as AF_UNIX) and System V and POSIX message-queue
IPC, which outlive their processes or reach every process of the sandbox; the server shows its
setup page over the private rpc channel, without a socket. `sweep` ends every process of the
sandbox but the zygote and its template: every server's relay in the namespaces (its
namespace ends with it), every uid it handed out in plain mode, or, without a private uid,
every descendant of the zygote.

Nor can anything count tests (grader/README.md, *No counter between tests*): once ready, the
zygote forks a template (`start_template`) that only ever forks, when asked, a server's relay
(in the namespaces, PID 1 of a fresh PID namespace), which forks the server and reports its
exit code. Every server is forked from that same unchanging process: the same pid (2), parent
(1), heap and parent's counters whatever ran before it; what the zygote accumulates (its
children, its caches) no server inherits.

Then the zygote hardens itself, so that everything it forks inherits it, exactly as
`config["plan"]` (grader.hosts.sandbox.plan, computed once per mode) says: its own empty session
keyring (KEYCTL_JOIN_SESSION_KEYRING), an empty capability bounding set and no ambient
capabilities, no_new_privs, and a seccomp filter (x86_64 or aarch64, checked; any other ABI,
x32 included, is killed) that denies the system calls the plan lists, but for `unshare` and
`setns` where its template gives each server a PID namespace: every child it or the template
forks installs the plan's full filter first. If any of it fails, the zygote reports the
problem instead of "ready", and the grader does not use this mode.

The zygote imports the server modules once, runs no learner code itself, has an
unprivileged child compile the submission once for all its servers (`compile_solution`: the
zygote keeps the bytecode unread, each server loads it as its test's uid), and answers small
JSON commands on a SOCK_SEQPACKET socket: `spawn` (the template forks a server on the pipes
that come with the message: its command line is the submission's common one, this test's
inputs reach only its options, see `op_spawn`), `kill`, `status`, `release` (a test is over),
`sweep` and `quit`. When the zygote dies, so does its template, and the kernel kills
everything left in its PID namespace.

A sandbox may be built ahead of its submission (`config["ahead"]`: a warm helper's,
grader/hosts/ahead.py): then its solution folder is empty while it is built, and the zygote
holds, compiles and starts its template only on `submission`, once the grader wrote the
learner's files in that folder (through its path outside the sandbox; inside, it is bound
read-only as always). Until then no server can be spawned.

Why one module over 600 lines: it runs as a script inside the sandbox and must import nothing
of the grader (a test holds that), so what it needs (seccomp, landlock, capabilities, the
cgroups it joins, the command loop) cannot come from shared modules; its sections follow the
order in which the sandbox is built.

Deliberate simplifications: cgroup v1 only (pids, memory, cpu, made by the grader); the memory
cap per process is RLIMIT_AS; the tmpfs sizes cap the disk the learner can fill (the sandbox's
tree and each test's folder; the memory cgroup caps them all together).
"""

import ctypes
import json
import os
import resource
import signal
import socket
import struct
import sys
import time

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT = 1, 2, 4, 32
MS_BIND, MS_REC, MS_PRIVATE, MS_NOEXEC = 4096, 16384, 1 << 18, 8
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
PR_CAPBSET_DROP, PR_SET_SECCOMP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 22, 47, 4
PR_SET_CHILD_SUBREAPER = 36
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ERRNO, SECCOMP_RET_ALLOW = 0x80000000, 0x50000, 0x7FFF0000
BPF_LD_W_ABS, BPF_JEQ, BPF_JGE, BPF_JSET, BPF_RET = 0x20, 0x15, 0x35, 0x45, 0x06
EPERM, ENOSYS, EINVAL = 1, 38, 22
KEYCTL_JOIN_SESSION_KEYRING = 1
X32_BIT = 0x40000000
CLONE_NAMESPACES = 0x7E020000  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
CLONE_PIDFD = 0x1000  # a pidfd: its inode number is the machine's count of processes
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
SYSCALLS = {  # from asm/unistd_64.h (x86_64) and asm-generic/unistd.h (aarch64)
    "x86_64": {"keyctl": 250, "add_key": 248, "request_key": 249, "io_uring_setup": 425,
               "io_uring_enter": 426, "io_uring_register": 427, "userfaultfd": 323,
               "perf_event_open": 298, "bpf": 321, "ptrace": 101, "process_vm_readv": 310,
               "process_vm_writev": 311, "pidfd_getfd": 438, "mount": 165, "umount2": 166,
               "pivot_root": 155, "unshare": 272, "setns": 308, "open_tree": 428,
               "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
               "fspick": 433, "mount_setattr": 442, "chroot": 161, "kexec_load": 246,
               "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
               "delete_module": 176, "acct": 163, "swapon": 167, "swapoff": 168,
               "reboot": 169, "quotactl": 179, "name_to_handle_at": 303,
               "open_by_handle_at": 304, "fanotify_init": 300, "personality": 135,
               "syslog": 103, "vhangup": 153, "clone3": 435, "clone": 56, "statx": 332,
               "pidfd_open": 434, "statmount": 457, "listmount": 458},
    "aarch64": {"keyctl": 219, "add_key": 217, "request_key": 218, "io_uring_setup": 425,
                "io_uring_enter": 426, "io_uring_register": 427, "userfaultfd": 282,
                "perf_event_open": 241, "bpf": 280, "ptrace": 117, "process_vm_readv": 270,
                "process_vm_writev": 271, "pidfd_getfd": 438, "mount": 40, "umount2": 39,
                "pivot_root": 41, "unshare": 97, "setns": 268, "open_tree": 428,
                "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
                "fspick": 433, "mount_setattr": 442, "chroot": 51, "kexec_load": 104,
                "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
                "delete_module": 106, "acct": 89, "swapon": 224, "swapoff": 225,
                "reboot": 142, "quotactl": 60, "name_to_handle_at": 264,
                "open_by_handle_at": 265, "fanotify_init": 262, "personality": 92,
                "syslog": 116, "vhangup": 58, "clone3": 435, "clone": 220, "statx": 291,
                "pidfd_open": 434, "statmount": 457, "listmount": 458},
}
# plain mode only (no network namespace, no IPC namespace): sockets and System V / POSIX IPC
for _table in SYSCALLS.values():  # the same on both (tests refuse them, as old Docker did)
    _table.update({"landlock_create_ruleset": 444, "landlock_add_rule": 445,
                   "landlock_restrict_self": 446})
SYSCALLS["x86_64"].update({
    "socket": 41, "socketpair": 53, "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67,
    "semget": 64, "semop": 65, "semctl": 66, "semtimedop": 220, "msgget": 68, "msgsnd": 69,
    "msgrcv": 70, "msgctl": 71, "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242,
    "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245,
    "pipe": 22, "pipe2": 293, "memfd_create": 319, "memfd_secret": 447})
SYSCALLS["aarch64"].update({
    "socket": 198, "socketpair": 199, "shmget": 194, "shmat": 196, "shmctl": 195, "shmdt": 197,
    "semget": 190, "semop": 193, "semctl": 191, "semtimedop": 192, "msgget": 186,
    "msgsnd": 189, "msgrcv": 188, "msgctl": 187, "mq_open": 180, "mq_unlink": 181,
    "mq_timedsend": 182, "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185,
    "pipe": 59, "pipe2": 59, "memfd_create": 279, "memfd_secret": 447})  # no pipe: pipe2's
CLONE_RULE = "clone (namespace or pidfd flags)"
SOCKETPAIR_RULE = "socketpair (except AF_UNIX)"
AF_UNIX = 1
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
INNER = "/sandbox"
PRIVATE_PROC = "/sandbox/.zygote/proc"  # the root mode's /proc of its PID namespace (root only)
WARM_UP = "warm_up_solution.py"  # in the code copy (grader.hosts.sandbox.compiled_code writes it)
# What solutions commonly import beyond the server's own modules: the lesson's helpers and the
# standard modules its notebooks use. Imported once here (trusted code, before any learner's),
# so a forked server does not import them again: dataclasses alone was half of a server's start.
PRELOAD = ("sealkit", "nube_copias", "dataclasses", "secrets", "hmac", "hashlib", "base64",
           "datetime", "pathlib", "unicodedata", "urllib.parse", "uuid", "typing", "enum")
DEVICES = ("null", "zero", "random", "urandom")

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source, target, fstype, flags, data=None):
    _check(_libc.mount(source and source.encode(), target.encode(),
                       fstype and fstype.encode(), ctypes.c_ulong(flags),
                       data and data.encode()), f"mount {target}")


def prctl(option, value):
    if not hasattr(_libc, "prctl"):  # not Linux: plain mode goes without
        return
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl {option}")


def _prctl_raw(option, *args):
    values = [ctypes.c_ulong(a) if isinstance(a, int) else a for a in args]
    values += [ctypes.c_ulong(0)] * (4 - len(values))
    return _libc.prctl(option, *values)


# -- hardening (the zygote, once; everything it forks inherits it) -----------------------------
def join_fresh_session_keyring():
    """An empty, anonymous session keyring: no key of the grader's session is reachable."""
    _libc.syscall.restype = ctypes.c_long
    number = SYSCALLS[os.uname().machine]["keyctl"] if os.uname().machine in SYSCALLS \
        else None
    if number is None:
        raise OSError(EINVAL, "keyctl: unknown architecture")
    if _libc.syscall(ctypes.c_long(number), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING),
                     None) < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"keyctl(JOIN_SESSION_KEYRING): {os.strerror(err)}")


def drop_bounding_set():
    """Empty the capability bounding set and the ambient set (nothing can be regained)."""
    for cap in range(64):
        if _prctl_raw(PR_CAPBSET_DROP, cap) != 0:
            err = ctypes.get_errno()
            if err == EINVAL:  # past the last capability this kernel knows
                break
            raise OSError(err, f"PR_CAPBSET_DROP {cap}: {os.strerror(err)}")
    if _prctl_raw(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL) != 0 \
            and ctypes.get_errno() != EINVAL:
        err = ctypes.get_errno()
        raise OSError(err, f"PR_CAP_AMBIENT: {os.strerror(err)}")


def seccomp_program(denied, machine):
    """The BPF program: right architecture or killed; x32 killed; each denied call EPERM
    (clone3 and statx ENOSYS, so that glibc falls back to clone and fstatat); clone with
    namespace or pidfd flags EPERM;
    socketpair of any family but AF_UNIX EPERM (a connected pair reaches nobody else)."""
    numbers = SYSCALLS[machine]
    program = [(BPF_LD_W_ABS, 0, 0, 4), (BPF_JEQ, 1, 0, AUDIT_ARCH[machine]),
               (BPF_RET, 0, 0, SECCOMP_RET_KILL_PROCESS), (BPF_LD_W_ABS, 0, 0, 0)]
    if machine == "x86_64":
        program += [(BPF_JGE, 0, 1, X32_BIT), (BPF_RET, 0, 0, SECCOMP_RET_KILL_PROCESS)]
    for name in denied:
        if name in (CLONE_RULE, SOCKETPAIR_RULE):
            continue
        code = ENOSYS if name in ("clone3", "statx") else EPERM
        program += [(BPF_JEQ, 0, 1, numbers[name]), (BPF_RET, 0, 0, SECCOMP_RET_ERRNO | code)]
    # rules on the first argument (its low 32 bits, offset 16); each ends in its own verdict,
    # so that the next rule starts again with the call's number in the accumulator
    if CLONE_RULE in denied:
        program += [(BPF_JEQ, 0, 4, numbers["clone"]), (BPF_LD_W_ABS, 0, 0, 16),
                    (BPF_JSET, 0, 1, CLONE_NAMESPACES | CLONE_PIDFD),
                    (BPF_RET, 0, 0, SECCOMP_RET_ERRNO | EPERM),
                    (BPF_RET, 0, 0, SECCOMP_RET_ALLOW)]
    if SOCKETPAIR_RULE in denied:
        program += [(BPF_JEQ, 0, 4, numbers["socketpair"]), (BPF_LD_W_ABS, 0, 0, 16),
                    (BPF_JEQ, 1, 0, AF_UNIX), (BPF_RET, 0, 0, SECCOMP_RET_ERRNO | EPERM),
                    (BPF_RET, 0, 0, SECCOMP_RET_ALLOW)]
    return program + [(BPF_RET, 0, 0, SECCOMP_RET_ALLOW)]


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def seccomp_filter(denied):
    """The BPF program for `denied`, ready for `install_seccomp` (built once, installed in
    every child: see `harden`)."""
    machine = os.uname().machine
    if machine not in SYSCALLS:
        raise OSError(EINVAL, f"seccomp: no syscall table for {machine}")
    program = seccomp_program(denied, machine)
    filters = (_SockFilter * len(program))(*[_SockFilter(*op) for op in program])
    return _SockFprog(len(program), filters), filters  # the array stays alive with it


def install_seccomp(prepared):
    fprog = prepared[0]
    if _libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog),
                   ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {os.strerror(err)}")


# What the zygote (and its template) keep of the plan's denied calls when every server gets a
# fresh PID namespace of its own (`Zygote.start_template`): every child installs the full
# filter first (`Zygote._fork`).
PID_NAMESPACE_CALLS = ("unshare", "setns")
# What the zygote keeps where the plan denies its servers pipes and socket pairs (the
# namespaces, grader.hosts.sandbox.SECCOMP_NUMBERED): its own control pipes and sockets.
ZYGOTE_NUMBERED_CALLS = ("pipe", "pipe2", "socketpair")


def harden(plan, keep=()):
    """Apply the plan's kernel-state protections to this process (and all it will fork);
    `keep`: denied calls this process still needs (its children deny them: `Zygote._fork`).
    Returns the plan's full seccomp filter (None without one), for the children."""
    if plan.get("fresh_session_keyring"):
        join_fresh_session_keyring()
    if plan.get("capability_bounding_set_empty"):
        drop_bounding_set()
    if plan.get("no_new_privs"):
        prctl(PR_SET_NO_NEW_PRIVS, 1)
    if not plan.get("seccomp_denied"):
        return None
    full = seccomp_filter(plan["seccomp_denied"])
    install_seccomp(seccomp_filter([n for n in plan["seccomp_denied"] if n not in keep])
                    if keep else full)
    return full


# -- Landlock (plain mode, where the kernel offers it): what the sandbox may touch on disk -------
LANDLOCK_CREATE_RULESET, LANDLOCK_ADD_RULE, LANDLOCK_RESTRICT_SELF = 444, 445, 446  # both ABIs
LANDLOCK_CREATE_RULESET_VERSION, LANDLOCK_RULE_PATH_BENEATH = 1, 1
LL_EXECUTE, LL_WRITE_FILE, LL_READ_FILE, LL_READ_DIR, LL_TRUNCATE = 1, 2, 4, 8, 1 << 14
LL_FS_RIGHTS = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1}
LL_NET_TCP = 3            # BIND_TCP | CONNECT_TCP (ABI 4): no rule grants either
LL_SCOPES = 3             # ABSTRACT_UNIX_SOCKET | SIGNAL (ABI 6): nothing outside the domain
LANDLOCK_READ = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/proc")
LANDLOCK_DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi():
    """The Landlock ABI version this kernel offers (0: none, or refused by a seccomp profile)."""
    if not hasattr(_libc, "syscall") or os.uname().machine not in SYSCALLS:
        return 0
    _libc.syscall.restype = ctypes.c_long
    version = _libc.syscall(ctypes.c_long(LANDLOCK_CREATE_RULESET), None, ctypes.c_long(0),
                            ctypes.c_long(LANDLOCK_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def landlock_features(abi):
    """What Landlock confines at this ABI version (as grader.hosts.sandbox.plan lists it)."""
    if abi < 1:
        return None
    return ["filesystem"] + (["tcp"] if abi >= 4 else []) + \
        (["abstract_unix_sockets", "signals"] if abi >= 6 else [])


def install_landlock(abi, read_only, read_write, devices):
    """Confine this process (and all it forks) to reading `read_only` and the `devices`, and
    reading and writing below `read_write`; nothing else on disk. From ABI 4 no TCP bind or
    connect either, from ABI 6 no abstract Unix socket and no signal outside the sandbox."""
    fs = LL_FS_RIGHTS.get(abi, (1 << 16) - 1)  # ABI 5 and later: IOCTL_DEV too
    attr = _RulesetAttr(fs, LL_NET_TCP if abi >= 4 else 0, LL_SCOPES if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = _libc.syscall(ctypes.c_long(LANDLOCK_CREATE_RULESET), ctypes.byref(attr),
                            ctypes.c_long(size), ctypes.c_long(0))
    if ruleset < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock_create_ruleset: {os.strerror(err)}")
    file_rights = LL_READ_FILE | LL_WRITE_FILE | (LL_TRUNCATE if abi >= 3 else 0)
    try:
        for paths, rights in ((read_only, LL_EXECUTE | LL_READ_FILE | LL_READ_DIR),
                              (read_write, fs), (devices, file_rights)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue  # absent here (no /lib32, say): nothing to allow
                try:
                    allowed = rights if os.path.isdir(path) else \
                        rights & (LL_EXECUTE | file_rights)
                    rule = _PathBeneath(allowed, fd)
                    if _libc.syscall(ctypes.c_long(LANDLOCK_ADD_RULE), ctypes.c_long(ruleset),
                                     ctypes.c_long(LANDLOCK_RULE_PATH_BENEATH),
                                     ctypes.byref(rule), ctypes.c_long(0)) != 0:
                        err = ctypes.get_errno()
                        raise OSError(err, f"landlock_add_rule {path}: {os.strerror(err)}")
                finally:
                    os.close(fd)
        if _libc.syscall(ctypes.c_long(LANDLOCK_RESTRICT_SELF), ctypes.c_long(ruleset),
                         ctypes.c_long(0)) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"landlock_restrict_self: {os.strerror(err)}")
    finally:
        os.close(ruleset)


def unshare_pids():
    """This process's next child is PID 1 of a new PID namespace (`Zygote._fork`)."""
    _check(_libc.unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")


def enter_pids(fd):
    """This process's next children are in the PID namespace of `fd` again."""
    _check(_libc.setns(fd, CLONE_NEWPID), "setns(CLONE_NEWPID)")


def drop_capabilities():
    """capset(2) with empty sets: what a userns server does instead of changing uid."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)   # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()
    _check(_libc.capset(header, data), "capset")


# -- building the sandbox (runs as the launcher, before the fork) ------------------------------
def build(cfg, fresh):
    """Enter new namespaces and lay out the new root at cfg["root"]; returns what worked.
    `fresh` (FreshTimes) holds what it made, before anything is bound read-only over it."""
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
    if cfg["mode"] == "userns":
        flags |= CLONE_NEWUSER
    _check(_libc.unshare(flags), "unshare")
    if cfg["mode"] == "userns":
        uid, gid = cfg["host_uid"], cfg["host_gid"]
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                           ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as handle:
                handle.write(text)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    root = cfg["root"]
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV,
          f"size={cfg['disk_mib']}m,nr_inodes=20000,mode=0755")
    for name in ("usr", "etc", "dev", "tmp", "sandbox/code", "sandbox/solution",
                 "sandbox/work", "sandbox/data"):
        os.makedirs(os.path.join(root, name), exist_ok=True)
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = "/" + name
        if os.path.islink(host):
            os.symlink(os.readlink(host), os.path.join(root, name))
        elif os.path.isdir(host):
            os.mkdir(os.path.join(root, name))
            bind(host, os.path.join(root, name), cfg)
    bind("/usr", os.path.join(root, "usr"), cfg)
    bind(cfg["code"], os.path.join(root, "sandbox/code"), cfg)
    bind(cfg["solution"], os.path.join(root, "sandbox/solution"), cfg)
    files = [("/etc/ld.so.cache", "etc/ld.so.cache")]
    files += [(f"/dev/{name}", f"dev/{name}") for name in DEVICES]
    for host, inner in files:
        if os.path.exists(host):
            open(os.path.join(root, inner), "w").close()
            mount(host, os.path.join(root, inner), None, MS_BIND)
    uid = cfg["uid"] if cfg["mode"] == "root" else cfg["host_uid"]
    for name, text in (("etc/passwd", f"root:x:0:0::/:/bin/false\n"
                                      f"alumno:x:{uid}:{uid}::{INNER}/work:/bin/false\n"),
                       ("etc/group", f"root:x:0:\nalumno:x:{uid}:\n"),
                       ("etc/nsswitch.conf", "passwd: files\ngroup: files\n")):
        with open(os.path.join(root, name), "w") as handle:
            handle.write(text)
    # Nothing here is a place to keep anything between tests: the working folder (HOME) and
    # /tmp are empty and read-only, and the data area lets the learner's uids through to the
    # folder of their own test (0700, made by the grader) but not list or write it.
    made = ["etc/passwd", "etc/group", "etc/nsswitch.conf", "etc", "dev", "tmp",
            "sandbox/work", "sandbox/data", "sandbox", "bin", "sbin", "lib", "lib32",
            "lib64", "libx32", ""]
    given_times(root, made, cfg["given_times_ns"])
    fresh.hold(root, made)
    for name in ("sandbox/work", "tmp"):
        folder = os.path.join(root, name)
        os.chmod(folder, 0o755)
        bind(folder, folder, {**cfg, "mode": "root"})
    os.chmod(os.path.join(root, "sandbox/data"), 0o711)
    loopback_up()


def given_times(root, names, times_ns):
    """The same access and modification times (the grader's GIVEN_TIMES_NS) on what the sandbox
    made below `root` (a link's own, never its target's; a bind's host folder is not in
    `names`): a time would tell a server how long the sandbox has run."""
    for name in names:
        path = os.path.join(root, name)
        if name and os.path.ismount(path):
            continue  # a host folder bound here: its times are the host's own, never touched
        try:
            os.utime(path, ns=tuple(times_ns), follow_symlinks=False)
        except FileNotFoundError:
            pass


class FreshTimes:
    """A file's change time (ctime) is set by the kernel to the clock whenever anything of the
    file changes, and no process can set it: against the clock, the ctime of what the sandbox
    made when it started would tell a server how long the grading has run. So the sandbox
    holds what it made and what it bound in (the server code, the solution, the working, temp
    and data folders: descriptors opened before anything read-only was bound over them, on the
    file systems where they can still be changed) and gives it its times again right before
    each server starts (`refresh`): every ctime a server can read is then its own start's.
    Birth times cannot be given again: statx, the only call that reads them, is refused
    (ENOSYS, so that callers fall back to fstatat; grader.hosts.sandbox.SECCOMP_DENIED).

    Deliberate simplifications: at most MAX_FOLDERS folders are held (the course's code and a
    submission have a few dozen); past that, what is left keeps the ctime it has."""

    MAX_FOLDERS = 256

    def __init__(self, times_ns):
        self.times = tuple(times_ns)
        self.folders = {}   # path -> a descriptor of it (its own times: os.utime on it)
        self.entries = []   # (a folder's descriptor, name): files and links in it

    def _folder(self, path):
        fd = self.folders.get(path)
        if fd is None and len(self.folders) < self.MAX_FOLDERS:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            self.folders[path] = fd
        return fd

    def hold(self, root, names):
        """`names` below `root` (as `given_times` takes them); a folder bound here from the
        host is left out (its times are the host's own, never touched)."""
        for name in names:
            path = os.path.join(root, name) if name else root
            try:
                if name and os.path.ismount(path):
                    continue
                if os.path.isdir(path) and not os.path.islink(path):
                    self._folder(path)
                else:
                    folder = self._folder(os.path.dirname(path))
                    if folder is not None:
                        self.entries.append((folder, os.path.basename(path)))
            except FileNotFoundError:
                pass

    def hold_tree(self, top):
        """`top` and everything below it (links not followed)."""
        for parent, dirs, files in os.walk(top):
            folder = self._folder(parent)
            if folder is None:
                return
            links = [name for name in dirs if os.path.islink(os.path.join(parent, name))]
            self.entries += [(folder, name) for name in files + links]

    def hold_below(self, top):
        """What is below `top`, a folder held already, reached through its descriptor (the
        namespaces' zygote has chrooted away from its path since): a sandbox built ahead holds
        its solution's files once the grader wrote them in (`Zygote.op_submission`)."""
        fd = self.folders.get(top)
        if fd is not None:
            self._hold_at(top, fd)

    def _hold_at(self, path, fd):
        with os.scandir(fd) as scan:
            names = sorted((entry.name, entry.is_dir(follow_symlinks=False)) for entry in scan)
        for name, folder in names:
            inner = os.path.join(path, name)
            if not folder:  # a file or a link (never followed)
                self.entries.append((fd, name))
            elif inner not in self.folders and len(self.folders) < self.MAX_FOLDERS:
                below = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW |
                                os.O_CLOEXEC, dir_fd=fd)
                self.folders[inner] = below
                self._hold_at(inner, below)

    def refresh(self):
        for fd in self.folders.values():
            try:
                os.utime(fd, ns=self.times)
            except OSError:
                pass
        for folder, name in self.entries:
            try:
                os.utime(name, ns=self.times, dir_fd=folder, follow_symlinks=False)
            except OSError:
                pass


class Volumes:
    """Each test's folder is a file system of its own (root and userns modes): a tmpfs mounted
    on /sandbox/data/NAME for the test, unmounted when it ends. A file system numbers the
    inodes it makes in order and never reuses them, so in one shared data area a test's folder
    and notes would say how many were made for the tests before it; on a fresh one every test
    sees the same numbers for the same layout (and the kernel gives the unmounted one's device
    number to the next).

    The zygote cannot mount once it is hardened, so before that it forks a mounter: a process
    that keeps only mount and umount2 of the calls the plan denies (and its capabilities, to
    mount), runs nothing of the learner's, and answers one request at a time from the zygote
    over a private socket: ["mount", NAME, UID, GID, MODE] or ["umount", NAME]. It checks
    every name (one path component of letters, digits, "_" and "-") and number itself.

    The mounter also makes each server's standard streams (["streams"]): three FIFOs on a
    tmpfs of their own that is never attached anywhere (fsopen, fsmount: nobody else can reach
    it), each opened at both ends and unlinked at once. A pipe's inode number is the machine's
    next (the kernel numbers pipes, socket pairs and memory files in machine-wide sequences);
    these are the same in every server (the servers cannot make pipes of their own:
    grader.hosts.sandbox.SECCOMP_NUMBERED).

    Deliberate simplifications: each volume gets the sandbox's whole disk size (the memory
    cgroup caps what tmpfs pages all of them can hold); a volume still held by a process of
    the test when it ends is detached (MNT_DETACH) and freed with that process."""

    NAME = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-")

    def __init__(self, cfg, plan):
        self.options = f"size={cfg['disk_mib']}m,nr_inodes=20000"
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                ours.close()
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                keep = theirs.fileno()  # and nothing else of the zygote's (its control socket)
                os.closerange(3, keep)
                os.closerange(keep + 1, 1 << 16)
                harden(plan, keep=MOUNTER_CALLS)
                self._serve(theirs)
                code = 0
            finally:
                os._exit(code)
        theirs.close()
        self.pid, self.sock = pid, ours

    @classmethod
    def path(cls, name):
        if not isinstance(name, str) or not 0 < len(name) <= 64 or not set(name) <= cls.NAME:
            raise ValueError(f"not a volume's name: {name!r}")
        return f"{INNER}/data/{name}"

    def _serve(self, sock):
        while True:
            message = sock.recv(4096)
            if not message:
                return
            try:
                request = json.loads(message)
                if request[0] == "mount":
                    _, name, uid, gid, mode = request
                    if not all(isinstance(n, int) and 0 <= n < 0xFFFFFFFF for n in (uid, gid)) \
                            or mode not in (0o700, 0o755):
                        raise ValueError("not a volume's owner or mode")
                    path = self.path(name)
                    os.mkdir(path, 0o700)
                    mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV,
                          f"{self.options},mode={mode:o},uid={uid},gid={gid}")
                elif request[0] == "streams":
                    ends = self._streams()
                    try:
                        socket.send_fds(sock, [b'{"ok": true}'], ends)
                    finally:
                        for fd in ends:
                            os.close(fd)
                    continue
                elif request[0] == "umount":
                    path = self.path(request[1])
                    if os.path.ismount(path):
                        _check(_libc.umount2(path.encode(), MNT_DETACH), f"umount {path}")
                    if os.path.isdir(path):
                        os.rmdir(path)
                else:
                    raise ValueError("not a volume request")
                reply = {"ok": True}
            except (OSError, ValueError, TypeError, IndexError) as exc:
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            sock.send(json.dumps(reply).encode())

    @staticmethod
    def _streams():
        """A server's stdin, stdout and stderr: [its stdin, the grader's end of it, the
        grader's end of its stdout, its stdout, the same for stderr], FIFOs of a fresh tmpfs
        that no path reaches."""
        context = _syscall("fsopen", b"tmpfs", FSOPEN_CLOEXEC)
        try:
            for key, value in ((b"size", b"64k"), (b"nr_inodes", b"8"), (b"mode", b"0700")):
                _syscall("fsconfig", context, FSCONFIG_SET_STRING, key, value, 0)
            _syscall("fsconfig", context, FSCONFIG_CMD_CREATE, None, None, 0)
            root = _syscall("fsmount", context, FSMOUNT_CLOEXEC, MOUNT_ATTR_SAFE)
        finally:
            os.close(context)
        ends = []
        try:
            for name in ("in", "out", "err"):
                os.mkfifo(name, 0o600, dir_fd=root)
                read = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=root)
                ends.append(read)
                ends.append(os.open(name, os.O_WRONLY | os.O_CLOEXEC, dir_fd=root))
                os.unlink(name, dir_fd=root)
                os.set_blocking(read, True)
        except OSError:
            for fd in ends:
                os.close(fd)
            raise
        finally:
            os.close(root)
        return ends

    def ask(self, *request, fds=False):
        """The mounter's answer; with `fds`, the descriptors that came with it."""
        self.sock.send(json.dumps(list(request)).encode())
        if not select_readable(self.sock.fileno(), VOLUME_SECONDS):
            raise OSError(EINVAL, "the mounter did not answer")
        message, received, _, _ = socket.recv_fds(self.sock, 4096, 8)
        reply = json.loads(message or b"{}")
        if not reply.get("ok") or len(received) != (6 if fds else 0):
            for fd in received:
                os.close(fd)
            raise OSError(EINVAL, reply.get("error") or "the mounter is gone")
        return received

    def streams(self):
        """(the server's stdin, stdout, stderr), (the grader's ends: stdin, stdout, stderr)."""
        ends = self.ask("streams", fds=True)
        return (ends[0], ends[3], ends[5]), (ends[1], ends[2], ends[4])


FDS = "\0fds"  # a reply's descriptors, sent with it (never part of its JSON)
VOLUME_SECONDS = 5.0
MNT_DETACH = 2
FSOPEN_CLOEXEC, FSMOUNT_CLOEXEC, FSCONFIG_SET_STRING, FSCONFIG_CMD_CREATE = 1, 1, 1, 6
MOUNT_ATTR_SAFE = 0x2 | 0x4 | 0x8  # nosuid, nodev, noexec
# What the mounter keeps of the plan's denied calls (the zygote and every server deny them).
MOUNTER_CALLS = ("mount", "umount2", "fsopen", "fsconfig", "fsmount")


def _syscall(name, *args):
    number = SYSCALLS[os.uname().machine][name]
    values = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    result = _libc.syscall(ctypes.c_long(number), *values)
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{name}: {os.strerror(err)}")
    return result


def bind(source, target, cfg):
    mount(source, target, None, MS_BIND | MS_REC)
    try:
        mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    except OSError:
        if cfg["mode"] == "root":  # in a user namespace locked flags may refuse; not as root
            raise


def loopback_up():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        import fcntl
        flags = struct.unpack("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS,
                                                  struct.pack("16sH14x", b"lo", 0))[:18])[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


# -- the zygote ---------------------------------------------------------------------------------
class Zygote:
    def __init__(self, cfg, ctl, pids=None, server_filter=None, landlock=None, fresh=None,
                 volumes=None):
        """`pids`: a descriptor of the zygote's own PID namespace (root and userns modes): the
        template forks each server's relay into a fresh one, then comes back to it.
        `server_filter`: the plan's full seccomp filter, which every child installs first (the
        zygote's own lacks PID_NAMESPACE_CALLS); None when the zygote's is already full.
        `landlock`: plain mode's Landlock rules for every child, /proc left out (the arguments
        of `install_landlock`), or None. `fresh`: what it gives its times again before each
        server (FreshTimes), or None. `volumes`: the mounter of the tests' folders (Volumes),
        or None (plain mode: the tests' folders are made in one data area)."""
        self.cfg, self.ctl, self.fresh, self.volumes = cfg, ctl, fresh, volumes
        self.pids, self.server_filter, self.landlock = pids, server_filter, landlock
        self.template = None  # (its pid, requests socket, born pipe): `start_template`
        self.ready = None     # the pid of the relay ready for the next server
        self.status_fds = {}  # a server's pid -> where its relay writes its exit code
        self.children = {}   # pid -> exit status (None while running)
        self.isolated = cfg["mode"] in ("root", "userns")
        self.uids = set()    # the uids servers ran as (a private uid per test: `spawn`)
        self.compiled = {}   # the submission's bytecode by path (`compile_solution`), unread

    def serve(self):
        while True:
            try:
                msg, fds, _, _ = socket.recv_fds(self.ctl, 65536, 8)
            except OSError:
                break
            if not msg:
                break
            self.reap()
            try:
                request = json.loads(msg)
                reply = getattr(self, "op_" + request["op"])(request, fds)
            except Exception as exc:  # a malformed command is answered, never fatal
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            finally:
                for fd in fds:
                    os.close(fd)
            if reply is None:
                break
            given = reply.pop(FDS, []) if isinstance(reply, dict) else []
            try:
                socket.send_fds(self.ctl, [json.dumps(reply).encode()], given)
            finally:
                for fd in given:
                    os.close(fd)
        self.op_sweep({}, [])

    def reap(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.children:
                self.children[pid] = os.waitstatus_to_exitcode(status)

    # commands
    def op_spawn(self, request, fds):
        """A server: `argv` (the same for every server of the submission) is all it sees of
        its command line; `private` (this test's inputs) reach only the server's options;
        `uid`, with a private uid per test, is the one it runs as. The relay the template forked
        in advance takes it (see `start_template`) and forks the server; the pid answered is the
        relay's, whose process group the server is in. Its standard streams come with the
        request, or (none sent, in the namespaces) are the mounter's FIFOs (`Volumes.streams`),
        whose other ends go back with the answer."""
        uid = self._uid(request.get("uid"))
        theirs = []  # the grader's ends, when the mounter makes the streams
        if not fds and self.volumes is not None:
            fds, theirs = self.volumes.streams()
            fds, theirs = list(fds), list(theirs)
        if len(fds) != 3:
            raise ValueError("a server needs its stdin, stdout and stderr")
        try:
            reply = self._spawn(request, fds, uid)
        except BaseException:
            for fd in theirs:
                os.close(fd)
            raise
        finally:
            if theirs:  # the server's ends (the grader's are closed by `serve`)
                for fd in fds:
                    os.close(fd)
        return {**reply, FDS: theirs} if theirs else reply

    def _spawn(self, request, fds, uid):
        pid = self._ready_relay(TEMPLATE_SECONDS)
        if pid is None:
            raise OSError(EINVAL, "the template has no relay ready")
        self.ready = None  # this request is its: the template forks the next one
        if self.fresh is not None:  # every ctime it can read: its own start's
            self.fresh.refresh()
        status_r, status_w = os.pipe()
        try:
            socket.send_fds(self.template[1], [json.dumps({
                "argv": list(request["argv"]), "private": list(request.get("private", [])),
                "uid": uid}).encode()], [*fds, status_w])
        except BaseException:
            os.close(status_r)
            raise
        finally:
            os.close(status_w)
        self.children[pid] = None
        self.status_fds[pid] = status_r
        return {"pid": pid}

    def start_template(self):
        """Fork the template: a process that, from then on, only ever forks a server's relay,
        says its pid and waits until that relay took a request, then forks the next one (so a
        relay is ready before a server is asked for: one fork on a server's way, as when the
        zygote forked them). It never parses, keeps or counts anything, so every server is
        forked from the same unchanging process: its heap, its parent's CPU time and memory,
        its pids (a fresh PID namespace, where the zygote has `pids`) are the same whatever ran
        before it. What the zygote itself accumulates as tests go by (its children, its
        caches) no server inherits."""
        requests, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        born_r, born_w = os.pipe()
        taken_r, taken_w = os.pipe()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                requests.close()
                self.ctl.close()
                os.close(born_r)
                self._template(theirs, born_w, taken_r, taken_w)
            finally:
                os._exit(70)
        for fd in (theirs.fileno(), born_w, taken_r, taken_w):
            os.close(fd)
        theirs.detach()
        self.template = (pid, requests, born_r)
        self.ready = None  # the relay the template forked for the next server (`_ready_relay`)

    def _ready_relay(self, wait):
        """The pid of the relay waiting for the next request (None if none within `wait`)."""
        if self.template is None:  # built ahead: no server before its submission came
            return None
        if self.ready is None and select_readable(self.template[2], wait):
            data = os.read(self.template[2], 4)
            self.ready = int.from_bytes(data, "little") if len(data) == 4 else None
        return self.ready

    def _template(self, requests, born, taken, taken_w):
        """The template's loop (see `start_template`): nothing in it allocates anything that
        outlives one round. Its children reap themselves (SIGCHLD ignored)."""
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        fresh = self.pids is not None
        os.write(born, (0).to_bytes(4, "little")[:0])  # one dry round first: whatever the
        os.read(taken, 0)                               # first calls leave, every relay finds
        while True:
            if fresh:
                unshare_pids()  # the next child is PID 1 of a new namespace
            pid = os.fork()
            if pid == 0:
                self._relay(requests, taken_w)
            if fresh:
                enter_pids(self.pids)
            os.write(born, pid.to_bytes(4, "little"))
            if os.read(taken, 1) != b"t":  # its relay took a request: the next one is next
                return

    def _relay(self, requests, taken):
        """A server's relay, forked by the template (PID 1 of the server's namespace, where
        there is one): takes its request, forks the server in its own process group and
        session, and writes the server's exit code where the zygote reads it. Nothing of the
        learner's runs here; when it ends, so does everything in its namespace."""
        code = 70
        try:
            try:  # first of all: the template waits for it
                msg, fds, _, _ = socket.recv_fds(requests, 65536, 8)
            finally:
                os.write(taken, b"t")
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            os.setsid()
            request = json.loads(msg)
            stdio, status = fds[:3], fds[3]
            keep = sorted({*stdio, status, 0, 1, 2})
            low = 3
            for fd in keep + [1024]:
                if fd >= low:
                    os.closerange(low, fd)
                    low = fd + 1
            pid = self._fork(stdio, lambda: self._run_server(request["argv"],
                                                             request["private"]),
                             uid=request["uid"], new_session=False)
            for fd in stdio:
                os.close(fd)
            while True:
                try:
                    _, waited = os.waitpid(pid, 0)
                    break
                except InterruptedError:
                    continue
            os.write(status, str(os.waitstatus_to_exitcode(waited)).encode())
            code = 0
        finally:
            os._exit(code)

    def _collect(self, pid, wait=0.0):
        """A server's exit code, when its relay wrote it (or died: then SIGKILL's)."""
        fd = self.status_fds.get(pid)
        if fd is None or not select_readable(fd, wait):
            return
        data = os.read(fd, 16)
        os.close(fd)
        del self.status_fds[pid]
        try:
            self.children[pid] = int(data)
        except ValueError:  # the relay was killed (op_kill, a sweep) before it could say
            self.children[pid] = -signal.SIGKILL

    def _uid(self, wanted):
        """The uid a server runs as: the test's own when the sandbox has private uids (checked
        against the grader's range: never root, never a real account), else the sandbox's."""
        if not self.cfg["plan"]["unprivileged_uid"] or wanted is None:
            return self.cfg["uid"]
        if not isinstance(wanted, int) or not FIRST_PRIVATE_UID <= wanted < 0xFFFFFFFF:
            raise ValueError(f"uid {wanted!r} is not a sandbox's")
        self.uids.add(wanted)
        return wanted

    def op_release(self, request, fds):
        """A test is over: end every process of its private uid (daemons in new sessions
        included), so that nothing it started is there for the next test."""
        uid = request.get("uid")
        if self.cfg["plan"]["unprivileged_uid"] and uid in self.uids:
            return {"ok": kill_uid(uid, SWEEP_SECONDS, self.reap)}
        return {"ok": True}

    def op_volume(self, request, fds):
        """A test's folder, a fresh file system (`Volumes`) owned by its `uid` (the test's
        private one; None: the grader's own, as a folder the grader makes)."""
        if self.volumes is None:
            raise OSError(EINVAL, "this sandbox has no volumes")
        wanted = request.get("uid")
        uid = self.cfg["host_uid"] if wanted is None else self._uid(wanted)
        gid = self.cfg["host_gid"] if wanted is None else uid
        self.volumes.ask("mount", request["name"], uid, gid,
                         0o700 if request.get("private", True) else 0o755)
        return {"ok": True}

    def op_unvolume(self, request, fds):
        """A test is over: its folder's file system goes, with everything in it."""
        if self.volumes is None:
            raise OSError(EINVAL, "this sandbox has no volumes")
        self.volumes.ask("umount", request["name"])
        return {"ok": True}

    def op_kill(self, request, fds):
        pid = request["pid"]
        if pid in self.children and self.children[pid] is None:
            for target in (-pid, pid):  # its process group, then itself
                try:
                    os.kill(target, signal.SIGKILL)
                except OSError:
                    pass
        return {"ok": True}

    def op_status(self, request, fds):
        deadline = time.monotonic() + float(request.get("wait", 0))
        pid = request["pid"]
        while True:
            self.reap()
            self._collect(pid, 0.005 if pid in self.status_fds else 0)
            status = self.children.get(pid)
            if status is not None or time.monotonic() >= deadline:
                return {"exit": status}
            if pid not in self.status_fds:
                time.sleep(0.005)

    def op_sweep(self, request, fds):
        """End every process of the sandbox but the zygote and its template."""
        if self.isolated:  # each server is in its relay's namespace: it ends with the relay
            for pid in [p for p, s in self.children.items() if s is None]:
                for target in (-pid, pid):
                    try:
                        os.kill(target, signal.SIGKILL)
                    except OSError:
                        pass
        elif self.cfg["plan"]["unprivileged_uid"]:
            for uid in sorted(self.uids | {self.cfg["uid"]}):  # daemons in new sessions too
                kill_uid(uid, SWEEP_SECONDS, self.reap)
            self.uids.clear()
        else:  # orphans come back to the zygote (a subreaper); the template and its ready
            ready = self._ready_relay(0) if self.template else None  # relay are spared
            kill_descendants(os.getpid(), SWEEP_SECONDS,
                             spare={self.template[0], ready} if self.template else set())
        deadline = time.monotonic() + 2
        while any(s is None for s in self.children.values()) and time.monotonic() < deadline:
            self.reap()
            for pid in list(self.status_fds):
                self._collect(pid)
            time.sleep(0.002)
        return {"ok": True}

    def op_quit(self, request, fds):
        return None

    def op_submission(self, request, fds):
        """A sandbox built ahead of its submission (`cfg["ahead"]`, grader/hosts/ahead.py):
        its solution folder was empty when it was built, and the grader has now written the
        learner's files in it. They are held for FreshTimes, compiled (`compile_solution`),
        and the template is started, once: no server can be spawned before this."""
        if not self.cfg.get("ahead") or self.template is not None:
            raise ValueError("this sandbox has its submission already")
        if self.fresh is not None:
            self.fresh.hold_below(self.cfg["solution"])
        self.take_submission()
        return {"ok": True}

    def take_submission(self):
        """Compile the submission in the solution folder, then start the template (which
        carries the bytecode to every server)."""
        self.compile_solution(os.path.join(INNER, "solution") if self.isolated
                              else self.cfg["solution"])
        self.start_template()

    def compile_solution(self, folder):
        """Compile the submission's .py files once for all its servers. A child does it as
        the sandbox's uid, with the servers' limits: compiling runs none of the learner's
        code, but its input is the learner's. The zygote keeps the marshal data it sends
        without ever reading it (unmarshalling is not safe on hostile data); each server loads
        it after dropping to its test's uid. Anything amiss (a file that does not compile, too
        much data, a child that takes too long) and the servers compile for themselves."""
        read_end, write_end = os.pipe()
        try:
            pid = self._fork((write_end,), lambda: send_compiled(folder, write_end),
                             uid=self.cfg["uid"], stdio=False)
        finally:
            os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            data = read_capped(pipe, COMPILED_MAX_BYTES, COMPILE_SECONDS)
        ended = self.op_status({"pid": pid, "wait": COMPILE_SECONDS}, [])["exit"]
        if ended is None:
            self.op_kill({"pid": pid}, [])
        if ended == 0 and data is not None:
            self.compiled = parse_compiled(data, folder)

    # forking
    def _fork(self, fds, body, uid, stdio=True, new_session=True):
        """Fork a child that runs `body` as `uid` with the servers' confinement (the plan's
        full seccomp filter first). `new_session`: its own session and process group (a
        server stays in its relay's)."""
        sys.stderr.flush()
        pid = os.fork()
        if pid:
            self.children[pid] = None
            return pid
        code = 70
        try:
            if self.server_filter is not None:
                install_seccomp(self.server_filter)
            if self.landlock is not None:  # no process's /proc, not even its parent's
                install_landlock(*self.landlock)
            if self.ctl.fileno() != -1:
                self.ctl.close()
            # what the zygote counts is not the child's to find (its frames hold `self`)
            self.children, self.uids, self.status_fds = {}, set(), {}
            if new_session:
                os.setsid()
            if stdio:
                for target, fd in zip((0, 1, 2), fds, strict=True):
                    os.dup2(fd, target)
                keep = {0, 1, 2}
            else:
                os.dup2(os.open("/dev/null", os.O_RDWR), 0)
                keep = {0, 1, 2, fds[0]}
            low = 3
            for fd in sorted(keep | {1024}):
                if fd >= low:
                    os.closerange(low, fd)
                    low = fd + 1
            self._confine(uid)
            code = body()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:
            try:
                os.write(2, f"[sandbox] {type(exc).__name__}: {exc}\n".encode())
            except OSError:
                pass
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:
                    pass
            os._exit(code if isinstance(code, int) and 0 <= code < 256 else 1)

    def _confine(self, uid):
        cfg = self.cfg
        private = cfg["plan"]["unprivileged_uid"]
        if private:  # the sandbox's group (gid = its own uid) reads the solution
            gid = cfg["uid"]
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
                raise OSError(EPERM, f"still not uid {uid}")
        elif cfg["mode"] == "userns":
            drop_capabilities()
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        limits = cfg["limits"]
        for name, value in (("RLIMIT_AS", limits["memory_mib"] << 20),
                            ("RLIMIT_FSIZE", limits["file_mib"] << 20),
                            ("RLIMIT_NOFILE", limits["files_open"]),
                            ("RLIMIT_CORE", 0)):
            resource.setrlimit(getattr(resource, name), (value, value))
        cpu = limits["cpu_s"]
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        if "RLIMIT_NPROC" in cfg["plan"]["rlimits"]:  # per uid: only a private uid works
            resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"],) * 2)
        os.chdir(cfg["work"])
        os.umask(0o022 if self.isolated else 0o077)  # plain: what it makes is its own
        os.environ.clear()
        os.environ.update({"PATH": "/usr/bin:/bin", "HOME": cfg["work"], "LANG": "C",
                           "PYTHONIOENCODING": "utf-8", "TMPDIR": cfg["tmp"]})

    def _run_server(self, argv, private):
        import extension
        import main
        extension.COMPILED.update(self.compiled)  # loaded (unmarshalled) here, as the test's uid
        if self.cfg["plan"].get("sockets_denied"):
            socket_free_setup_page()
        sys.argv = ["main.py", *argv]  # what the learner's code can see: the same everywhere
        return main.main([*argv, *private])


def socket_free_setup_page():
    """Plain mode refuses every socket, so the server shows its setup page without one: the
    page object itself, as the in-process self-check does (grading never browses the page; it
    only observes that the URL is sent). A bridge until `serve` offers a socket-free page."""
    from transports import page_http
    page_http.serve_http = lambda page, host="127.0.0.1", log=None, exposure=None: page


COMPILED_MAX_BYTES = 8 << 20  # a submission's bytecode, all files (its sources are far smaller)
COMPILE_SECONDS = 5.0


def send_compiled(folder, fd):
    """The compile child: every .py file of `folder` that compiles, as frames of (length,
    name, SHA-256 of its source, length, marshal data) on `fd`; a file that does not compile
    is left out."""
    import hashlib
    import marshal
    with os.fdopen(fd, "wb") as out:
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as handle:
                    source = handle.read()
                data = marshal.dumps(compile(source, path, "exec", dont_inherit=True))
            except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError,
                    OSError):
                continue  # its server compiles it again and reports the problem
            encoded = name.encode()
            out.write(struct.pack("<I", len(encoded)) + encoded +
                      hashlib.sha256(source).digest() + struct.pack("<I", len(data)) + data)
    return 0


TEMPLATE_SECONDS = 10.0  # the most the template may take to fork a server's relay


def select_readable(fd, seconds):
    import select
    return bool(select.select([fd], [], [], seconds)[0])


def read_capped(pipe, limit, seconds):
    """Everything `pipe` gives before EOF, or None past `limit` bytes or `seconds`."""
    import select
    deadline, data = time.monotonic() + seconds, bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([pipe], [], [], left)[0]:
            return None
        chunk = pipe.read1(65536)
        if not chunk:
            return bytes(data)
        data += chunk
        if len(data) > limit:
            return None


def parse_compiled(data, folder):
    """`send_compiled`'s frames -> {path: (digest, marshal data)}; {} if they are malformed
    or name anything but a .py file directly in `folder` (each at most once)."""
    found, at = {}, 0
    try:
        while at < len(data):
            (size,), at = struct.unpack_from("<I", data, at), at + 4
            name, at = data[at:at + size].decode(), at + size
            digest, at = data[at:at + 32], at + 32
            (size,), at = struct.unpack_from("<I", data, at), at + 4
            code, at = data[at:at + size], at + size
            if at > len(data) or "/" in name or "\0" in name or not name.endswith(".py"):
                return {}
            path = os.path.normpath(os.path.join(folder, name))
            if path in found:
                return {}
            found[path] = (digest, code)
    except (struct.error, UnicodeDecodeError):
        return {}
    return found


def unreachable(cfg):
    """Plain mode: can the sandbox's uid reach its folders (every folder above them must let
    others through)? None, or what it cannot reach."""
    wanted = [(os.path.join(cfg["code_inner"], "main.py"), os.R_OK),
              (cfg["solution"], os.R_OK | os.X_OK), (cfg["data"], os.X_OK)] + \
        [(cfg[name], os.R_OK | os.X_OK) for name in ("work", "tmp")]
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            uid = cfg["uid"]  # it owns nothing: a test's uid has the same rights (its group)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            if os.getresuid() != (uid, uid, uid):
                os._exit(0)
            missing = [path for path, mode in wanted if not os.access(path, mode)]
            os.write(write_end, "\n".join(["became the uid", *missing]).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        lines = pipe.read().decode().splitlines()
    os.waitpid(pid, 0)
    if lines[:1] != ["became the uid"]:  # a container whose uid map stops short, say
        return f"the zygote cannot switch to the sandbox's uid {cfg['uid']}"
    if lines[1:]:
        return (f"the sandbox's uid cannot reach {lines[1]} (a folder above it does not let "
                "other users through: TMPDIR must be traversable, mode o+x)")
    return None


# -- ending every process of the sandbox without a PID namespace (plain mode) ------------------
SWEEP_SECONDS = 3.0


FIRST_PRIVATE_UID = 1 << 16  # below this, uids may be real accounts (grader/hosts/uids.py FIRST)
PROC = ["/proc"]  # where the zygote reads its processes (the root mode mounts its own: `main`)


def _state_as(pid, uid):
    """None if `pid` has not `uid` as its real, effective, saved or filesystem uid; else its
    state letter (b"Z": a zombie, which only its parent's wait removes from /proc)."""
    try:
        with open(f"{PROC[0]}/{pid}/status", "rb") as handle:
            text = handle.read()
    except OSError:
        return None
    state = text.partition(b"\nState:\t")[2][:1] or b"?"
    for line in text.split(b"\n"):
        if line.startswith(b"Uid:"):
            return state if uid in {int(value) for value in line.split()[1:]} else None
    return None


def kill_uid(uid, seconds, reap):
    """SIGKILL every process of `uid` (a private uid: only learner code has it), repeatedly,
    until none is left, zombies included, or `seconds` pass (True: none left). A child that
    becomes `uid` does `kill(-1)`: the kernel signals every process of that uid but the
    caller, and no one else's (its result says nothing: it succeeds whenever anyone else is
    visible, so /proc says who is left). A killed process stays in /proc as a zombie until it
    is waited for: by the zygote (`reap`, it is a subreaper) or by its relay, which ends once
    its server has; so the answer waits for those too, and a pid of the test is gone when
    the next test starts."""
    deadline = time.monotonic() + seconds
    while True:
        reap()
        states = [state for pid in _pids() if (state := _state_as(pid, uid)) is not None]
        alive = [state for state in states if state != b"Z"]
        if not states or time.monotonic() > deadline:
            return not alive
        if not alive:  # only zombies: their parents are about to wait for them
            time.sleep(0.002)
            continue
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
                if uid >= FIRST_PRIVATE_UID and os.getresuid() == (uid, uid, uid):
                    for signum in (signal.SIGSTOP, signal.SIGSTOP, signal.SIGKILL):
                        os.kill(-1, signum)  # stopped first: a process cannot fork
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.002)


def kill_descendants(root, seconds, spare=frozenset()):
    """SIGKILL every descendant of `root` (not `root` itself, nor those in `spare`: their
    descendants all the same), repeatedly, until none is left or `seconds` pass. `root` is a
    child subreaper, so an orphan stays its descendant."""
    deadline = time.monotonic() + seconds
    while True:
        parents = {}
        for pid in _pids():
            try:
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
                if fields[0] != b"Z":
                    parents[pid] = int(fields[1])
            except (OSError, IndexError, ValueError):
                pass
        below, frontier = set(), {root}
        while frontier:
            frontier = {pid for pid, parent in parents.items() if parent in frontier} - below
            below |= frontier
        below -= set(spare)
        if not below or time.monotonic() > deadline:
            return not below
        for signum in (signal.SIGSTOP, signal.SIGKILL):  # stopped first: it cannot fork
            for pid in below:
                try:
                    os.kill(pid, signum)
                except OSError:
                    pass
        time.sleep(0.002)


def _pids():
    return [int(name) for name in os.listdir(PROC[0]) if name.isdigit()]


def preload():
    """Import PRELOAD (a standard module this Python lacks is skipped: nothing depends on it)."""
    import importlib
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            if os.path.exists(os.path.join(sys.path[0], name.split(".")[0] + ".py")):
                raise  # one of the server's own modules: the code copy is broken


def warm_up(cfg):
    """Run the server's start-up paths once on trusted input, so forks start warm. The input
    is a file of the grader's code copy (root's, read-only here), never one in a folder that
    learner code can write."""
    import extension
    import main as server_main
    server_main.parse_args(["serve"])
    extension.load(os.path.join(cfg["code_inner"], WARM_UP))


# -- entry point --------------------------------------------------------------------------------
def main():
    ctl = socket.socket(fileno=int(sys.argv[1]))
    message = ctl.recv(1 << 20)
    if not message:  # the grader is gone
        return 1
    cfg = json.loads(message)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the sandbox dies with the grader
    if os.getppid() != cfg["parent"]:  # the grader died before that took effect
        return 1
    problem, pids, server_filter = None, None, None
    fresh = FreshTimes(cfg["given_times_ns"])
    for procs in cfg.get("cgroups", []):  # pids, memory and cpu caps for the whole sandbox
        with open(procs, "w") as handle:
            handle.write(str(os.getpid()))
    if cfg["mode"] in ("root", "userns"):
        try:
            build(cfg, fresh)
        except OSError as exc:
            problem = str(exc)
    if problem is None and cfg["mode"] in ("root", "userns"):
        pid = os.fork()  # the child is PID 1 of the new PID namespace
        if pid:
            ctl.close()
            while True:
                try:
                    _, status = os.waitpid(pid, 0)
                    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
                except InterruptedError:
                    continue
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        prctl(PR_SET_DUMPABLE, 0)
        if cfg["mode"] == "root" and problem is None:  # its own /proc, where no test's uid
            try:                                        # gets in (a folder of root's, 0700)
                private = os.path.join(cfg["root"], PRIVATE_PROC.lstrip("/"))
                os.mkdir(os.path.dirname(private), 0o700)
                os.chmod(os.path.dirname(private), 0o700)
                os.mkdir(private)
                mount("proc", private, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
                given_times(cfg["root"], ["sandbox/.zygote", "sandbox"], cfg["given_times_ns"])
                fresh.hold(cfg["root"], ["sandbox/.zygote"])
                PROC[0] = PRIVATE_PROC
            except OSError as exc:
                problem = f"the zygote's /proc: {exc}"
        if problem is None:
            try:  # its own PID namespace, where it comes back after forking each server
                pids = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
                unshare_pids()
                enter_pids(pids)
            except OSError as exc:
                problem = f"a PID namespace per server: {exc}"
        try:  # the host's folders bound in, held where they can still be changed
            for folder in (cfg["code"], cfg["solution"]):
                fresh.hold_tree(folder)
        except OSError as exc:
            problem = problem or f"holding the given folders: {exc}"
        os.chroot(cfg["root"])
        os.chdir("/")
        cfg = {**cfg, "work": INNER + "/work", "tmp": "/tmp", "code_inner": INNER + "/code"}
    else:
        cfg = {**cfg, "code_inner": cfg["code"]}
    if problem is None and cfg["mode"] == "plain":
        try:  # what the servers are given, the data area's own folder but not its tests'
            for folder in (cfg["code"], cfg["solution"], cfg["work"], cfg["tmp"]):
                fresh.hold_tree(folder)
            for folder in {cfg["data"], *(os.path.dirname(cfg[name]) for name in
                                          ("code", "solution", "work", "tmp", "data"))}:
                fresh.hold(folder, [""])  # the folders they are in, too
        except OSError as exc:
            problem = f"holding the given folders: {exc}"
    if problem is None and cfg["mode"] == "plain":
        try:  # every orphan of the sandbox is re-parented to the zygote, not to init
            prctl(PR_SET_CHILD_SUBREAPER, 1)
        except OSError as exc:
            problem = f"subreaper: {exc}"
    volumes = None
    if problem is None and cfg["mode"] in ("root", "userns"):
        try:  # before the zygote hardens itself: the mounter keeps mount and umount2
            volumes = Volumes(cfg, cfg["plan"])
        except OSError as exc:
            problem = f"the tests' volumes: {exc}"
    if problem is None:
        try:
            server_filter = harden(cfg["plan"], PID_NAMESPACE_CALLS + ZYGOTE_NUMBERED_CALLS
                                   if pids is not None else ())
        except OSError as exc:
            problem = f"hardening failed: {exc}"
    if problem is None and cfg["mode"] == "plain" and cfg["plan"]["unprivileged_uid"]:
        problem = unreachable(cfg)
    landlock = None
    if problem is None and cfg["plan"].get("landlock"):
        abi = landlock_abi()
        try:
            if landlock_features(abi) != cfg["plan"]["landlock"]:
                raise OSError(EINVAL, f"ABI {abi} does not give {cfg['plan']['landlock']}")
            read_write = (cfg["work"], cfg["data"], cfg["tmp"])
            install_landlock(abi, LANDLOCK_READ + (cfg["code"], cfg["solution"]), read_write,
                             LANDLOCK_DEVICES)
            landlock = (abi, tuple(p for p in LANDLOCK_READ if p != "/proc") +
                        (cfg["code"], cfg["solution"]), read_write, LANDLOCK_DEVICES)
        except OSError as exc:
            problem = f"landlock: {exc}"
    if problem is None:
        try:
            sys.path[:] = [cfg["code_inner"]] + [p for p in sys.path if p.startswith("/usr")]
            from http import server as _http_server  # noqa: F401  (the setup page's, lazy there)

            import extension  # noqa: F401  (the server's modules, imported once, here)
            import main  # noqa: F401
            from core import session  # noqa: F401
            from lesson import tools  # noqa: F401
            from transports import page_http  # noqa: F401  (setup_page's HTTP half, moved)
            from urlflow import setup_page  # noqa: F401
            preload()
        except Exception as exc:
            problem = f"the server code does not import: {type(exc).__name__}: {exc}"
    ctl.send(json.dumps({"ready": problem is None, "problem": problem,
                         "mode": cfg["mode"], "pid": os.getpid()}).encode())
    if problem is not None:
        return 1
    warm_up(cfg)
    import gc
    gc.collect()
    gc.freeze()  # fewer copy-on-write faults in the forked servers
    zygote = Zygote(cfg, ctl, pids, server_filter if pids is not None else None, landlock,
                    fresh, volumes)
    if not cfg.get("ahead"):  # else its submission comes later: `op_submission`
        zygote.take_submission()
    zygote.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
