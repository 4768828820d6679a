"""Portico's tools for the OpenAI and Anthropic APIs: definitions as plain dicts, and a runner that
executes the model's tool calls and returns the messages to append. No vendor package is imported;
messages may be dicts or the vendor SDKs' objects."""

import json
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional

from ._errors_base import PorticoError

if TYPE_CHECKING:
    from .client import Portico

Json = Dict[str, Any]


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def problem_text(error: PorticoError, identifier: str = "", tool_name: str = "") -> str:
    """What a model reads when a call failed: the detail (written to say what to change), the fields
    at fault, and, when the user must connect an account first, the link to show them."""
    if error.authorization_link:
        who = f' ("{identifier}")' if identifier else ""
        what = f"{tool_name} cannot run: " if tool_name else ""
        return (
            f"Authorization required. {what}the user{who} must connect their account first. "
            f"Show the user this link to connect it, then try again:\n{error.authorization_link}"
        )
    lines = [error.detail]
    lines.extend(f"- {e.get('path')}: {e.get('message')}" for e in error.errors)
    return "\n".join(lines)


class _Runner:
    def __init__(self, client: "Portico", identifier: str, tools: List[Json]) -> None:
        self._client = client
        self.identifier = identifier
        self._providers = {t["name"]: t.get("provider") for t in tools}

    def handles(self, name: str) -> bool:
        return name in self._providers

    def run(self, name: str, arguments: Any) -> "tuple[bool, str]":
        """(ok, text) for one call; a Portico problem is the model's to correct, never raised."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except ValueError as error:
                return False, f"The arguments are not valid JSON ({error}); send a JSON object."
        if not isinstance(arguments, dict):
            return False, "The arguments must be a JSON object."
        # Strict-mode nulls mean "not given".
        arguments = {k: v for k, v in arguments.items() if v is not None}
        try:
            result = self._client.tools.execute(name, self.identifier, arguments)
            return True, json.dumps(result.data)
        except PorticoError as error:
            if error.code == "account_not_found" and not error.authorization_link:
                link = self._link_for(name)
                if link:
                    error.authorization_link = link
            return False, problem_text(error, self.identifier, name)

    def _link_for(self, tool_name: str) -> Optional[str]:
        provider = self._providers.get(tool_name)
        try:
            candidates = [c for c in self._client.connections.list(page_size=100) if c.get("provider") == provider]
            if len(candidates) != 1:
                return None
            return str(self._client.get_authorization_link(candidates[0]["name"], self.identifier)["link"])
        except PorticoError:
            return None


class _Base:
    def __init__(
        self,
        client: "Portico",
        identifier: str,
        *,
        providers: Optional[Iterable[str]] = None,
        tools: Optional[Iterable[str]] = None,
        connected_only: bool = True,
    ) -> None:
        catalog = client.tools.list()
        if providers is not None:
            wanted = set(providers)
            catalog = [t for t in catalog if t.get("provider") in wanted]
        if tools is not None:
            named = set(tools)
            catalog = [t for t in catalog if t["name"] in named]
        if connected_only:
            active = {
                a.get("provider") for a in client.connected_accounts.list(identifier=identifier, status="ACTIVE", page_size=100)
            }
            catalog = [t for t in catalog if t.get("provider") in active]
        self._runner = _Runner(client, identifier, catalog)
        self._catalog = catalog


class OpenAIChatTools(_Base):
    """For ``chat.completions.create(tools=...)``: ``definitions``, and ``run(message)`` returning the
    ``tool`` messages to append. Calls to other functions are left to the application."""

    @property
    def definitions(self) -> List[Json]:
        return [
            {
                "type": "function",
                "function": {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]},
            }
            for t in self._catalog
        ]

    def run(self, message: Any) -> List[Json]:
        out: List[Json] = []
        for call in _get(message, "tool_calls") or []:
            fn = _get(call, "function")
            if _get(call, "type", "function") != "function" or fn is None:
                continue
            name = _get(fn, "name")
            if not self._runner.handles(name):
                continue
            _, text = self._runner.run(name, _get(fn, "arguments"))
            out.append({"role": "tool", "tool_call_id": _get(call, "id"), "content": text})
        return out


class OpenAIResponsesTools(_Base):
    """For ``responses.create(tools=...)``: ``run(output)`` returns the ``function_call_output`` items."""

    @property
    def definitions(self) -> List[Json]:
        return [
            {"type": "function", "name": t["name"], "description": t["description"], "parameters": t["input_schema"]}
            for t in self._catalog
        ]

    def run(self, output: Any) -> List[Json]:
        items = output if isinstance(output, list) else _get(output, "output") or []
        out: List[Json] = []
        for item in items:
            if _get(item, "type") != "function_call" or not self._runner.handles(_get(item, "name")):
                continue
            _, text = self._runner.run(_get(item, "name"), _get(item, "arguments"))
            out.append({"type": "function_call_output", "call_id": _get(item, "call_id"), "output": text})
        return out


class AnthropicTools(_Base):
    """For ``messages.create(tools=...)``: ``run(message)`` returns the user message carrying the
    ``tool_result`` blocks (none when there was nothing to run); ``results(message)`` the bare blocks."""

    @property
    def definitions(self) -> List[Json]:
        return [{"name": t["name"], "description": t["description"], "input_schema": t["input_schema"]} for t in self._catalog]

    def results(self, message: Any) -> List[Json]:
        out: List[Json] = []
        for block in _get(message, "content") or []:
            if _get(block, "type") != "tool_use" or not self._runner.handles(_get(block, "name")):
                continue
            ok, text = self._runner.run(_get(block, "name"), _get(block, "input") or {})
            result: Json = {"type": "tool_result", "tool_use_id": _get(block, "id"), "content": text}
            if not ok:
                result["is_error"] = True
            out.append(result)
        return out

    def run(self, message: Any) -> List[Json]:
        content = self.results(message)
        return [{"role": "user", "content": content}] if content else []
