"""The grader's hosts are objects chosen once: one class per kind, one table, no name ladders.

grader/hosts/__init__.py's `kind(name)` picks a class of grader/hosts/kinds.py from its `KINDS`
table; the command line, the runner and the pool then ask that object what to do, and never
compare host names (a comparison is how the `if name == "sandbox"` ladders came in). The two
scripts a host launches by path import nothing of the grader.
"""

import ast
import inspect
import os

import pytest

from grader import hosts
from grader.hosts import kinds
from grader.hosts.kinds import Kind
from grader.paths import GRADER_DIR

# What the command line, the runner and the pool ask of a kind (grader/hosts/kinds.py)
METHODS = ("prepare", "write", "workspace", "remove", "open", "describe", "unavailable", "mode",
           "clean_leftovers", "stop")
FLAGS = ("threads", "pytest", "in_workers", "fallback")
MUST_IMPLEMENT = ("prepare", "write", "workspace", "remove", "open", "describe")
# Where a host name must never be compared: the callers of the kinds, and the kinds themselves
ASKERS = ("cli.py", "runner.py", "pool.py", "worker.py", "selfcheck.py", "hosts/__init__.py",
          "hosts/kinds.py")
LAUNCHED_BY_PATH = ("hosts/zygote.py", "hosts/launch.py")


@pytest.mark.parametrize("name", list(hosts.KINDS))
def test_every_host_kind_offers_the_same_interface(name):
    kind = hosts.KINDS[name]()
    assert kind.name == name
    for method in METHODS:
        assert callable(getattr(kind, method)), (name, method)
    for method in MUST_IMPLEMENT:  # the base class only declares these
        assert getattr(type(kind), method) is not getattr(Kind, method), (name, method)
    for flag in FLAGS:
        assert isinstance(getattr(kind, flag), bool), (name, flag)
    assert inspect.signature(kind.prepare).parameters.keys() == {"path", "name"}
    assert inspect.signature(kind.open).parameters.keys() == {"solution_dir", "workspace"}


def test_a_self_check_kind_describes_itself_as_a_self_check_of_its_own_name():
    for name in ("portable", "inprocess"):
        described = hosts.kind(name).describe()
        assert described["mode"] == name and described["self_check"] is True
        assert hosts.kind(name).mode() == name


def test_no_host_or_auto_is_the_sandbox_where_it_can_run_and_the_portable_fallback_elsewhere(
        monkeypatch):
    monkeypatch.delenv("GRADER_HOST", raising=False)
    monkeypatch.setattr(kinds, "sandbox_possible", lambda: True)
    assert [hosts.kind(n).name for n in (None, "auto")] == ["sandbox", "sandbox"]
    assert not hosts.kind(None).fallback and hosts.kind("sandbox").unavailable() == ""
    monkeypatch.setattr(kinds, "sandbox_possible", lambda: False)
    assert [hosts.kind(n).name for n in (None, "auto")] == ["portable", "portable"]
    assert hosts.kind(None).fallback and hosts.kind("auto").fallback
    assert not hosts.kind("portable").fallback  # asked for by name: the user's choice
    assert "solo funciona en Linux" in hosts.kind("sandbox").unavailable()


def test_grader_host_forces_what_auto_picks_and_only_auto(monkeypatch):
    monkeypatch.setenv("GRADER_HOST", "inprocess")
    assert hosts.kind("auto").name == "inprocess" and not hosts.kind("auto").fallback
    assert hosts.kind("portable").name == "portable"
    monkeypatch.setenv("GRADER_HOST", "portable")
    assert hosts.kind("auto").fallback


def test_an_unknown_host_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match="use one of auto, sandbox, portable, inprocess"):
        hosts.kind("docker")


# -- no ladder can come back --------------------------------------------------------------------
def host_name_comparisons(source):
    """Lines of `source` that compare a host's name: against a host name ("sandbox" == x,
    x in ("portable", ...)) or through a `.name` attribute (kind.name == ...)."""
    names = set(hosts.KINDS)

    def names_a_host(node):
        if isinstance(node, ast.Constant):
            return node.value in names
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(names_a_host(element) for element in node.elts)
        return isinstance(node, ast.Attribute) and node.attr == "name"

    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Compare)
            and any(names_a_host(side) for side in [node.left, *node.comparators])]


def test_the_check_sees_a_ladder_in_each_of_its_shapes():
    assert host_name_comparisons('if KIND.name == "sandbox":\n    pass\n') == [1]
    assert host_name_comparisons('x = job.get("host") == "sandbox"\n') == [1]
    assert host_name_comparisons('x = chosen in ("portable", "auto")\n') == [1]
    assert host_name_comparisons('x = mode == "root"\ny = name == "auto"\n') == []


@pytest.mark.parametrize("module", ASKERS)
def test_the_command_line_runner_and_pool_never_compare_host_names(module):
    with open(os.path.join(GRADER_DIR, module), encoding="utf-8") as handle:
        assert host_name_comparisons(handle.read()) == [], module


@pytest.mark.parametrize("script", LAUNCHED_BY_PATH)
def test_a_script_a_host_launches_by_path_imports_nothing_of_the_grader(script):
    with open(os.path.join(GRADER_DIR, script), encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert not {name for name in imported if name.split(".")[0] == "grader"}, script


def test_the_hosts_launch_the_scripts_where_they_are():
    from grader.hosts import portable, sandbox
    assert os.path.samefile(sandbox.ZYGOTE, os.path.join(GRADER_DIR, "hosts", "zygote.py"))
    assert os.path.samefile(portable.LAUNCH, os.path.join(GRADER_DIR, "hosts", "launch.py"))
