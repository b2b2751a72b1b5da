"""A thin chunk that points to one other page of the folder stands aside for that page. Pure.

Hugo's docs have "How do I configure a multilingual site?" answered by their "Multilingual mode > Configuration"
section, whose text is "See [configure languages][]." (the link defined at the page's end as
`/configuration/languages/`): heading and title hold every word of the question, so the section led both lists,
and being thin (chunking.thin) it gave its place to its own page's next chunk, "Multilingual themes support". The page
it points to, `content/en/configuration/languages.md`, came fifth. A thin chunk among the first POINTER_WINDOW that
opens by sending the reader elsewhere ("See", "Please refer to", "For the options, see": points_elsewhere) and whose
links lead to exactly one other indexed page has that page's opening (where the link lands) stand just before it, at
its score, as the site's reader would follow the link. A "Next Step" list of
links leads on, not to the answer: it is no pointer.

Links are read as markdown writes them, inline (`[text](../configuration/languages.md)`) or by reference (`[text][]`,
`[text][label]`, with the definition anywhere in the file), and resolved to indexed files as docs generators map
them: a relative target from the linking file's folder (or from its page's own folder, as Hugo resolves a page's
relative links), a site-absolute one (`/configuration/languages/`) to the file whose path ends in it; a file named
`index`, `_index` or `README` stands for its folder, and an extension (`.md`, `.mdx`, `.html`) is optional. Where
several files end in the same target (a site's versions and languages), the one sharing the longest leading folders
with the linking file is it; a tie, an external URL or an anchor alone resolves to nothing.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from scree.content.chunking import below_heading
from scree.content.posts import INDEX_NAMES

POINTER_WINDOW = 10  # the first candidates looked at for pointers: each looks up its file's link definitions

# A sentence sending the reader to another page for this topic: "See [configure languages][].", "Please refer to
# [installing by binary](./install-binary.md).", "For the options, see [...]". Not a "Next Step" list of links
# (KubeVela's `* [Check Application State](...)`), which leads on, not to this topic's answer.
_POINTING = re.compile(
    r"(?:please\s+)?(?:see|refer\s+to|read|visit|go\s+to|check\s+out|learn\s+more)\b"
    r"|for\s[^.\n]{0,80}?,\s*(?:please\s+)?(?:see|refer\s+to|read|visit)\b",
    re.IGNORECASE,
)
_INLINE = re.compile(r"(?<!!)\[[^\]\n]*\]\(\s*<?([^()\s<>]+)>?(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)")
_REFERENCE = re.compile(r"(?<![!\]])\[([^\]\n]+)\]\[([^\]\n]*)\]")
_DEFINITION = re.compile(r"^ {0,3}\[([^\]\n]+)\]:[ \t]*<?([^\s<>]+)>?", re.MULTILINE)
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:", re.IGNORECASE)
_PAGE_SUFFIX = re.compile(r"\.(?:md|mdx|markdown|html?|rst|adoc)$", re.IGNORECASE)


def points_elsewhere(text: str) -> bool:
    """Whether a chunk's text, its heading line aside, opens with a sentence sending the reader to another page."""
    return _POINTING.match(below_heading(text).lstrip()) is not None


def link_targets(text: str, definitions: str = "") -> list[str]:
    """The targets of `text`'s links, in order, each once: inline ones, and reference ones defined in `definitions`
    (the whole file's text, where a page keeps its link definitions at its end)."""
    found = [match.group(1) for match in _INLINE.finditer(text)]
    if "][" in text:
        defined = {_label(label): target for label, target in _DEFINITION.findall(definitions or text)}
        for match in _REFERENCE.finditer(text):
            label = _label(match.group(2) or match.group(1))
            if label in defined:
                found.append(defined[label])
    return list(dict.fromkeys(found))


def _label(label: str) -> str:
    return " ".join(label.split()).casefold()


def page_key(path: str) -> str:
    """The page a file is on a docs site, as a link names it: no extension, a folder's index page as the folder,
    lower case (Hugo lower-cases its URLs)."""
    key = _PAGE_SUFFIX.sub("", path).lower()
    head, _, last = key.rpartition("/")
    return head if last in INDEX_NAMES else key


class PageKeys:
    """The indexed files by the page each is, to resolve a link to the file it leads to."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._by_last: dict[str, list[tuple[str, str]]] = {}  # the key's last segment -> (key, path)
        for path in paths:
            key = page_key(path)
            self._by_last.setdefault(key.rpartition("/")[2], []).append((key, path))

    def resolve(self, target: str, source: str) -> str | None:
        """The indexed file the link `target` in the file `source` leads to, or None (module docstring)."""
        if target.startswith("//") or _SCHEME.match(target):
            return None
        target = target.split("#", 1)[0].split("?", 1)[0]
        if not target.strip("/."):
            return None
        wanted = page_key(target.strip("/")) if target.startswith("/") else None
        if wanted is None:
            folder = posixpath.dirname(source)
            own = page_key(source)  # Hugo resolves a page's relative links from the page's own URL
            relative = [posixpath.normpath(posixpath.join(base, target)) for base in (folder, own)]
            exact = [path for key in map(page_key, relative) for key_, path in self._named(key) if key_ == key]
            return self._nearest(exact, source)
        tail = "/" + wanted
        return self._nearest([path for key, path in self._named(wanted) if key == wanted or key.endswith(tail)], source)

    def _named(self, key: str) -> list[tuple[str, str]]:
        return self._by_last.get(key.rpartition("/")[2], [])

    @staticmethod
    def _nearest(paths: list[str], source: str) -> str | None:
        """Of the files a link may lead to, the one sharing the most leading folders with `source` (its version,
        its language); None on a tie or when the link leads back to `source`."""
        paths = [path for path in dict.fromkeys(paths) if path != source]
        if len(paths) < 2:
            return paths[0] if paths else None
        here = source.split("/")

        def shared(path: str) -> int:
            count = 0
            for mine, theirs in zip(here[:-1], path.split("/")[:-1], strict=False):
                if mine != theirs:
                    break
                count += 1
            return count

        ranked = sorted(paths, key=shared, reverse=True)
        return ranked[0] if shared(ranked[0]) > shared(ranked[1]) else None
