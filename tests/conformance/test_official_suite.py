"""The official MCP conformance suite (pinned in package.json) against this project, at both
revisions: `serve --http` with the suite's test tools (fixture.py, loaded with --solution) for
the server scenarios, and the lesson's client over HTTP (client_driver.py) for the client
scenarios. Every scenario a revision requires passes, except those expectations.py lists with
their reason; every frame the server wrote during a run validates against the official schema.
"""

import fnmatch
import re

import pytest
from conformance_support import (
    FIXTURE,
    client_command,
    describe,
    failures,
    known_scenarios,
    require_suite,
    results,
    suite,
)
from expectations import AWAITING, LEFT_OUT

from http_support import Served
from server_support import validate_trace
from shared.protocol import REVISIONS  # code/, on sys.path through conformance_support


@pytest.fixture(autouse=True)
def installed():
    require_suite()


@pytest.fixture
def served(tmp_path):
    """`serve --http` with the suite's test tools; after the test, stopped by its PID, and
    every frame it wrote validated against the schema of its revision."""
    trace = tmp_path / "wire.jsonl"
    server = Served("--solution", FIXTURE, trace=trace, cwd=tmp_path)
    yield server
    assert server.stop() == 143, server.log  # SIGTERM: 128 + 15, a clean stop
    validate_trace(trace)


def listed(name, table):
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in table)


def required(revision, side, home):
    """The scenarios `--requirements REVISION` runs on `side` (scored or not)."""
    listing = suite("list", "--requirements", revision, home=home, timeout=120).stdout
    names, section = set(), None
    for line in listing.splitlines():
        if line.startswith(("Server scenarios", "Client scenarios", "Run and reported")):
            section = line.split()[0].lower()
        found = re.match(r"^\s+- (\S+)(?: \[(server|client)\])?$", line)
        if found and (section == side or (section == "run" and found[2] == side)):
            names.add(found[1])
    assert names, listing
    return names


def judge(revision, side, run, out, home):
    found = results(out)
    missing = required(revision, side, home) - set(found)
    assert not missing, f"scenarios that left no result: {sorted(missing)}\n{run.stderr[-3000:]}"
    failing = {name for name, checks in found.items() if failures(checks)}
    unexpected = {n for n in failing if not listed(n, LEFT_OUT) and not listed(n, AWAITING)}
    assert not unexpected, "failing, and not in expectations.py:\n" + describe(found, unexpected)
    fixed = {n for n in found if listed(n, AWAITING) and n not in failing}
    assert not fixed, (f"now passing: remove {sorted(fixed)} from AWAITING in "
                       "tests/conformance/expectations.py")


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_server_passes_every_scenario_its_revision_requires(revision, served, tmp_path):
    out = tmp_path / "results"
    run = suite("server", "--url", served.url, "--requirements", revision, "-o", out,
                home=tmp_path)
    judge(revision, "server", run, out, tmp_path)


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_lessons_client_passes_every_scenario_its_revision_requires(revision, tmp_path):
    out = tmp_path / "results"
    run = suite("client", "--command", client_command(), "--requirements", revision, "-o", out,
                home=tmp_path)
    judge(revision, "client", run, out, tmp_path)


def test_every_scenario_expectations_names_is_one_the_suite_still_knows(tmp_path):
    known = known_scenarios(tmp_path)
    assert len(known) > 50, known
    stale = [name for name in (*LEFT_OUT, *AWAITING)
             if not any(fnmatch.fnmatchcase(k, name) for k in known)]
    assert not stale, f"expectations.py names scenarios the suite no longer has: {stale}"


def test_no_scenario_is_both_left_out_and_awaited():
    assert not set(LEFT_OUT) & set(AWAITING)
    assert all(reason.strip() for reason in (*LEFT_OUT.values(), *AWAITING.values()))
