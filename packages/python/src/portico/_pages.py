from typing import Any, Callable, Dict, Generic, Iterator, List, Optional, TypeVar

T = TypeVar("T")


class Page(Generic[T]):
    """One page of a listing: ``data`` and the token of the next page (None on the last)."""

    def __init__(self, data: List[T], next_page_token: Optional[str]) -> None:
        self.data = data
        self.next_page_token = next_page_token

    def __repr__(self) -> str:
        return f"<Page of {len(self.data)}, next={self.next_page_token!r}>"


class PageList(Generic[T]):
    """A listing: iterate it for every item, page after page (each page is fetched when the previous
    one is used up); ``first_page()`` for one page, ``pages()`` for page objects, ``to_list()`` for all."""

    def __init__(self, fetch_page: Callable[[Optional[str]], Page[T]]) -> None:
        self._fetch_page = fetch_page

    def first_page(self) -> Page[T]:
        return self._fetch_page(None)

    def pages(self) -> Iterator[Page[T]]:
        token: Optional[str] = None
        while True:
            page = self._fetch_page(token)
            yield page
            token = page.next_page_token
            if not token:
                return

    def __iter__(self) -> Iterator[T]:
        for page in self.pages():
            yield from page.data

    def to_list(self) -> List[T]:
        return list(self)


def paged(data_key: str = "data") -> Callable[[Dict[str, Any]], Page[Dict[str, Any]]]:
    def read(raw: Dict[str, Any]) -> Page[Dict[str, Any]]:
        return Page(list(raw.get(data_key) or []), raw.get("next_page_token"))

    return read
