"""HTTP to the gateway on the standard library: the gateway token, retries, streamed bodies."""

import http.client
import json
import random
import ssl
import threading
import time
import urllib.parse
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from ._errors_base import PorticoConnectionError, PorticoError
from .errors import problem_error

#: What a request body may be: bytes, text, a file object opened in binary mode, or an iterable of
#: bytes. Files and iterables are sent as they are read (chunked), never held whole.
Body = Union[bytes, bytearray, memoryview, str, Iterable[bytes], Any]
QueryValue = Union[str, int, float, bool, None, List[str], Tuple[str, ...]]

PROBLEM_TYPE_PREFIX = "https://portico.dev/problems/"
FIRST_BACKOFF = 0.25
CHUNK = 64 * 1024


def encode_query(query: Optional[Mapping[str, QueryValue]]) -> str:
    pairs: List[Tuple[str, str]] = []
    for key, value in (query or {}).items():
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            pairs.extend((key, str(v)) for v in value)
        elif isinstance(value, bool):
            pairs.append((key, "true" if value else "false"))
        else:
            pairs.append((key, str(value)))
    return urllib.parse.urlencode(pairs)


class _Endpoint:
    def __init__(self, env_url: str, timeout: float) -> None:
        parsed = urllib.parse.urlsplit(env_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(
                f"Portico: env_url must be an absolute http(s) URL such as http://localhost:8080, not {env_url!r}."
            )
        self.https = parsed.scheme == "https"
        self.host = parsed.hostname
        self.port = parsed.port
        self.base_path = parsed.path.rstrip("/")
        self.env_url = env_url.rstrip("/")
        self.timeout = timeout

    def connect(self) -> http.client.HTTPConnection:
        # One connection per call: simple to share between threads, and a streamed answer owns it
        # until it is closed.
        if self.https:
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=self.timeout, context=ssl.create_default_context()
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)


def _open(
    endpoint: _Endpoint,
    method: str,
    target: str,
    headers: Dict[str, str],
    body: Any,
) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    conn = endpoint.connect()
    try:
        conn.request(method, endpoint.base_path + target, body=body, headers=headers)
        return conn, conn.getresponse()
    except (OSError, http.client.HTTPException) as error:
        conn.close()
        raise PorticoConnectionError(
            f"Could not reach the Portico gateway at {endpoint.env_url}: {error}"
        ) from error


class GatewayTokenSource:
    """The gateway access token (client_credentials): fetched once, shared by every thread, renewed
    a tenth of its lifetime early (at most a minute) or once when the gateway refuses it."""

    def __init__(self, endpoint: _Endpoint, client_id: str, client_secret: str) -> None:
        self._endpoint = endpoint
        self._client_id = client_id
        self._client_secret = client_secret
        self._lock = threading.Lock()
        self._value: Optional[str] = None
        self._renew_at = 0.0
        #: Tokens fetched so far (for tests and metrics).
        self.fetches = 0

    def current(self) -> str:
        with self._lock:
            if self._value is not None and time.monotonic() < self._renew_at:
                return self._value
            return self._fetch()

    def renew(self, refused: str) -> str:
        """A new token; when another thread already replaced ``refused``, that replacement."""
        with self._lock:
            if self._value is not None and self._value != refused and time.monotonic() < self._renew_at:
                return self._value
            return self._fetch()

    def _fetch(self) -> str:
        # Called with the lock held: threads needing a token at the same moment wait for this one.
        started = time.monotonic()
        form = urllib.parse.urlencode(
            {
                "grant_type": "client_credentials",
                "client_id": self._client_id,
                "client_secret": self._client_secret,
            }
        )
        conn, res = _open(
            self._endpoint,
            "POST",
            "/oauth/token",
            {"content-type": "application/x-www-form-urlencoded", "accept": "application/json"},
            form,
        )
        try:
            raw = res.read()
        finally:
            conn.close()
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        token = body.get("access_token")
        if res.status >= 300 or not isinstance(token, str):
            raise problem_error(res.status, body, res.getheader("retry-after"))
        expires_in = body.get("expires_in")
        lifetime = float(expires_in) if isinstance(expires_in, (int, float)) else 3600.0
        self._value = token
        self._renew_at = started + lifetime - min(60.0, lifetime / 10)
        self.fetches += 1
        return token


class PorticoResponse:
    """A provider's answer through the proxy. Nothing is read until asked: iterate ``iter_bytes()``
    to stream it, or read it whole with ``json()``, ``text()`` or ``read()`` (once). Close it (or use
    ``with``) when a streamed body is not read to its end."""

    def __init__(
        self,
        conn: Optional[http.client.HTTPConnection],
        response: Optional[http.client.HTTPResponse],
        *,
        status: int = 0,
        headers: Optional[List[Tuple[str, str]]] = None,
        body: Optional[bytes] = None,
    ) -> None:
        self._conn = conn
        self._response = response
        self.status: int = response.status if response is not None else status
        self.reason: str = response.reason if response is not None else ""
        self._headers = response.getheaders() if response is not None else list(headers or [])
        self._body = body
        self._used = False

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def headers(self) -> Dict[str, str]:
        """Header names in lower case; repeated headers joined with ", "."""
        out: Dict[str, str] = {}
        for name, value in self._headers:
            key = name.lower()
            out[key] = f"{out[key]}, {value}" if key in out else value
        return out

    def header(self, name: str) -> Optional[str]:
        return self.headers.get(name.lower())

    def iter_bytes(self, chunk_size: int = CHUNK) -> Iterator[bytes]:
        """The body as it arrives, at most ``chunk_size`` bytes at a time."""
        if self._used:
            raise RuntimeError("The response body has already been read.")
        self._used = True
        try:
            if self._body is not None:
                for i in range(0, len(self._body), chunk_size):
                    yield self._body[i : i + chunk_size]
                return
            assert self._response is not None
            while True:
                piece = self._response.read1(chunk_size) if hasattr(self._response, "read1") else self._response.read(chunk_size)
                if not piece:
                    break
                yield piece
        finally:
            self.close()

    def __iter__(self) -> Iterator[bytes]:
        return self.iter_bytes()

    def read(self) -> bytes:
        return b"".join(self.iter_bytes())

    def text(self, encoding: Optional[str] = None) -> str:
        charset = encoding
        if charset is None:
            ctype = self.header("content-type") or ""
            for part in ctype.split(";")[1:]:
                key, _, value = part.strip().partition("=")
                if key.lower() == "charset" and value:
                    charset = value.strip('"')
        return self.read().decode(charset or "utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.read())

    def close(self) -> None:
        if self._response is not None:
            self._response.close()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> "PorticoResponse":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<PorticoResponse {self.status}>"


def _replayable(body: Any) -> bool:
    return body is None or isinstance(body, (bytes, bytearray, memoryview, str))


class Transport:
    """Sends API calls: bearer token, one renewal after a 401, bounded retries of retryable problems."""

    def __init__(
        self,
        endpoint: _Endpoint,
        tokens: GatewayTokenSource,
        max_retries: int,
        max_retry_delay: float,
    ) -> None:
        self.endpoint = endpoint
        self.tokens = tokens
        self.max_retries = max_retries
        self.max_retry_delay = max_retry_delay

    def send(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, QueryValue]] = None,
        headers: Optional[Mapping[str, str]] = None,
        json_body: Any = None,
        body: Any = None,
        pass_through: bool = False,
    ) -> PorticoResponse:
        qs = encode_query(query)
        target = f"{path}?{qs}" if qs else path
        base: Dict[str, str] = {k.lower(): v for k, v in (headers or {}).items()}
        if json_body is not None:
            base["content-type"] = "application/json"
            body = json.dumps(json_body, separators=(",", ":")).encode()
        if isinstance(body, str):
            body = body.encode()
        if not pass_through:
            base.setdefault("accept", "application/json")
        # A file or an iterable is read as it is sent: it cannot be sent again after a 401 or a retry.
        replayable = _replayable(body)
        if not replayable and not hasattr(body, "read"):
            body = _chunks(body)
        renewed = False
        attempt = 0
        while True:
            token = self.tokens.current()
            sent = dict(base)
            sent["authorization"] = f"Bearer {token}"
            conn, res = _open(self.endpoint, method, target, sent, body)
            # Through the proxy, every answer that is not a problem is the provider's: given back unread.
            if 200 <= res.status < 300 or (pass_through and not _is_problem(res)):
                return PorticoResponse(conn, res)
            raw = res.read()
            conn.close()
            problem = _parse(raw)
            # A provider may answer problem+json too: only the gateway's own problem types are raised.
            if pass_through and not str(problem.get("type", "")).startswith(PROBLEM_TYPE_PREFIX):
                return PorticoResponse(None, None, status=res.status, headers=res.getheaders(), body=raw)
            if not problem:
                problem = {"detail": f"The gateway answered {res.status} without a problem body."}
            if res.status == 401 and problem.get("code") == "unauthenticated" and not renewed and replayable:
                renewed = True
                self.tokens.renew(token)
                continue
            error = problem_error(res.status, problem, res.getheader("retry-after"))
            delay = self._retry_delay(error, attempt) if replayable else None
            if delay is None:
                raise error
            time.sleep(delay)
            attempt += 1

    def json(self, method: str, path: str, **options: Any) -> Any:
        res = self.send(method, path, **options)
        if res.status == 204:
            res.close()
            return None
        return res.json()

    def obj(self, method: str, path: str, **options: Any) -> Dict[str, Any]:
        """A JSON object answer (the API's answers are objects; anything else reads as empty)."""
        value = self.json(method, path, **options)
        return value if isinstance(value, dict) else {}

    def _retry_delay(self, error: PorticoError, attempt: int) -> Optional[float]:
        if not error.retryable or attempt >= self.max_retries:
            return None
        # Exponential backoff with jitter, so clients that failed together do not retry together.
        backoff = FIRST_BACKOFF * 2**attempt * (0.5 + random.random() / 2)
        wait = error.retry_after if error.retry_after is not None else backoff
        return None if wait > self.max_retry_delay else wait


def _is_problem(res: http.client.HTTPResponse) -> bool:
    return (res.getheader("content-type") or "").startswith("application/problem+json")


def _parse(raw: bytes) -> Dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _chunks(body: Iterable[Any]) -> Iterator[bytes]:
    for piece in body:
        if isinstance(piece, str):
            piece = piece.encode()
        if piece:
            yield bytes(piece) if not isinstance(piece, bytes) else piece
