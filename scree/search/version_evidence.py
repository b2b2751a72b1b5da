"""The evidence scree.content.versions decides from, gathered from a folder and its index (issue 32): the site's config
files (read from disk: they are not indexed) and the indexed pages' text fingerprints (from the index). Shared by the
search engine and `scree doctor`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from scree.content.languages import LanguageTrees, copy_of, language_folder
from scree.content.posts import Posts
from scree.content.versions import (
    CONFIG_NAMES,
    HUGO_CONFIG_DIR,
    HUGO_CONFIG_SUFFIXES,
    INSTANCE_VERSIONS,
    JEKYLL_CONFIG,
    MAX_HUGO_CONFIG_FILES,
    Hint,
    VersionTrees,
    find_trees,
    fingerprint,
    is_jekyll_config,
    is_versions_file,
    parse_hints,
    parse_hugo_config_dir,
)
from scree.search.post_evidence import site_posts
from scree.store import IndexReader

CONFIG_DEPTH = 2  # config files are looked for in the root and in folders this deep that hold indexed pages
MAX_CONFIG_BYTES = 256 * 1024


def config_folders(paths: Iterable[str]) -> set[str]:
    """The root and the folders up to CONFIG_DEPTH deep that hold indexed pages, where a site keeps its config; and
    each Antora component version's folder, however deep (the one above `modules/<module>/pages/`, where its
    antora.yml is)."""
    folders = {""}
    for path in paths:
        parts = path.split("/")[:-1]
        for depth in range(1, min(CONFIG_DEPTH, len(parts)) + 1):
            folders.add("/".join(parts[:depth]))
        head, found, tail = path.partition("/modules/")
        if found and "/pages/" in tail:
            folders.add(head)
    return folders


def read_hints(root: Path, paths: Iterable[str]) -> list[Hint]:
    """What the site's config files say about its versions, read from `root` (unreadable files say nothing)."""
    hints: list[Hint] = []
    for folder in sorted(config_folders(paths)):
        texts: dict[str, str] = {}
        base = root / folder if folder else root
        try:  # a Docusaurus docs plugin instance's <id>_versions.json, Jekyll's _config*.yml, beside the site's config
            instances = sorted(file.name for file in base.glob(f"*{INSTANCE_VERSIONS}") if is_versions_file(file.name))
            instances += sorted(file.name for file in base.glob(f"{JEKYLL_CONFIG}*") if is_jekyll_config(file.name))
        except OSError:
            instances = []
        for name in [*sorted(CONFIG_NAMES), *instances]:
            if (text := _config_text(base / name)) is not None:
                texts[name] = text
        for name, text in texts.items():
            siblings = {other: body for other, body in texts.items() if other != name}
            hints += parse_hints(f"{folder}/{name}" if folder else name, text, siblings)
        for name, text in _hugo_config_dir(base):
            hints += parse_hugo_config_dir("/".join(filter(None, (folder, HUGO_CONFIG_DIR, name))), folder, text)
    return hints


def _hugo_config_dir(site: Path) -> list[tuple[str, str]]:
    """(name, text) of the files of a Hugo site's config directory (HUGO_CONFIG_DIR), if it has one."""
    try:
        files = sorted(file for file in (site / HUGO_CONFIG_DIR).iterdir() if file.name.endswith(HUGO_CONFIG_SUFFIXES))[
            :MAX_HUGO_CONFIG_FILES
        ]
    except OSError:  # none, or unreadable: it says nothing
        return []
    return [(file.name, text) for file in files if (text := _config_text(file)) is not None]


def _config_text(file: Path) -> str | None:
    """A config file's text; None where it is missing, unreadable or over MAX_CONFIG_BYTES."""
    try:
        if file.is_file() and file.stat().st_size <= MAX_CONFIG_BYTES:
            return file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        pass
    return None


def is_language_folder(folder: str) -> bool:
    """A folder that is a language's tree (`docs/de`, `content/zh`, a Docusaurus i18n folder): translations are not
    versions (scree.content.languages folds them)."""
    found = copy_of(folder + "/page.md")
    return found is not None and found.language != "" and (found.structural or language_folder(folder))


def version_trees(
    store: IndexReader, root: Path, current: str | None = None, posts: Posts | None = None
) -> VersionTrees:
    """The index's version trees: its paths, the site's config and its pages' text (issue 32). A language's tree or
    a posts folder (scree.content.posts: a blog's year folders share the slugs of yearly posts; `posts` when the
    caller has them) is never one."""
    paths = list(store.paths())
    posts = posts if posts is not None else site_posts(store, root)

    def page_fingerprint(path: str) -> frozenset[int] | None:
        chunks = store.chunks_for_path(path)
        return fingerprint("\n".join(chunk.text for chunk in chunks)) if chunks else None

    def excluded(folder: str) -> bool:
        return is_language_folder(folder) or posts.in_posts_folder(f"{folder}/")

    return find_trees(paths, read_hints(root, paths), page_fingerprint, current, excluded)


def copy_trees(store: IndexReader, root: Path, current: str | None = None, posts: Posts | None = None) -> LanguageTrees:
    """The index's translations and versions, as the search engine folds them."""
    return LanguageTrees.of(store.paths(), version_trees(store, root, current, posts))
