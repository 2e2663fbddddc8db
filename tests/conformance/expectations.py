"""The official scenarios this project does not pass, each with its reason: the one list the
suite's runs are held to (test_official_suite.py).

`make test` runs the pinned suite with `--requirements 2025-11-25` and `--requirements 2026-07-28`,
against `serve --http` (server scenarios, with fixture.py's test tools) and against the lesson's
client (client scenarios, client_driver.py); every scenario run must pass except those below.
A name ending in `*` covers every scenario it starts. Every name here must still be known to the
suite (a renamed or removed scenario fails the test, so this list cannot go stale).

- LEFT_OUT: scenarios about a feature the lesson's server or client does not have, and does not
  claim (its capabilities say so). They may fail; if one passes, nothing is hidden.
- AWAITING: scenarios about a feature this project has, failing for a reason being fixed, with
  who fixes it. They are expected to fail, visibly: the test fails when one of them passes, so
  its line is removed the day the fix lands.
"""

LOGGING = ("logging: the server sends no log messages and does not declare the logging "
           "capability (the lesson is about roots and elicitation)")
RESOURCES = ("resources: the server exposes its notes through tools only and declares no "
             "resources capability")
PROMPTS = "prompts: the server has no prompts and declares no prompts capability"

LEFT_OUT = {
    # -- servers ---------------------------------------------------------------------------------
    "logging-set-level": LOGGING,
    "tools-call-with-logging": LOGGING,
    "completion-complete": "completion: no prompts or resource templates to complete",
    "resources-list": RESOURCES,
    "resources-read-text": RESOURCES,
    "resources-read-binary": RESOURCES,
    "resources-templates-read": RESOURCES,
    "resources-subscribe": RESOURCES,
    "resources-unsubscribe": RESOURCES,
    "prompts-list": PROMPTS,
    "prompts-get-simple": PROMPTS,
    "prompts-get-with-args": PROMPTS,
    "prompts-get-embedded-resource": PROMPTS,
    "prompts-get-with-image": PROMPTS,
    "input-required-result-non-tool-request": ("input_required on prompts/get: " + PROMPTS),
    "caching": ("caching: its discover and tools/list checks pass; the others need "
                "prompts/list, resources/list and resources/templates/list (" + PROMPTS + "; "
                + RESOURCES + ")"),
    "tasks-*": ("tasks (SEP-2663): an extension, not scored by the suite; the server runs "
                "every call to its end and declares no tasks extension"),
    # -- clients ---------------------------------------------------------------------------------
    "auth/*": ("authorization (OAuth): the lesson's client connects to local servers without "
               "authorization; the lesson's OAuth is exercise 3's, on the server's side"),
}

AWAITING = {}
