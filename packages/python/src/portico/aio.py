"""The async client: the blocking client's calls run in the event loop's default thread executor.

Why threads rather than asyncio streams: the standard library has no asyncio HTTP client, and
writing one (chunked encoding, TLS, keep-alive, redirects left alone) would duplicate the tested
blocking transport for no gain at the call rates an agent makes; the gateway token stays shared
between both, under one lock.
"""

import asyncio
import functools
from typing import Any, AsyncIterator, Callable, Generic, List, Optional, TypeVar, cast

from ._http import PorticoResponse
from ._pages import Page, PageList
from .client import Portico

T = TypeVar("T")


async def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, functools.partial(fn, *args, **kwargs))


class AsyncPageList(Generic[T]):
    """``async for item in listing`` for every item; ``await listing.first_page()``; ``pages()``."""

    def __init__(self, pages: PageList[T]) -> None:
        self._pages = pages

    async def first_page(self) -> Page[T]:
        return cast(Page[T], await _call(self._pages.first_page))

    async def pages(self) -> AsyncIterator[Page[T]]:
        it = self._pages.pages()
        sentinel = object()
        while True:
            page = await _call(next, it, sentinel)
            if page is sentinel:
                return
            yield page

    async def __aiter__(self) -> AsyncIterator[T]:
        async for page in self.pages():
            for item in page.data:
                yield item

    async def to_list(self) -> List[T]:
        return [item async for item in self]


class AsyncPorticoResponse:
    """A proxied answer read without blocking the loop; ``async for chunk in response.iter_bytes()``."""

    def __init__(self, response: PorticoResponse) -> None:
        self._response = response
        self.status = response.status
        self.headers = response.headers
        self.ok = response.ok

    async def iter_bytes(self, chunk_size: int = 64 * 1024) -> AsyncIterator[bytes]:
        it = self._response.iter_bytes(chunk_size)
        sentinel = b""
        try:
            while True:
                piece = await _call(next, it, sentinel)
                if not piece:
                    return
                yield piece
        finally:
            await _call(self._response.close)

    async def read(self) -> bytes:
        return cast(bytes, await _call(self._response.read))

    async def text(self) -> str:
        return cast(str, await _call(self._response.text))

    async def json(self) -> Any:
        return await _call(self._response.json)

    async def aclose(self) -> None:
        await _call(self._response.close)

    async def __aenter__(self) -> "AsyncPorticoResponse":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class _AsyncResource:
    """Every method of a resource as a coroutine; listings (lazy) as AsyncPageList at once."""

    _LAZY = frozenset({"list", "search", "deliveries"})

    def __init__(self, resource: Any) -> None:
        self._resource = resource

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._resource, name)
        if not callable(target):
            return target
        if name in self._LAZY:
            return lambda *a, **k: _wrap(target(*a, **k))

        async def method(*args: Any, **kwargs: Any) -> Any:
            return _wrap(await _call(target, *args, **kwargs))

        return method


def _wrap(result: Any) -> Any:
    if isinstance(result, PageList):
        return AsyncPageList(result)
    if isinstance(result, PorticoResponse):
        return AsyncPorticoResponse(result)
    return result


class AsyncPortico:
    """The same operations as Portico, as coroutines. Request bodies are sent from a thread: give
    bytes, a binary file object or a (sync) iterable of bytes."""

    def __init__(self, env_url: Optional[str] = None, client_id: Optional[str] = None, client_secret: Optional[str] = None, **options: Any) -> None:
        self.sync = Portico(env_url, client_id, client_secret, **options)
        self.env_url = self.sync.env_url
        self.connections: Any = _AsyncResource(self.sync.connections)
        self.connected_accounts: Any = _AsyncResource(self.sync.connected_accounts)
        self.tools: Any = _AsyncResource(self.sync.tools)
        self.toolsets: Any = _AsyncResource(self.sync.toolsets)
        self.executions: Any = _AsyncResource(self.sync.executions)
        self.mcp_tokens: Any = _AsyncResource(self.sync.mcp_tokens)
        self.webhooks: Any = _AsyncResource(self.sync.webhooks)
        self.events: Any = _AsyncResource(self.sync.events)
        self.triggers: Any = _AsyncResource(self.sync.triggers)

    async def get_authorization_link(self, *args: Any, **kwargs: Any) -> Any:
        return await _call(self.sync.get_authorization_link, *args, **kwargs)

    async def get_or_create_connected_account(self, *args: Any, **kwargs: Any) -> Any:
        return await _call(self.sync.get_or_create_connected_account, *args, **kwargs)

    async def execute_tool(self, *args: Any, **kwargs: Any) -> Any:
        return await _call(self.sync.execute_tool, *args, **kwargs)

    async def request(self, *args: Any, **kwargs: Any) -> AsyncPorticoResponse:
        return AsyncPorticoResponse(await _call(self.sync.request, *args, **kwargs))
