"""Retries, Retry-After and token renewal, against a local server that answers as told: the real
gateway does not fail on demand. Everything the gateway does answer is tested in test_gateway.py."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import portico
from portico import Portico
from portico.errors import ERROR_CLASSES, PROBLEM_CODES, PorticoError, problem_error


class Scripted:
    """A gateway that answers each API call with the next scripted answer, and counts."""

    def __init__(self):
        self.answers = []
        self.calls = []
        self.tokens_issued = 0
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _body(self):
                if self.headers.get("transfer-encoding") == "chunked":
                    out = b""
                    while True:
                        size = int(self.rfile.readline().strip(), 16)
                        if size == 0:
                            self.rfile.readline()
                            return out
                        out += self.rfile.read(size)
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("content-length") or 0))

            def _send(self, status, body, headers=None):
                raw = json.dumps(body).encode()
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self):
                body = self._body()
                if self.path == "/oauth/token":
                    with owner.lock:
                        owner.tokens_issued += 1
                        n = owner.tokens_issued
                    return self._send(200, {"access_token": f"tok{n}", "expires_in": 3600})
                self._answer(body)

            def do_GET(self):
                self._answer(b"")

            def _answer(self, body):
                with owner.lock:
                    owner.calls.append((self.command, self.path, self.headers.get("authorization"), body))
                    status, payload, headers = owner.answers.pop(0) if owner.answers else (200, {"data": []}, {})
                self._send(status, payload, headers)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def problem(self, code, retry_after=None, **extra):
        status, title, retryable = PROBLEM_CODES[code]
        headers = {"content-type": "application/problem+json"}
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        body = {
            "type": f"https://portico.dev/problems/{code}",
            "title": title,
            "status": status,
            "code": code,
            "detail": f"{title}.",
            "retryable": retryable,
            **extra,
        }
        return (status, body, headers)


@pytest.fixture
def server():
    s = Scripted()
    yield s
    s.server.shutdown()


def client(server, **options):
    return Portico(server.url, "cli_x", "pcs_x", **options)


def test_retries_a_retryable_problem_honouring_retry_after(server):
    server.answers = [server.problem("service_unavailable", retry_after=0), server.problem("rate_limited", retry_after=0)]
    assert client(server).tools.list() == []
    assert len(server.calls) == 3


def test_gives_up_after_max_retries_with_the_last_problem(server):
    server.answers = [server.problem("upstream_unavailable", retry_after=0)] * 5
    with pytest.raises(portico.UpstreamUnavailableError) as caught:
        client(server, max_retries=1).tools.list()
    assert caught.value.retryable is True
    assert len(server.calls) == 2


def test_never_retries_a_problem_that_is_not_retryable(server):
    server.answers = [server.problem("invalid_input", errors=[{"path": "/tool_input/x", "message": "is required"}])]
    with pytest.raises(portico.InvalidInputError) as caught:
        client(server).execute_tool("t", "u", {})
    assert len(server.calls) == 1
    assert caught.value.errors == [{"path": "/tool_input/x", "message": "is required"}]
    assert "/tool_input/x: is required" in str(caught.value)


def test_a_retry_after_longer_than_allowed_is_raised_at_once_with_the_hint(server):
    server.answers = [server.problem("rate_limited", retry_after=120)]
    with pytest.raises(portico.RateLimitedError) as caught:
        client(server, max_retry_delay=5).tools.list()
    assert caught.value.retry_after == 120
    assert len(server.calls) == 1


def test_renews_the_token_once_after_a_401_and_replays_the_call(server):
    c = client(server)
    server.answers = [server.problem("unauthenticated")]
    assert c.tools.list() == []
    assert [call[2] for call in server.calls] == ["Bearer tok1", "Bearer tok2"]
    # A second refusal in a row is the caller's to see.
    server.answers = [server.problem("unauthenticated"), server.problem("unauthenticated")]
    with pytest.raises(portico.UnauthenticatedError):
        c.tools.list()
    assert server.tokens_issued == 3


def test_a_streamed_body_is_neither_replayed_nor_retried(server):
    server.answers = [server.problem("service_unavailable", retry_after=0)]
    with pytest.raises(portico.ServiceUnavailableError):
        client(server).request("c", "u", "/upload", method="POST", body=iter([b"a", b"b"]))
    assert len(server.calls) == 1
    assert server.calls[0][3] == b"ab"


def test_one_token_for_many_threads(server):
    c = client(server)
    errors = []

    def call():
        try:
            c.tools.list()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=call) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert server.tokens_issued == 1
    assert len(server.calls) == 16


def test_every_problem_code_has_its_class_carrying_the_problem():
    for code, (status, title, retryable) in PROBLEM_CODES.items():
        error = problem_error(
            status,
            {
                "code": code,
                "detail": "what to change",
                "request_id": "req_1",
                "authorization_link": {"link": "http://gw/connect/x", "expires_at": "2030-01-01T00:00:00Z"},
            },
            "7",
        )
        cls = ERROR_CLASSES[code]
        assert type(error) is cls and isinstance(error, PorticoError)
        assert getattr(portico, cls.__name__) is cls
        assert (error.status, error.code, error.detail, error.request_id) == (status, code, "what to change", "req_1")
        assert error.retryable is retryable
        assert error.retry_after == 7
        assert error.authorization_link == "http://gw/connect/x"
    unknown = problem_error(418, {"code": "from_the_future", "detail": "x"})
    assert type(unknown) is PorticoError and unknown.code == "from_the_future"


def test_settings_come_from_the_environment(monkeypatch):
    for name in ("PORTICO_ENV_URL", "PORTICO_CLIENT_ID", "PORTICO_CLIENT_SECRET"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="PORTICO_ENV_URL"):
        Portico()
    monkeypatch.setenv("PORTICO_ENV_URL", "http://127.0.0.1:1/")
    monkeypatch.setenv("PORTICO_CLIENT_ID", "cli_x")
    with pytest.raises(ValueError, match="PORTICO_CLIENT_SECRET"):
        Portico()
    monkeypatch.setenv("PORTICO_CLIENT_SECRET", "pcs_x")
    assert Portico().env_url == "http://127.0.0.1:1"
    with pytest.raises(ValueError, match="absolute"):
        Portico("localhost:8080", "a", "b")


def test_an_unreachable_gateway_is_a_connection_error():
    with pytest.raises(portico.PorticoConnectionError, match="Could not reach"):
        Portico("http://127.0.0.1:1", "a", "b").tools.list()


def test_dot_segments_are_refused_before_sending():
    with pytest.raises(portico.InvalidPathError, match=r"\.\."):
        Portico("http://127.0.0.1:1", "a", "b").request("c", "u", "/v1/../api/v1/connections")
