"""A simulated user and browser for the lesson's client: the demo, the tests, the grader.

`ScriptedUser` keeps the user contract of client_core.py (`elicit(params, question_id)` returns
an ElicitResult, `open_url(url)` after a consent), so it works with both drivers. It plays
answers from a list; after consenting in URL mode it visits the page with its `Browser`.
`Browser` opens the setup page like a person (load it, press a button) through a `fetch`
function, so the same browser works over HTTP, inside the grader's sandbox or against an
in-process page. It follows redirects (a connect page that sends it to a provider, a provider
that sends it back to the server's callback), up to MAX_HOPS of them.

Deliberate simplifications: the browser finds the page's form, its fields and its action with
regular expressions (the lesson's own markup), and follows no links.
"""

import html
import re
import urllib.parse

from shared import wire

FORM_FIELD = re.compile(r'name="(\w+)" value="([^"]*)"')
FORM_ACTION = re.compile(r'<form\b[^>]*\baction="([^"]*)"')
MAX_HOPS = 8  # redirects followed after one request


class ScriptedUser:
    """Answers forms from a list of ElicitResult dicts (or functions of the params).

    `max_per_call` (with `new_call()` before each call) refuses to be asked more than that
    many times in one call: a server that keeps asking gets an error, never an endless
    conversation. After consenting in URL mode, `open_url` visits the page with `browser`.
    """

    def __init__(self, *answers, browser=None, max_per_call=None):
        self.answers = list(answers)
        self.seen = []
        self.visits = []
        self.browser = browser
        self.max_per_call = max_per_call
        self._this_call = 0

    def new_call(self):
        self._this_call = 0

    def elicit(self, params, question_id=None):
        self.seen.append(params)
        self._this_call += 1
        if self.max_per_call is not None and self._this_call > self.max_per_call:
            raise wire.RpcError(wire.INVALID_REQUEST, "Demasiadas preguntas en una llamada")
        if not self.answers:
            return {"action": "cancel"}
        answer = self.answers.pop(0)
        return answer(params) if callable(answer) else answer

    def open_url(self, url):
        self.visits.append(url)
        if self.browser is not None and (self.max_per_call is None
                                         or len(self.visits) <= self.max_per_call):
            self.browser.visit(url)


def http_fetch(url, method="GET", data=None, timeout=10):
    """One HTTP request to a loopback page: {"status", "body"} (and "location" for a
    redirect) or {"error"}."""
    import http.client  # loaded only when a page is opened
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost"):
        return {"error": "only http://127.0.0.1 pages can be opened here"}
    connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    headers = {"Content-Type": "application/x-www-form-urlencoded"} if data else {}
    try:
        target = parts.path + ("?" + parts.query if parts.query else "")
        connection.request(method, target, body=data, headers=headers)
        response = connection.getresponse()
        fetched = {"status": response.status,
                   "body": response.read(65536).decode("utf-8", "replace")}
        if response.getheader("Location"):
            fetched["location"] = response.getheader("Location")
        return fetched
    except OSError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        connection.close()


class Browser:
    """Opens a page like a person would: load it (following redirects), then press a button.

    `fetch(url, method, data)` does one request and returns {"status", "body"} (and
    "location" for a redirect), or {"error"}: plain HTTP by default; the grader's sandbox and
    an in-process page bring their own. The button pressed posts the page's form (hidden
    fields and `decision`) to its action; `before_submit` is called just before (the grader
    marks the moment). Every page seen is kept in `pages`.
    """

    def __init__(self, decision="allow", fetch=None, before_submit=None):
        self.decision = decision
        self.fetch = fetch or http_fetch
        self.before_submit = before_submit or (lambda: None)
        self.pages = []

    def visit(self, url):
        url, page = self.follow(url)
        if page.get("status") != 200:
            return
        body = page.get("body", "")
        fields = {name: html.unescape(value) for name, value in FORM_FIELD.findall(body)}
        fields["decision"] = self.decision
        action = FORM_ACTION.search(body)
        target = urllib.parse.urljoin(url, html.unescape(action[1]) if action else "connect")
        self.before_submit()
        self.follow(target, "POST", urllib.parse.urlencode(fields))

    def follow(self, url, method="GET", data=None):
        """One request and the redirects after it: (the last URL, the last page)."""
        page = self.fetch(url, method, data)
        self.pages.append(page)
        for _ in range(MAX_HOPS):
            location = page.get("location")
            if not isinstance(location, str) or page.get("status") not in (301, 302, 303, 307):
                break
            url = urllib.parse.urljoin(url, location)
            page = self.fetch(url, "GET", None)
            self.pages.append(page)
        return url, page
