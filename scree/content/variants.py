"""Variants: sibling folders that mirror each other's pages without being versions or translations (pure).

A library documents each framework it supports in a folder of its own (TanStack Query's docs/framework/react/,
vue/, solid/, angular/... each with guides/suspense.md, guides/query-cancellation.md), a platform each OS (Capacitor's
android/ and ios/), a client each flavour (tRPC's client/react/ and client/vanilla/). A query that names one ("How do
I use suspense with useQuery in React?") asks for that variant's page, and the others say nearly the same in the same
words: with the offline model Solid's useQuery reference came first and React's suspense guide third. The engine
takes ranking.VARIANT_WEIGHT off the chunks of the named variant's siblings; pages outside them (docs/reference/
QueryClient.md for "the QueryClient constructor in React") keep their place, and a question no page of the named
variant answers still finds a sibling's.

The rule: two folders with one parent are variants of each other when at least MIN_SHARED pages sit at the same
relative path in both, and at least SHARE of the smaller folder's pages; never a folder named for a version or
saying old (scree.content.versions) or for a kind of page (SECTION_NAMES: api/ beside guides/), a version tree or
a language's tree (the caller's `excluded`). A query names a variant when it holds the words of the folder's name
in a run (`react-native`: react, native), compared as the keyword index stems words, where a query names one
(_naming).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from scree.content.chunking import HEADING_SEPARATOR
from scree.content.versions import mirrored_pairs, says_old, version_of_name
from scree.replies import first_few

MIN_SHARED = 3  # pages at one relative path in two sibling folders before they are variants
SHARE = 0.5  # ... and at least half the smaller folder's pages
MIN_WORD_CHARS = 2  # a folder name's words this long at least (`a/`, `b/` name nothing a query asks for)
DESCRIBED = 5  # groups named in `scree doctor`'s line
# Folders named for a kind of page are sections of one docs tree, not variants of what it documents: a site's api/
# and guides/ may each hold a page per topic (pydantic's docs/api/ and docs/concepts/ share 8 page names), and a
# query naming "the API" does not ask for the guides to go down.
SECTION_NAMES = frozenset(
    {
        "api", "apis", "reference", "references", "ref", "guide", "guides", "concepts", "concept", "tutorial",
        "tutorials", "docs", "doc", "documentation", "howto", "how-to", "howtos", "usage", "manual", "overview",
        "tasks", "topics", "learn", "cookbook", "recipes", "faq", "examples", "example", "samples", "blog", "news",
        "features", "advanced", "basics", "getting-started", "quickstart", "setup", "install", "configuration",
        "operations", "admin", "development", "contributing", "internals", "design", "architecture", "specs",
        # ... and for a stage of a tutorial's code, whose names are everyday words a query uses as such (Knative's
        # bookstore-sample-app/start/ and solution/: "How do I start the broker?" names no variant)
        "start", "starter", "begin", "solution", "solutions", "final", "finished", "complete", "before", "after",
        "initial", "base", "main", "default", "new", "old",
    }
)  # fmt: skip
_WORD = re.compile(r"[^\W_]+")
_ORDER = re.compile(r"^[0-9]+[._-](?=[^\W\d_])")  # `01.` of `01.nextjs`: the menu's order, not the name


@dataclass(frozen=True)
class Variants:
    """The variant folders found, each with the words its name is made of (lower case)."""

    folders: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def named(self, query: str, stems: Callable[[str], list[str]]) -> frozenset[str]:
        """The variant folders a query names: the words of a folder's name in a run, as the keyword index stems them
        (`stems`), where a query names a variant (_naming: "in React", "with a Vue app", "Solid's useQuery",
        "framework mode"), not where it uses the word as such (React Router's data/ mode and "while data loads")."""
        words = [word.casefold() for word in _WORD.findall(query)]
        keys = _stemmed(words, stems)
        out = set()
        for folder, name in self.folders.items():
            wanted = _stemmed(list(name), stems)
            for start in range(len(keys) - len(wanted) + 1):
                if keys[start : start + len(wanted)] == wanted and _naming(words, start, start + len(wanted)):
                    out.add(folder)
                    break
            else:
                if len(name) == 1 and _glued(words, name[0]):
                    out.add(folder)
        return frozenset(out)

    def others(self, named: Collection[str]) -> frozenset[str]:
        """The variant folders beside those `named` (of one parent) that are not named themselves."""
        parents = {folder.rpartition("/")[0] for folder in named}
        return frozenset(f for f in self.folders if f not in named and f.rpartition("/")[0] in parents)

    def page_of(self, path: str) -> str | None:
        """The page `path` is one variant of, the same for each variant's copy: its path with the variant folder's
        name left out (`docs/framework/*/guides/suspense.md`); None below no variant folder."""
        parts = path.split("/")
        for cut in range(len(parts) - 1, 0, -1):
            if "/".join(parts[:cut]) in self.folders:
                return "/".join([*parts[: cut - 1], "*", *parts[cut:]])
        return None

    def repeated(self, sections: Iterable[tuple[int, str, str]]) -> set[int]:
        """Of `sections` (id, path, heading trail), in rank order, those that are another copy of a page an earlier
        one in another file is a copy of: a variant of it (page_of: gRPC's Java and C++ basics tutorials' "Defining
        the service" after PHP's), or a section headed as it is in a file one path part away (copy_keys: RabbitMQ's
        `tutorial-seven-java.md` after `tutorial-seven-go.md`). A file's own sections are no copies of each other."""
        seen: dict[str, str] = {}  # key -> the file that first had it
        out: set[int] = set()
        for item, path, trail in sections:
            page = self.page_of(path)
            keys = copy_keys(path, trail) | ({page} if page is not None else set())
            if any(seen.get(key, path) != path for key in keys):
                out.add(item)
            for key in keys:
                seen.setdefault(key, path)
        return out

    def describe(self) -> str:
        """One line for `scree doctor`: the groups of variants, by the folder that holds them."""
        if not self.folders:
            return "none found (sibling folders that mirror each other's pages, not versions or translations)"
        groups: dict[str, list[str]] = {}
        for folder in sorted(self.folders):
            parent, _, name = folder.rpartition("/")
            groups.setdefault(parent, []).append(name)
        shown = [f"{parent or '.'}/{{{', '.join(names)}}}" for parent, names in groups.items()]
        return (
            f"{first_few(shown, DESCRIBED, '; ')}: a query naming one ranks the others' pages lower; "
            "naming none, it shows one variant of a page before the others"
        )


# A query names a variant with a word before it (after at most a determiner: "in a React app", "with the Vue
# adapter", "for Solid", "using Angular"), a word after it ("framework mode", "iOS app", "Vue Query"), or as an owner
# ("Solid's useQuery"). Measured with the offline model (TanStack Query's 19 questions, Capacitor's 6, React Router's
# 5): every question naming a framework or platform still names it; "How do I show pending UI while data loads?" no
# longer names React Router's data/ mode, whose penalty had taken the framework mode's page out of the first three.
NAMING_BEFORE = frozenset({"in", "with", "for", "on", "using", "use", "via", "under", "to", "from", "into"})
DETERMINERS = frozenset({"a", "an", "the", "my", "our", "your", "their", "its", "this", "that"})
NAMING_AFTER = frozenset(
    {"mode", "app", "apps", "application", "applications", "project", "projects", "version", "sdk", "adapter",
     "framework", "platform", "plugin", "query", "build", "builds", "integration", "package", "client", "bindings",
     "s"}  # "s": the owner's 's, "Solid's useQuery"
)  # fmt: skip


def _stemmed(words: list[str], stems: Callable[[str], list[str]]) -> list[str]:
    """Each word as the keyword index stems it: in one call for all (on PostgreSQL a round trip each), word by word
    where the index does not make one token of each."""
    keys = stems(" ".join(words))
    return keys if len(keys) == len(words) else [" ".join(stems(word)) for word in words]


def _glued(words: list[str], name: str) -> bool:
    """Whether the query writes a one-word folder name as words in a run where a query names a variant: "Next.js"
    (next, js) for Directus's `nextjs/`, "Svelte Kit" for `sveltekit/`."""
    for start in range(len(words)):
        glued = ""
        for end in range(start + 1, len(words) + 1):
            glued += words[end - 1]
            if not name.startswith(glued):
                break
            if glued == name and end - start > 1 and _naming(words, start, end):
                return True
    return False


def _naming(words: list[str], start: int, end: int) -> bool:
    """Whether the query's words from `start` to `end` stand where a query names a variant (NAMING_BEFORE,
    NAMING_AFTER)."""
    before = start - 1
    if before >= 0 and words[before] in DETERMINERS:
        before -= 1
    return (before >= 0 and words[before] in NAMING_BEFORE) or (end < len(words) and words[end] in NAMING_AFTER)


def holds(folders: Collection[str], path: str) -> bool:
    """Whether `path` is below one of `folders`."""
    return any(path.startswith(f"{folder}/") for folder in folders)


def find_variants(paths: Sequence[str], excluded: Callable[[str], bool]) -> Variants:
    """The variant folders among `paths` (the module's rule); `excluded` folders (version trees, languages' trees)
    never are one."""
    size: Counter[str] = Counter()
    for path in paths:
        parts = path.split("/")
        for cut in range(1, len(parts)):
            size["/".join(parts[:cut])] += 1
    found: dict[str, tuple[str, ...]] = {}
    for (a, b), shared in mirrored_pairs(paths, excluded).items():
        if not a or a.rpartition("/")[0] != b.rpartition("/")[0]:
            continue
        if shared < MIN_SHARED or shared < SHARE * min(size[a], size[b]):
            continue
        named = {folder: _words(folder) for folder in (a, b)}
        if all(named.values()) and not any(map(_not_a_variant, (a, b))) and not any(map(excluded, (a, b))):
            found.update(named)
    return Variants(found)


def _words(folder: str) -> tuple[str, ...]:
    """The words of a folder's name, lower case, without the number that orders it in the site's menu (Nuxt
    Content's and Docus's `01.nextjs/`, `02.nuxt/`: Directus's frameworks); () when one is too short to be asked
    for."""
    words = tuple(word.lower() for word in _WORD.findall(_ORDER.sub("", folder.rpartition("/")[2])))
    return words if words and all(len(word) >= MIN_WORD_CHARS for word in words) else ()


def _not_a_variant(folder: str) -> bool:
    """Named for a version, saying old, or named for a kind of page (SECTION_NAMES)."""
    name = folder.rpartition("/")[2]
    return version_of_name(name) is not None or says_old(folder) or name.lower().lstrip("_.") in SECTION_NAMES


# A qualifier in brackets in a title or heading: the language, platform or state of what it names, not what it names
# ("noExcessiveLinesPerFile (HTML)", RabbitMQ's "(using the Bunny Ruby Client)", "Hooks (experimental)").
_QUALIFIER = re.compile(r"\s*\([^()]*\)")


def without_qualifiers(text: str) -> str:
    """`text` without its qualifiers in brackets (_QUALIFIER)."""
    return _QUALIFIER.sub("", text)


def copy_keys(path: str, trail: str) -> set[str]:
    """Keys that a section shares with its copy in another variant of its page however the variants are named: its
    heading trail from the page's first section down (qualifiers in brackets and case aside), each with its path,
    one part at a time left out. Two sections share one when one's trail is the other's or leads to it and their
    paths differ in one part: the file (`tutorial-seven-go.md`, `tutorial-seven-java.md`) or a folder
    (`languages/php/`, `languages/java/`). None for a page's opening, headed by its title alone: two pages of one
    title may differ past it (Chaos Mesh's "Simulate Network Faults" in physical nodes and on Kubernetes)."""
    parts = [part for part in (without_qualifiers(part).casefold().strip() for part in trail.split(HEADING_SEPARATOR))]
    parts = list(filter(None, parts))
    trails = [HEADING_SEPARATOR.join(parts[:end]) for end in range(2, len(parts) + 1)]
    places = path.split("/")
    patterns = ["/".join([*places[:cut], "*", *places[cut + 1 :]]) for cut in range(len(places))]
    return {f"{pattern}\n{heading}" for pattern in patterns for heading in trails}
