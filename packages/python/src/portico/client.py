import json
import os
import re
import urllib.parse
from typing import Any, Dict, Mapping, Optional

from ._http import Body, GatewayTokenSource, PorticoResponse, QueryValue, Transport, _Endpoint, encode_query
from ._resources import (
    AccountWithLink,
    ConnectedAccounts,
    Connections,
    Events,
    Executions,
    McpTokens,
    ToolResult,
    Tools,
    Toolsets,
    Triggers,
    Webhooks,
)
from .errors import InvalidPathError

_DOT_SEGMENT = re.compile(r"^(\.|%2e){1,2}$", re.IGNORECASE)


def _setting(value: Optional[str], option: str, variable: str) -> str:
    if value is None or value == "":
        value = os.environ.get(variable) or None
    if value is None:
        raise ValueError(f"Portico: pass {option} or set {variable}.")
    return value


class Portico:
    """A client of one Portico gateway: the specification's operations and the API's resources.

    Safe to share between threads: they share one gateway token.
    """

    def __init__(
        self,
        env_url: Optional[str] = None,
        client_id: Optional[str] = None,
        client_secret: Optional[str] = None,
        *,
        max_retries: int = 2,
        max_retry_delay: float = 10.0,
        timeout: float = 60.0,
    ) -> None:
        """``env_url``, ``client_id``, ``client_secret`` default to PORTICO_ENV_URL, PORTICO_CLIENT_ID and
        PORTICO_CLIENT_SECRET. ``max_retries`` retries of problems the gateway marks retryable, waiting
        at most ``max_retry_delay`` seconds (a longer Retry-After is raised instead); ``timeout`` is the
        socket timeout in seconds."""
        endpoint = _Endpoint(_setting(env_url, "env_url", "PORTICO_ENV_URL"), timeout)
        self.env_url = endpoint.env_url
        self._tokens = GatewayTokenSource(
            endpoint,
            _setting(client_id, "client_id", "PORTICO_CLIENT_ID"),
            _setting(client_secret, "client_secret", "PORTICO_CLIENT_SECRET"),
        )
        self._transport = Transport(endpoint, self._tokens, max_retries, max_retry_delay)
        self.connections = Connections(self._transport)
        self.connected_accounts = ConnectedAccounts(self._transport)
        self.tools = Tools(self._transport)
        self.toolsets = Toolsets(self._transport)
        self.executions = Executions(self._transport)
        self.mcp_tokens = McpTokens(self._transport)
        self.webhooks = Webhooks(self._transport)
        self.events = Events(self._transport)
        self.triggers = Triggers(self._transport)

    def get_authorization_link(
        self,
        connection_name: str,
        identifier: str,
        *,
        redirect_url: Optional[str] = None,
        state: Optional[str] = None,
        user_verify_url: Optional[str] = None,
    ) -> Dict[str, Any]:
        """A link for the end user to authorize a connection (single use, expiring):
        ``{"link", "expires_at", "connected_account_id"}``."""
        return self.connected_accounts.authorization_link(
            connection_name, identifier, redirect_url=redirect_url, state=state, user_verify_url=user_verify_url
        )

    def verify_connected_account_user(self, auth_request_id: str, identifier: str) -> Dict[str, Any]:
        return self.connected_accounts.verify(auth_request_id, identifier)

    def get_or_create_connected_account(self, connection_name: str, identifier: str, **link_options: Any) -> AccountWithLink:
        """The end user's account on a connection, created if missing, with a link when it is not ACTIVE."""
        return self.connected_accounts.get_or_create(connection_name, identifier, **link_options)

    def execute_tool(
        self, tool_name: str, identifier: str, tool_input: Optional[Dict[str, Any]] = None, **options: Any
    ) -> ToolResult:
        """Runs a tool as the end user; ``.data`` is its result, ``.execution_id`` its record."""
        return self.tools.execute(tool_name, identifier, tool_input, **options)

    def request(
        self,
        connection_name: str,
        identifier: str,
        path: str,
        *,
        method: str = "GET",
        query: Optional[Mapping[str, QueryValue]] = None,
        json_body: Any = None,
        body: Body = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> PorticoResponse:
        """Calls the provider's API as the end user through the proxy.

        ``json_body`` is sent as JSON; ``body`` as given: bytes, text, a binary file object or an
        iterable of bytes (those two are streamed with chunked transfer, never held whole). The
        provider's answer comes back whatever its status, unread: stream it with ``iter_bytes()`` or
        read it with ``json()``, ``text()``, ``read()``. The gateway's own problems are raised.
        """
        if not path.startswith("/"):
            path = "/" + path
        pathname, _, inline = path.partition("?")
        if any(_DOT_SEGMENT.match(s) for s in pathname.split("/")):
            raise InvalidPathError(
                400,
                {
                    "code": "invalid_path",
                    "title": "Invalid proxy path",
                    "detail": f'The path "{pathname}" has a "." or ".." segment; name the provider resource without them.',
                },
            )
        sent: Dict[str, str] = {k.lower(): v for k, v in (headers or {}).items()}
        sent["connection_name"] = connection_name
        sent["identifier"] = identifier
        if json_body is not None:
            body = json.dumps(json_body).encode()
            sent.setdefault("content-type", "application/json")
        # A query written in the path and ``query`` both count; repeated keys stay repeated.
        pairs = urllib.parse.parse_qsl(inline, keep_blank_values=True)
        extra = encode_query(query)
        qs = "&".join(p for p in (urllib.parse.urlencode(pairs), extra) if p)
        return self._transport.send(
            method.upper(), f"/proxy{pathname}{'?' + qs if qs else ''}", headers=sent, body=body, pass_through=True
        )
