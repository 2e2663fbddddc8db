"""The URL policy at its edges (no host, other schemes, a user without a password, punycode in
any label, blank sensitive parameters, one foreign script, letters without a Unicode name), and
what a flow record keeps: its session, its lifetime, why a retired link is dead."""

import pytest

from urlflow.url_mode import FlowError, FlowStore, url_problems


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.mark.parametrize("url, problem", [
    ("https:///connect", "solo se admiten URLs http(s) con host"),
    ("ftp://notas.example.com/connect", "solo se admiten URLs http(s) con host"),
    ("https://ana@notas.example.com/", "credenciales"),
    ("https://notas.xn--80ak6aa92e.example/", "punycode"),
    ("https://notas.example.com/c?token=", "'token'"),
    ("https://пример.рф/connect", "alfabetos mezclados"),
    ("https://\U00017000.example/connect", "alfabetos mezclados"),  # a letter with no name
])
def test_unsafe_urls_are_flagged_at_the_edges(url, problem):
    assert any(problem in p for p in url_problems(url)), url_problems(url)


@pytest.mark.parametrize("url", [
    "https://notas.example.com/c?page=2&lang=es",
    "https://notas.example.com/c?elicitation=abc",
])
def test_ordinary_query_parameters_pass(url):
    assert url_problems(url) == []


def test_a_flow_record_belongs_to_the_session_that_started_it():
    record = FlowStore().start("sesion-1", "local:ana", "notas-sync")
    assert (record.session_id, record.subject, record.provider) == \
        ("sesion-1", "local:ana", "notas-sync")


def test_a_flow_record_lives_ten_minutes_by_default():
    clock = Clock()
    flows = FlowStore(clock=clock)
    record = flows.start("s", "local:ana", "notas-sync")
    clock.now = 600.0
    assert flows.usable(record.elicitation_id) is record
    clock.now = 600.5
    with pytest.raises(FlowError, match="caducó"):
        flows.usable(record.elicitation_id)


def test_a_retired_link_says_it_was_annulled_not_used():
    flows = FlowStore()
    record = flows.start("s", "local:ana", "notas-sync")
    flows.retire(record.elicitation_id)
    with pytest.raises(FlowError, match="se anuló"):
        flows.usable(record.elicitation_id)
    with pytest.raises(FlowError, match="se anuló"):
        flows.complete(record.elicitation_id, record.nonce, "notas-sync")
    assert not flows.is_configured("local:ana", "notas-sync")


def test_retiring_a_finished_or_unknown_link_changes_nothing():
    flows = FlowStore()
    record = flows.start("s", "local:ana", "notas-sync")
    flows.complete(record.elicitation_id, record.nonce, "notas-sync")
    flows.retire(record.elicitation_id)  # a late decline after the page was completed
    flows.retire("desconocido")
    assert record.status == "completed"
    assert flows.is_configured("local:ana", "notas-sync")
    with pytest.raises(FlowError, match="ya se usó"):
        flows.usable(record.elicitation_id)
