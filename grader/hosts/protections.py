"""What a grading report lists under `protections`, in one order, for every kind of host.

The sandbox (sandbox.plan) fills each entry from what this machine can do; the self-check
hosts (portable, in-process) have almost everything off and say so with `self_check_plan`.

Deliberate simplifications: names only; what each one means is in grader/README.md.
"""

# What a report lists under `protections`, in this order (sandbox.plan fills every one). The
# listed ones are None when off or not applicable; the others are True or False.
PROTECTIONS = ("isolated_python", "minimal_environment", "fresh_working_folder", "rlimits",
               "unprivileged_uid", "no_capabilities", "capability_bounding_set_empty",
               "no_new_privs", "fresh_session_keyring", "seccomp_denied", "seccomp_arch",
               "network_namespace", "private_filesystem", "pid_namespace", "disk_quota_mib",
               "cgroups", "parent_death_signal", "grader_touches_data_only_through_descriptors",
               "timeouts", "budget_watchdog", "process_group_killed", "sockets_denied",
               "private_tmpdir", "uid_per_test", "read_only_home_and_tmpdir", "fresh_uid",
               "every_process_of_the_uid_killed", "one_submission_at_a_time", "landlock",
               "pid_namespace_per_server", "fixed_file_times", "counters_visible")
# every_process_of_the_uid_killed, one_submission_at_a_time and landlock are plain mode's
# answers to what the namespaces give the other modes: None (not shown) there.
# counters_visible lists what a server can still tell its test's position by (sandbox.py's
# `counters_visible`): OPEN, what is not closed (a report shows it with what is missing); a
# self-check host has no such promise (None).
OPEN = {"counters_visible"}
LISTED = {"rlimits", "seccomp_denied", "seccomp_arch", "disk_quota_mib", "cgroups", "landlock",
          "every_process_of_the_uid_killed", "one_submission_at_a_time", "counters_visible"}


def self_check_plan(mode, *in_force):
    """The protections of a self-check host: every one off, except those `in_force`."""
    unknown = set(in_force) - set(PROTECTIONS)
    if unknown:  # a misspelt name would silently report that protection as off
        raise ValueError(f"unknown protections: {sorted(unknown)}")
    return {"mode": mode, "self_check": True,
            **{key: None if key in LISTED else key in in_force for key in PROTECTIONS}}
