"""Against a real gateway and its sandbox (started by packages/gateway/test/python-sdk.test.ts):
what a Python application does, with the standard library only."""

import asyncio
import hashlib
import io
import os
import json
import threading
import tracemalloc
import uuid

import pytest

import portico
from portico import AnthropicTools, AsyncPortico, OpenAIChatTools, OpenAIResponsesTools, Portico

from browser import authorize

MIB = 1024 * 1024
UPLOAD_BYTES = int(os.environ.get("PYTEST_UPLOAD_BYTES", str(6 * MIB)))


@pytest.fixture(scope="module")
def client(gateway_env):
    return Portico()


@pytest.fixture(scope="module")
def notion(client):
    name = f"py-notion-{uuid.uuid4().hex[:8]}"
    client.connections.create(name, "notion", sandbox=True)
    return name


@pytest.fixture(scope="module")
def drive(client):
    name = f"py-drive-{uuid.uuid4().hex[:8]}"
    client.connections.create(name, "google_drive", sandbox=True)
    return name


def connect(client, connection, identifier):
    got = client.get_or_create_connected_account(connection, identifier)
    if got.authorization_link:
        assert authorize(got.authorization_link["link"]) == 200
    return client.get_or_create_connected_account(connection, identifier)


@pytest.fixture(scope="module")
def user(client, notion):
    identifier = f"py-user-{uuid.uuid4().hex[:6]}"
    connect(client, notion, identifier)
    return identifier


def test_authorizes_a_sandbox_user_then_finds_the_account_active(client, notion):
    identifier = f"py-new-{uuid.uuid4().hex[:6]}"
    first = client.get_or_create_connected_account(notion, identifier)
    assert first.account["status"] == "PENDING_AUTH"
    assert first.authorization_link["link"].startswith(client.env_url)
    assert first.authorization_link["connected_account_id"] == first.account["id"]
    assert authorize(first.authorization_link["link"]) == 200
    again = client.get_or_create_connected_account(notion, identifier)
    assert again.account["status"] == "ACTIVE" and again.authorization_link is None
    assert again.account["id"] == first.account["id"]


def test_runs_a_tool_and_finds_its_execution(client, user):
    result = client.execute_tool("notes_user_list", user)
    assert isinstance(result.data, dict) and result.execution_id.startswith("exec_")
    assert client.executions.get(result.execution_id)["tool_name"] == "notes_user_list"
    mine = list(client.executions.list(identifier=user, page_size=1))
    assert result.execution_id in [e["id"] for e in mine]


def test_uploads_and_downloads_a_file_through_the_proxy_streamed_both_ways(client, drive, user):
    connect(client, drive, user)
    sent = hashlib.sha256()
    # Python's own allocations during both transfers: a body held whole would show its size here.
    tracemalloc.start()

    def chunks():
        # Generated as it is sent: the file never exists whole in this process.
        for i in range(UPLOAD_BYTES // (256 * 1024)):
            piece = hashlib.sha256(str(i).encode()).digest() * (256 * 1024 // 32)
            sent.update(piece)
            yield piece

    with client.request(
        drive,
        user,
        "/upload/drive/v3/files",
        method="POST",
        query={"uploadType": "media", "name": "big.bin"},
        headers={"content-type": "application/octet-stream"},
        body=chunks(),
    ) as uploaded:
        assert uploaded.status == 200, uploaded.text()
        file_id = uploaded.json()["id"]

    received = hashlib.sha256()
    size = 0
    largest = 0
    with client.request(drive, user, f"/drive/v3/files/{file_id}?alt=media") as download:
        assert download.status == 200
        for piece in download.iter_bytes():
            received.update(piece)
            size += len(piece)
            largest = max(largest, len(piece))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert size == UPLOAD_BYTES
    assert received.hexdigest() == sent.hexdigest()
    assert largest <= 64 * 1024
    assert peak < 2 * MIB, f"peak {peak} bytes for a {UPLOAD_BYTES}-byte transfer"
    print(f"\nstreamed {UPLOAD_BYTES} bytes up and down; peak Python allocation {peak} bytes")

    # A file object is streamed too, and the bytes come back the same.
    data = os.urandom(3 * MIB + 17)
    up = client.request(drive, user, "/upload/drive/v3/files?uploadType=media&name=f.bin", method="POST", body=io.BytesIO(data))
    assert up.status == 200
    assert client.request(drive, user, f"/drive/v3/files/{up.json()['id']}", query={"alt": "media"}).read() == data


def test_the_proxy_returns_the_providers_answers_json_text_and_errors(client, notion, user):
    me = client.request(notion, user, "/v1/users/me")
    assert me.ok and me.json()["object"] == "user"
    missing = client.request(notion, user, "/v1/pages/00000000000000000000000000000000")
    # The provider's own error comes back as its answer, not as an exception.
    assert missing.status == 404 and "object" in missing.text()


def test_each_gateway_problem_is_its_own_exception(client, notion, user):
    with pytest.raises(portico.UnknownToolError) as caught:
        client.execute_tool("notes_nothing", user)
    assert caught.value.status == 404 and caught.value.detail

    with pytest.raises(portico.InvalidInputError) as caught:
        client.execute_tool("notes_page_get", user, {"page_id": 42})
    assert caught.value.errors and all("path" in e and "message" in e for e in caught.value.errors)

    # A user who never connected gets a link to do so in the problem.
    with pytest.raises(portico.AccountNotActiveError) as caught:
        client.execute_tool("notes_user_list", f"nobody-{uuid.uuid4().hex[:6]}")
    assert caught.value.authorization_link
    with pytest.raises(portico.AccountNotFoundError):
        client.connected_accounts.get("ca_doesnotexist")

    pending = f"py-pending-{uuid.uuid4().hex[:6]}"
    client.get_authorization_link(notion, pending)
    with pytest.raises(portico.AccountNotActiveError) as caught:
        client.execute_tool("notes_user_list", pending, connection_name=notion)
    assert caught.value.authorization_link and caught.value.authorization_link.startswith("http")
    assert caught.value.retryable is False

    with pytest.raises(portico.ConnectionNotFoundError):
        client.connections.get("no-such-connection")
    with pytest.raises(portico.ConnectionExistsError):
        client.connections.create(notion, "notion", sandbox=True)
    with pytest.raises(portico.ExecutionNotFoundError):
        client.executions.get("exec_doesnotexist")
    with pytest.raises(portico.MissingHeaderError):
        client.request("", user, "/v1/users/me")
    with pytest.raises(portico.InvalidClientError):
        Portico(client_secret="pcs_wrong").tools.list()
    # Every exception is a PorticoError carrying the problem as received.
    try:
        client.connections.get("no-such-connection")
    except portico.PorticoError as error:
        assert error.problem["code"] == "connection_not_found" and error.request_id


def test_a_remote_mcp_servers_tools_are_listed_and_run_for_user_42(client):
    """A remote MCP provider in the sandbox (played by the emulated MCP server): its tools are
    listed once user_42 has authorized, in every format, and run as user_42."""
    name = f"py-mcp-{uuid.uuid4().hex[:6]}"
    made = client.connections.create(name, "linear_mcp", sandbox=True)
    assert made["mcp_server"]["registration"] == "dynamic"
    assert connect(client, name, "user_42").account["status"] == "ACTIVE"
    listed = {t["name"]: t for t in client.tools.list(connection=name)}
    assert {f"{name}__notes_create", f"{name}__notes_list", f"{name}__delete-note"} <= set(listed)
    assert listed[f"{name}__notes_create"]["input_schema"]["required"] == ["title"]
    assert listed[f"{name}__delete-note"]["annotations"]["destructive"] is True
    openai = [t["function"]["name"] for t in client.tools.list(connection=name, format="openai")]
    assert f"{name}__notes_list" in openai
    created = client.execute_tool(f"{name}__notes_create", "user_42", {"title": "From Python"})
    note = created.data["structured_content"]["note"]
    assert note["title"] == "From Python" and created.execution_id.startswith("exec_")
    notes = client.execute_tool(f"{name}__notes_list", "user_42").data["structured_content"]["notes"]
    assert note["id"] in [n["id"] for n in notes]
    assert client.executions.get(created.execution_id)["connection_name"] == name


def test_tools_in_every_format_the_api_offers(client):
    for fmt, key in (("json_schema", "input_schema"), ("openai", "function"), ("anthropic", "input_schema"), ("mcp", "inputSchema")):
        tools = client.tools.list(provider="notion", format=fmt)
        assert tools and all(key in t for t in tools), fmt
    one = client.tools.get("notes_user_list", format="mcp")
    assert one["name"] == "notes_user_list" and "annotations" in one


def test_tools_search_ranks_by_task_with_filters_and_pages(client):
    listing = client.tools.search("find contacts in the CRM by last name", page_size=3)
    first = listing.first_page()
    assert len(first.data) == 3 and first.next_page_token
    assert "crm_contacts_search" in [t["name"] for t in first.data]
    assert first.data[0]["score"] >= first.data[-1]["score"] and "specification" in first.data[0]["tags"]
    every = [t["name"] for t in listing]
    assert len(every) == len(set(every)) > 3
    reads = client.tools.search("calendar events", read_only=True, tags=["calendar"]).first_page().data
    assert reads and all(t["annotations"]["read_only"] and t["provider"] == "google_calendar" for t in reads)
    assert "notes_block_delete" in [t["name"] for t in client.tools.list(provider="notion", tags=["destructive"])]
    with pytest.raises(portico.InvalidInputError) as refused:
        client.tools.search("mail", tags=["nope"]).first_page()
    assert "tags are:" in refused.value.problem["detail"]


def test_toolsets_crud_and_listings_within_one(client):
    name = f"py-set-{uuid.uuid4().hex[:6]}"
    made = client.toolsets.create(name, providers=["notion"], tags=["read-only"])
    assert made["mcp_url"].endswith(f"/mcp/t/{name}") and made["mcp_mode"] == "full"
    assert name in [t["name"] for t in client.toolsets.list()]
    inside = client.tools.list(toolset=name)
    assert inside and all(t["provider"] == "notion" and t["annotations"]["read_only"] for t in inside)
    found = client.tools.search("create a page", toolset=name).first_page().data
    assert "notes_page_create" not in [t["name"] for t in found]
    changed = client.toolsets.update(name, tags=None, tools=["notes_user_list"])
    assert "tags" not in changed and changed["tools"] == ["notes_user_list"]
    client.toolsets.delete(name)
    with pytest.raises(portico.ToolsetNotFoundError):
        client.toolsets.get(name)


def test_async_tools_search(gateway_env):
    async def main():
        listing = AsyncPortico().tools.search("create a spreadsheet", page_size=5)
        return [t["name"] for t in (await listing.first_page()).data]

    assert "sheets_create_spreadsheet" in asyncio.run(main())


def test_connected_accounts_iterate_over_pages(client, notion):
    ids = {client.get_authorization_link(notion, f"py-page-{i}")["connected_account_id"] for i in range(3)}
    listing = client.connected_accounts.list(connection_name=notion, page_size=1)
    first = listing.first_page()
    assert len(first.data) == 1 and first.next_page_token
    assert ids <= {a["id"] for a in listing}
    assert sum(1 for _ in listing.pages()) >= 3


def test_mcp_tokens_webhooks_and_events(client, user, notion):
    token = client.mcp_tokens.create(user, connection_names=[notion], expires_in=3600)
    assert token["token"] and token["identifier"] == user
    assert token["id"] in [t["id"] for t in client.mcp_tokens.list(identifier=user)]
    client.mcp_tokens.revoke(token["id"])
    assert token["id"] not in [t["id"] for t in client.mcp_tokens.list(identifier=user)]

    hook = client.webhooks.create("https://example.com/hooks", ["connected_account.created"], description="py")
    assert hook["secret"].startswith("whsec_")
    assert client.webhooks.get(hook["id"])["description"] == "py"
    assert client.webhooks.update(hook["id"], enabled=False)["enabled"] is False
    rotated = client.webhooks.rotate_secret(hook["id"])
    assert rotated["secret"] != hook["secret"]
    assert list(client.webhooks.deliveries(hook["id"])) == []
    client.webhooks.delete(hook["id"])
    with pytest.raises(portico.WebhookNotFoundError):
        client.webhooks.get(hook["id"])

    events = list(client.events.list(page_size=2))
    assert events and all("type" in e and "id" in e for e in events)
    later = list(client.events.list(after=events[0]["id"]))
    assert [e["id"] for e in later] == [e["id"] for e in events[1:]][: len(later)]


def test_openai_and_anthropic_tools_run_the_models_calls(client, user):
    chat = OpenAIChatTools(client, user)
    names = [d["function"]["name"] for d in chat.definitions]
    assert "notes_user_list" in names and all(d["type"] == "function" for d in chat.definitions)
    message = {
        "role": "assistant",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "notes_user_list", "arguments": "{}"}},
            {"id": "call_2", "type": "function", "function": {"name": "notes_page_get", "arguments": '{"page_id": 42}'}},
            {"id": "call_3", "type": "function", "function": {"name": "the_apps_own", "arguments": "{}"}},
        ],
    }
    out = chat.run(message)
    assert [m["tool_call_id"] for m in out] == ["call_1", "call_2"]
    assert out[0]["role"] == "tool"
    assert json.loads(out[0]["content"]) == client.execute_tool("notes_user_list", user).data
    assert "page_id" in out[1]["content"]

    responses = OpenAIResponsesTools(client, user)
    assert responses.definitions[0]["type"] == "function" and "parameters" in responses.definitions[0]
    items = responses.run({"output": [{"type": "function_call", "call_id": "c1", "name": "notes_user_list", "arguments": "{}"}]})
    assert items[0]["type"] == "function_call_output" and items[0]["call_id"] == "c1"

    claude = AnthropicTools(client, user)
    assert all("input_schema" in d for d in claude.definitions)
    reply = claude.run({"content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "tu_1", "name": "notes_page_get", "input": {"page_id": 1}}]})
    assert reply[0]["role"] == "user" and reply[0]["content"][0]["is_error"] is True
    assert claude.run({"content": [{"type": "text", "text": "done"}]}) == []


def test_a_tool_call_for_a_user_not_connected_yields_the_link_to_show(client, notion):
    stranger = f"py-stranger-{uuid.uuid4().hex[:6]}"
    chat = OpenAIChatTools(client, stranger, connected_only=False, providers=["notion"])
    out = chat.run({"tool_calls": [{"id": "c", "type": "function", "function": {"name": "notes_user_list", "arguments": "{}"}}]})
    assert "Authorization required" in out[0]["content"] and "http" in out[0]["content"]


def test_the_gateway_token_is_fetched_once_for_many_threads(gateway_env):
    shared = Portico()
    failures = []

    def work():
        try:
            shared.tools.list(provider="notion")
        except Exception as error:  # pragma: no cover - reported below
            failures.append(error)

    threads = [threading.Thread(target=work) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [] and shared._tokens.fetches == 1


def test_the_async_client(gateway_env, user, notion):
    async def main():
        client = AsyncPortico()
        result = await client.execute_tool("notes_user_list", user)
        accounts = [a async for a in client.connected_accounts.list(identifier=user)]
        first = await client.connections.list(page_size=1).first_page()
        with pytest.raises(portico.UnknownToolError):
            await client.execute_tool("notes_nothing", user)
        response = await client.request(notion, user, "/v1/users/me")
        body = b"".join([piece async for piece in response.iter_bytes()])
        return result, accounts, first, body

    result, accounts, first, body = asyncio.run(main())
    assert result.execution_id and accounts and len(first.data) == 1 and b'"user"' in body
