"""`serve` (stdio and --http) refuses every bad option value with one clear line and exit 2,
never a traceback; a good value of the same option still starts it."""

import subprocess
import sys

import pytest

from server_support import CODE

BAD = [
    (["--spent-states", "afile"], "not a folder"),
    (["--http", "127.0.0.1:0", "--spent-states", "afile"], "not a folder"),
    (["--trace", "no-existe/traza.jsonl"], "--trace no-existe/traza.jsonl"),
    (["--http", "127.0.0.1:0", "--trace", "no-existe/traza.jsonl"], "--trace"),
    (["--url-ttl", "-1"], "not a number of seconds"),
    (["--url-ttl", "nan"], "not a number of seconds"),
    (["--state-ttl", "inf"], "not a number of seconds"),
    (["--state-ttl", "diez"], "not a number of seconds"),
    (["--setup-wait", "99"], "between 0 and 45 seconds"),
    (["--setup-wait", "abc"], "not a number of seconds"),
    (["--user", ""], "a user's name is visible text"),
    (["--user", "ana\nbea"], "a user's name is visible text"),
    (["--second-user", " "], "a user's name is visible text"),
    (["--state-key", "zz"], "--state-key"),
    (["--state-key", "ab" * 8], "at least 32 bytes"),
    (["--http", "abc"], "not a port"),
    (["--http", "0.0.0.0:0"], "one address"),
    (["--root", "afile"], "not a folder"),
    (["--setup-page", "smtp"], "invalid choice"),
]


def run(tmp_path, *args):
    (tmp_path / "afile").write_text("un archivo, no una carpeta\n")
    return subprocess.run([sys.executable, "-I", str(CODE / "main.py"), "serve", *args],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args, reason", BAD, ids=[" ".join(a)[:40] for a, _ in BAD])
def test_a_bad_option_value_is_one_clear_line_and_exit_2(tmp_path, args, reason):
    done = run(tmp_path, *args)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and reason in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert reason in last or "usage" not in done.stderr, done.stderr


@pytest.mark.parametrize("args", [["--url-ttl", "0"], ["--state-ttl", "1.5"],
                                  ["--setup-wait", "45"], ["--user", "local:ana"],
                                  ["--spent-states", "gastados"],
                                  ["--spent-states", "gastados.sqlite"],
                                  ["--trace", "traza.jsonl"]])
def test_a_good_value_of_the_same_options_starts_the_server(tmp_path, args):
    done = run(tmp_path, *args)  # stdin is empty: it starts, reads nothing and ends
    assert done.returncode == 0, done.stderr
    assert "ready on stdio" in done.stderr and "Traceback" not in done.stderr
