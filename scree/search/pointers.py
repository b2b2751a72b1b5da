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
with the linking file is it, then the one in the fewest folders; a tie, an external URL or an anchor alone resolves
to nothing. A folder's index page is served at the folder's URL, so its relative links resolve from the folder's
parent too.

Docs also link a concept's name to the section that explains it, and the pages that say the name most often are
not that section: a section that REFERRERS files among the first REFERRAL_WINDOW candidates link to by the query's
own words is referred to (referral), and the engine has it stand before the first of them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass

from scree.content.chunking import HEADING_SEPARATOR, below_heading
from scree.content.posts import INDEX_NAMES

POINTER_WINDOW = 10  # the first candidates looked at for pointers: each looks up its file's link definitions
REFERRAL_WINDOW = 10  # the first candidates whose links are read for the section they refer the reader to
REFERRERS = 2  # files among them linking to one section by the query's words

# A sentence sending the reader to another page for this topic: "See [configure languages][].", "Please refer to
# [installing by binary](./install-binary.md).", "For the options, see [...]". Not a "Next Step" list of links
# (KubeVela's `* [Check Application State](...)`), which leads on, not to this topic's answer.
_POINTING = re.compile(
    r"(?:please\s+|you\s+(?:can|may|could|should)\s+(?:also\s+)?)?"
    r"(?:see|refer\s+to|read|visit|go\s+to|check\s+out|learn\s+more)\b"
    r"|for\s[^.\n]{0,80}?,\s*(?:please\s+)?(?:see|refer\s+to|read|visit)\b",
    re.IGNORECASE,
)
_INLINE = re.compile(r"(?<!!)\[([^\]\n]*)\]\(\s*<?([^()\s<>]+)>?(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)")
_REFERENCE = re.compile(r"(?<![!\]])\[([^\]\n]+)\]\[([^\]\n]*)\]")
_DEFINITION = re.compile(r"^ {0,3}\[([^\]\n]+)\]:[ \t]*<?([^\s<>]+)>?", re.MULTILINE)
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:", re.IGNORECASE)
_PAGE_SUFFIX = re.compile(r"\.(?:md|mdx|markdown|html?|rst|adoc)$", re.IGNORECASE)


def points_elsewhere(text: str) -> bool:
    """Whether a chunk's text, its heading line aside, opens with a sentence sending the reader to another page."""
    return _POINTING.match(below_heading(text).lstrip()) is not None


def links(text: str, definitions: str = "") -> list[tuple[str, str]]:
    """`text`'s links as (link text, target), in order: inline ones, then reference ones defined in `definitions`
    (the whole file's text, where a page keeps its link definitions at its end)."""
    found = [(match.group(1), match.group(2)) for match in _INLINE.finditer(text)]
    if "][" in text:
        defined = {_label(label): target for label, target in _DEFINITION.findall(definitions or text)}
        for match in _REFERENCE.finditer(text):
            label = _label(match.group(2) or match.group(1))
            if label in defined:
                found.append((match.group(1), defined[label]))
    return found


def link_targets(text: str, definitions: str = "") -> list[str]:
    """The targets of `text`'s links (links()), in order, each once."""
    return list(dict.fromkeys(target for _, target in links(text, definitions)))


def fragment(target: str) -> str:
    """The anchor a link's target names (`confirms#publisher-confirms` -> `publisher-confirms`), lower case; ""
    for none."""
    return target.partition("#")[2].strip().lower()


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
            # a folder's index page is served at the folder's URL (`/docs/publishers`): the browser resolves
            # `./confirms` from its parent
            bases = (folder, own, posixpath.dirname(own)) if own == folder.lower() else (folder, own)
            relative = [posixpath.normpath(posixpath.join(base, target)) for base in bases]
            exact = [path for key in map(page_key, relative) for key_, path in self._named(key) if key_ == key]
            return self._nearest(exact, source)
        tail = "/" + wanted
        return self._nearest([path for key, path in self._named(wanted) if key == wanted or key.endswith(tail)], source)

    def _named(self, key: str) -> list[tuple[str, str]]:
        return self._by_last.get(key.rpartition("/")[2], [])

    @staticmethod
    def _nearest(paths: list[str], source: str) -> str | None:
        """Of the files a link may lead to, the one sharing the most leading folders with `source` (its version,
        its language), then the one in the fewest folders (a site's default language beside its translations:
        Starlight's `docs/analyzer/x.mdx` beside `docs/fr/analyzer/x.mdx`); None on a tie or when the link leads back
        to `source`."""
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

        ranked = sorted(paths, key=lambda path: (-shared(path), path.count("/")))
        first, second = ranked[0], ranked[1]
        if shared(first) > shared(second) or first.count("/") < second.count("/"):
            return first
        return None


# An explicit id on a heading's line: Docusaurus, Hugo and Pandoc `{#id}`, kramdown and MkDocs `{: #id }`, `{ #id }`;
# an HTML anchor above it (`<a name="x"></a>`, `<a id="x">`).
_EXPLICIT_ID = re.compile(r"\{:?\s*#([\w.-]+)[^}]*\}|<a\s+(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
_NOT_SLUG = re.compile(r"[^\w\- ]+")


def slug(heading: str) -> str:
    """The anchor a docs site gives a heading with no id of its own (GitHub's and Docusaurus' rule): lower case,
    punctuation dropped, spaces as hyphens. `Publisher Confirms` -> `publisher-confirms`."""
    return _NOT_SLUG.sub("", heading.strip().lower()).replace(" ", "-")


def anchors(text: str, trail: str) -> frozenset[str]:
    """The anchors a link may name to land on a chunk: the ids written on its heading's line (`text`'s first line)
    and the slug of its own heading (the last part of its heading `trail`)."""
    first = text.lstrip().partition("\n")[0]
    written = {(match.group(1) or match.group(2)).lower() for match in _EXPLICIT_ID.finditer(first)}
    return frozenset({*written, slug(trail.rpartition(HEADING_SEPARATOR)[2])} - {""})


@dataclass(frozen=True)
class Reference:
    """A link in one of the first candidates, whose words are the query's."""

    position: int  # the linking chunk's place among the candidates
    source: str  # its file
    led: str  # the indexed file the link leads to
    anchor: str  # the section it names (fragment()), "" for none
    said: frozenset[str]  # the terms of the link's words


def same_page(path: str, other: str) -> bool:
    """Whether two files are one page of a site, in any version or language: the same last part of their page key
    (page_key), `versioned_docs/version-4.3/confirms.md` and `docs/confirms.md`."""
    return page_key(path).rpartition("/")[2] == page_key(other).rpartition("/")[2]


def referral(references: Iterable[Reference], least: int = REFERRERS) -> Reference | None:
    """The section that `least` or more files refer the reader to: RabbitMQ's publishers guide and its tutorials all
    link "[Publisher confirms](./confirms#publisher-confirms)", the reference page's section that "How do publisher
    confirms work?" asks for, which its own words rank below them. One page in any version or language (same_page)
    and one anchor are one section; of several, the one referred to first. Its first reference, or None."""
    by_section: dict[tuple[str, str], list[Reference]] = {}
    for reference in references:
        if reference.led != reference.source:
            key = (page_key(reference.led).rpartition("/")[2], reference.anchor)
            by_section.setdefault(key, []).append(reference)
    agreed = [group for group in by_section.values() if len({reference.source for reference in group}) >= least]
    return min(
        (min(group, key=lambda reference: reference.position) for group in agreed),
        default=None,
        key=lambda reference: reference.position,
    )
