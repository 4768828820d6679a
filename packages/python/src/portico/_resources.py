"""The API's resources. Objects are the gateway's JSON as dicts, with its snake_case keys."""

import urllib.parse
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from ._http import Transport
from ._pages import Page, PageList, paged

Json = Dict[str, Any]
TOOL_FORMATS = ("json_schema", "openai", "anthropic", "mcp")


def segment(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _drop_none(record: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in record.items() if v is not None}


class _Resource:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def _list(self, path: str, query: Dict[str, Any]) -> PageList[Json]:
        read = paged()

        def fetch(token: Optional[str]) -> Page[Json]:
            return read(self._t.obj("GET", path, query={**query, "page_token": token}))

        return PageList(fetch)


class Connections(_Resource):
    def create(self, name: str, provider: str, **fields: Any) -> Json:
        """Fields as the API names them: ``sandbox=True``, ``client_id``, ``client_secret``, ``scopes``..."""
        return self._t.obj("POST", "/api/v1/connections", json_body=_drop_none({"name": name, "provider": provider, **fields}))

    def list(self, *, provider: Optional[str] = None, page_size: Optional[int] = None) -> PageList[Json]:
        return self._list("/api/v1/connections", {"provider": provider, "page_size": page_size})

    def get(self, name: str) -> Json:
        return self._t.obj("GET", f"/api/v1/connections/{segment(name)}")

    def update(self, name: str, **changes: Any) -> Json:
        return self._t.obj("PATCH", f"/api/v1/connections/{segment(name)}", json_body=changes)

    def delete(self, name: str) -> None:
        self._t.send("DELETE", f"/api/v1/connections/{segment(name)}").close()


@dataclass
class AccountWithLink:
    """The end user's account, and a link to authorize it when it is not ACTIVE."""

    account: Json
    authorization_link: Optional[Json]


class ConnectedAccounts(_Resource):
    def authorization_link(
        self,
        connection_name: str,
        identifier: str,
        *,
        redirect_url: Optional[str] = None,
        state: Optional[str] = None,
        user_verify_url: Optional[str] = None,
    ) -> Json:
        return self._t.obj(
            "POST",
            "/api/v1/connected-accounts/authorization-link",
            json_body=_drop_none(
                {
                    "connection_name": connection_name,
                    "identifier": identifier,
                    "redirect_url": redirect_url,
                    "state": state,
                    "user_verify_url": user_verify_url,
                }
            ),
        )

    def verify(self, auth_request_id: str, identifier: str) -> Json:
        return self._t.obj(
            "POST",
            "/api/v1/connected-accounts/verify",
            json_body={"auth_request_id": auth_request_id, "identifier": identifier},
        )

    def import_account(self, **fields: Any) -> Json:
        """Creates the account from a credential the application already holds (ACTIVE at once)."""
        return self._t.obj("POST", "/api/v1/connected-accounts/import", json_body=_drop_none(fields))

    def list(
        self,
        *,
        connection_name: Optional[str] = None,
        identifier: Optional[str] = None,
        status: Optional[str] = None,
        page_size: Optional[int] = None,
    ) -> PageList[Json]:
        return self._list(
            "/api/v1/connected-accounts",
            {"connection_name": connection_name, "identifier": identifier, "status": status, "page_size": page_size},
        )

    def get(self, account_id: str) -> Json:
        return self._t.obj("GET", f"/api/v1/connected-accounts/{segment(account_id)}")

    def delete(self, account_id: str) -> Json:
        return self._t.obj("DELETE", f"/api/v1/connected-accounts/{segment(account_id)}")

    def get_or_create(self, connection_name: str, identifier: str, **link_options: Any) -> AccountWithLink:
        page = self.list(connection_name=connection_name, identifier=identifier, page_size=1).first_page()
        if page.data and page.data[0].get("status") == "ACTIVE":
            return AccountWithLink(page.data[0], None)
        # Making a link creates the account when it is missing and never changes an existing one's status.
        link = self.authorization_link(connection_name, identifier, **link_options)
        return AccountWithLink(self.get(link["connected_account_id"]), link)


@dataclass
class ToolResult:
    data: Any
    execution_id: str


def _tool_filters(
    provider: Optional[str],
    connection: Optional[str],
    read_only: Optional[bool],
    tags: Optional[List[str]],
    toolset: Optional[str] = None,
) -> Dict[str, Any]:
    return {
        "provider": provider,
        "connection": connection,
        "read_only": read_only,
        "tags": tags,
        "toolset": toolset,
    }


class Tools(_Resource):
    def list(
        self,
        *,
        provider: Optional[str] = None,
        format: str = "json_schema",
        connection: Optional[str] = None,
        read_only: Optional[bool] = None,
        tags: Optional[List[str]] = None,
        toolset: Optional[str] = None,
    ) -> List[Json]:
        """The catalog (every tool the filters keep) in one of the formats the gateway serves:
        json_schema, openai, anthropic, mcp. ``tags``: tools with every one of them."""
        query = {**_tool_filters(provider, connection, read_only, tags, toolset), "format": format}
        return list(self._t.obj("GET", "/api/v1/tools", query=query)["data"])

    def search(
        self,
        query: str,
        *,
        provider: Optional[str] = None,
        connection: Optional[str] = None,
        read_only: Optional[bool] = None,
        tags: Optional[List[str]] = None,
        toolset: Optional[str] = None,
        page_size: Optional[int] = None,
    ) -> PageList[Json]:
        """The tools that fit a task described in plain words, best first, each with its ``score``
        and ``tags``: ``client.tools.search("send an email to Ann").first_page().data[0]["name"]``.
        Iterate it for every match, page after page (20 a page unless ``page_size`` says otherwise)."""
        return self._list(
            "/api/v1/tools",
            {"query": query, "page_size": page_size, **_tool_filters(provider, connection, read_only, tags, toolset)},
        )

    def get(self, name: str, *, format: str = "json_schema") -> Json:
        return self._t.obj("GET", f"/api/v1/tools/{segment(name)}", query={"format": format})

    def execute(
        self,
        tool_name: str,
        identifier: str,
        tool_input: Optional[Dict[str, Any]] = None,
        *,
        connection_name: Optional[str] = None,
        schema_version: Optional[str] = None,
        tool_version: Optional[str] = None,
        upstream_version: Optional[str] = None,
        approval_id: Optional[str] = None,
    ) -> ToolResult:
        body = _drop_none(
            {
                "tool_name": tool_name,
                "identifier": identifier,
                "connection_name": connection_name,
                # A retry of an approved call runs the approved input: nothing to send unless given.
                "tool_input": tool_input if tool_input is not None else (None if approval_id else {}),
                "schema_version": schema_version,
                "tool_version": tool_version,
                "upstream_version": upstream_version,
                "approval_id": approval_id,
            }
        )
        raw = self._t.obj("POST", "/api/v1/tools/execute", json_body=body)
        return ToolResult(raw.get("data"), raw.get("execution_id", ""))


class Executions(_Resource):
    def get(self, execution_id: str) -> Json:
        return self._t.obj("GET", f"/api/v1/executions/{segment(execution_id)}")

    def list(
        self,
        *,
        tool_name: Optional[str] = None,
        identifier: Optional[str] = None,
        status: Optional[str] = None,
        since: Optional[str] = None,
        until: Optional[str] = None,
        page_size: Optional[int] = None,
    ) -> PageList[Json]:
        """Newest first."""
        return self._list(
            "/api/v1/executions",
            {
                "tool_name": tool_name,
                "identifier": identifier,
                "status": status,
                "since": since,
                "until": until,
                "page_size": page_size,
            },
        )


class McpTokens(_Resource):
    def create(
        self,
        identifier: str,
        *,
        connection_names: Optional[List[str]] = None,
        tools: Optional[List[str]] = None,
        expires_in: Optional[int] = None,
    ) -> Json:
        """The token value is in this answer only."""
        return self._t.obj(
            "POST",
            "/api/v1/mcp/tokens",
            json_body=_drop_none(
                {"identifier": identifier, "connection_names": connection_names, "tools": tools, "expires_in": expires_in}
            ),
        )

    def list(self, *, identifier: Optional[str] = None, page_size: Optional[int] = None) -> PageList[Json]:
        return self._list("/api/v1/mcp/tokens", {"identifier": identifier, "page_size": page_size})

    def revoke(self, token_id: str) -> None:
        self._t.send("DELETE", f"/api/v1/mcp/tokens/{segment(token_id)}").close()


class Toolsets(_Resource):
    """Named sets of tools (by ``tools``, ``patterns``, ``providers``, ``connections``, narrowed by
    ``tags``), which ``tools.list``/``tools.search`` take as ``toolset=``; each has an ``mcp_url``."""

    def create(self, name: str, **selectors: Any) -> Json:
        return self._t.obj("POST", "/api/v1/toolsets", json_body=_drop_none({"name": name, **selectors}))

    def list(self, *, page_size: Optional[int] = None) -> PageList[Json]:
        return self._list("/api/v1/toolsets", {"page_size": page_size})

    def get(self, name: str) -> Json:
        return self._t.obj("GET", f"/api/v1/toolsets/{segment(name)}")

    def update(self, name: str, **changes: Any) -> Json:
        """The fields given replace the toolset's; ``None`` clears one."""
        return self._t.obj("PATCH", f"/api/v1/toolsets/{segment(name)}", json_body=changes)

    def delete(self, name: str) -> None:
        self._t.send("DELETE", f"/api/v1/toolsets/{segment(name)}").close()


class Webhooks(_Resource):
    def create(self, url: str, events: List[str], *, description: Optional[str] = None, enabled: Optional[bool] = None) -> Json:
        """The signing secret is in this answer only."""
        return self._t.obj(
            "POST",
            "/api/v1/webhooks",
            json_body=_drop_none({"url": url, "events": events, "description": description, "enabled": enabled}),
        )

    def list(self, *, page_size: Optional[int] = None) -> PageList[Json]:
        return self._list("/api/v1/webhooks", {"page_size": page_size})

    def get(self, webhook_id: str) -> Json:
        return self._t.obj("GET", f"/api/v1/webhooks/{segment(webhook_id)}")

    def update(self, webhook_id: str, **changes: Any) -> Json:
        return self._t.obj("PATCH", f"/api/v1/webhooks/{segment(webhook_id)}", json_body=changes)

    def delete(self, webhook_id: str) -> None:
        self._t.send("DELETE", f"/api/v1/webhooks/{segment(webhook_id)}").close()

    def rotate_secret(self, webhook_id: str) -> Json:
        return self._t.obj("POST", f"/api/v1/webhooks/{segment(webhook_id)}/rotate-secret")

    def deliveries(self, webhook_id: str, *, event_id: Optional[str] = None, page_size: Optional[int] = None) -> PageList[Json]:
        return self._list(
            f"/api/v1/webhooks/{segment(webhook_id)}/deliveries", {"event_id": event_id, "page_size": page_size}
        )

    def retry(self, webhook_id: str, event_id: str) -> Json:
        return self._t.obj("POST", f"/api/v1/webhooks/{segment(webhook_id)}/deliveries/{segment(event_id)}/retry")


class Triggers(_Resource):
    """Changes at a provider delivered as ``trigger.fired`` events, and each trigger's health."""

    def types(self) -> List[Json]:
        return list(self._t.obj("GET", "/api/v1/trigger-types").get("data") or [])

    def type(self, name: str) -> Json:
        return self._t.obj("GET", f"/api/v1/trigger-types/{segment(name)}")

    def create(
        self,
        connection_name: str,
        identifier: str,
        trigger_type: str,
        *,
        config: Optional[Json] = None,
        interval_seconds: Optional[int] = None,
    ) -> Json:
        """Subscribes from the provider's current state: every change after it is reported."""
        return self._t.obj(
            "POST",
            "/api/v1/triggers",
            json_body=_drop_none(
                {
                    "connection_name": connection_name,
                    "identifier": identifier,
                    "trigger_type": trigger_type,
                    "config": config,
                    "interval_seconds": interval_seconds,
                }
            ),
        )

    def list(
        self,
        *,
        connection_name: Optional[str] = None,
        identifier: Optional[str] = None,
        trigger_type: Optional[str] = None,
        state: Optional[str] = None,
        page_size: Optional[int] = None,
    ) -> PageList[Json]:
        return self._list(
            "/api/v1/triggers",
            {
                "connection_name": connection_name,
                "identifier": identifier,
                "trigger_type": trigger_type,
                "state": state,
                "page_size": page_size,
            },
        )

    def get(self, trigger_id: str) -> Json:
        return self._t.obj("GET", f"/api/v1/triggers/{segment(trigger_id)}")

    def summary(self) -> Json:
        """How many triggers are active, degraded, failing and paused: ``{"states": {...}}``."""
        return self._t.obj("GET", "/api/v1/triggers/summary")

    def update(self, trigger_id: str, **changes: Any) -> Json:
        """``paused`` (True pauses, False resumes) and ``interval_seconds``."""
        return self._t.obj("PATCH", f"/api/v1/triggers/{segment(trigger_id)}", json_body=changes)

    def pause(self, trigger_id: str) -> Json:
        return self.update(trigger_id, paused=True)

    def resume(self, trigger_id: str) -> Json:
        return self.update(trigger_id, paused=False)

    def delete(self, trigger_id: str) -> None:
        self._t.send("DELETE", f"/api/v1/triggers/{segment(trigger_id)}").close()


class Events(_Resource):
    def list(self, *, type: Optional[str] = None, after: Optional[str] = None, page_size: Optional[int] = None) -> PageList[Json]:
        """Oldest first, from ``after`` (an event id) on; iterating continues past each page's last event."""

        def fetch(token: Optional[str]) -> Page[Json]:
            raw = self._t.obj(
                "GET", "/api/v1/events", query={"type": type, "after": token or after, "page_size": page_size}
            )
            return Page(list(raw.get("data") or []), raw.get("next_after") if raw.get("has_more") else None)

        return PageList(fetch)
