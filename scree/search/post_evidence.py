"""The evidence scree.content.posts decides from, gathered from a folder and its index (issue 32): the indexed paths,
and the front matter of pages under folders named as posts whose paths carry no date (read from disk: the index
keeps no front matter; a team's collection keeps each file's text). Shared by the search engine and `scree doctor`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from scree.content.chunking import normalise_newlines, split_front_matter
from scree.content.posts import Posts, find_posts
from scree.store import IndexReader

HEAD_BYTES = 4096  # front matter is read from a page's first bytes
MAX_READS = 2000  # pages whose front matter is read per computation: a bound on a large blog's cost


def read_front_matter(root: Path, budget: list[int]) -> Callable[[str], str | None]:
    """A function giving a page's front matter read from `root` (None: none, unreadable, or past the budget)."""

    def head(path: str) -> bytes | None:
        try:
            with (root / path).open("rb") as file:
                return file.read(HEAD_BYTES)
        except OSError:
            return None

    return _front_matter_of(head, budget)


def stored_front_matter(store: IndexReader, budget: list[int]) -> Callable[[str], str | None]:
    """read_front_matter's function over the texts a team's collection keeps (issue 31: a server without a
    checkout reads what the writer indexed)."""

    def head(path: str) -> bytes | None:
        stored = store.stored_text(path)
        return None if stored is None else stored[1][:HEAD_BYTES]

    return _front_matter_of(head, budget)


def _front_matter_of(head: Callable[[str], bytes | None], budget: list[int]) -> Callable[[str], str | None]:
    """A page's front matter from its first bytes as `head` gives them, while the budget lasts."""

    def front_matter(path: str) -> str | None:
        if budget[0] <= 0:
            return None
        budget[0] -= 1
        data = head(path)
        if data is None:
            return None
        return split_front_matter(normalise_newlines(data.decode("utf-8", errors="replace")))[0]

    return front_matter


def site_posts(store: IndexReader, root: Path) -> Posts:
    """The index's posts folders (scree.content.posts), beside a docs tree: front matter read from `root`, or from
    the collection where `root` is no checkout of it (IndexReader.shared)."""
    read = stored_front_matter(store, [MAX_READS]) if store.shared else read_front_matter(root, [MAX_READS])
    return find_posts(store.paths(), read)
