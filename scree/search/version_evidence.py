"""The evidence scree.content.versions decides from, gathered from a folder and its index (issue 32): the site's config
files (scree.content.site_config: read from disk, they are not indexed; a team's collection keeps its writer's) and
the indexed pages' text fingerprints (from the index). Shared by the search engine and `scree doctor`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from scree.content.docs_map import Copies, copies_of
from scree.content.languages import LanguageTrees, copy_of, language_folder
from scree.content.posts import Posts
from scree.content.site_config import SITE_CONFIG_KEY, SiteConfig, read_site_config
from scree.content.variants import Variants, find_variants
from scree.content.versions import VersionTrees, find_trees, fingerprint
from scree.search.post_evidence import site_posts
from scree.store import IndexReader


def site_config(store: IndexReader, root: Path, paths: Iterable[str]) -> SiteConfig:
    """The site's config files: read from `root`, or, where the index is a team's collection and `root` no checkout
    of it (IndexReader.shared), as the collection's writer read them from its checkout, with the current version
    tree the writer was told (issue 31)."""
    if store.shared:
        return SiteConfig.from_json(store.get_meta(SITE_CONFIG_KEY))
    return read_site_config(root, paths)


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

    def text_of(path: str) -> str | None:
        chunks = store.chunks_for_path(path)
        return "\n".join(chunk.text for chunk in chunks) if chunks else None

    config = site_config(store, root, paths)  # on a server without a checkout, the writer's current unless told one
    return find_version_trees(paths, config, text_of, posts, current)


def find_version_trees(
    paths: list[str], config: SiteConfig, text_of: Callable[[str], str | None], posts: Posts, current: str | None
) -> VersionTrees:
    """The version trees of `paths`, from the site's config and the pages' text as `text_of` gives it (their
    chunks' text; None: unknown), `current` (SCREE_CURRENT_VERSION) naming the current tree over the config."""

    def page_fingerprint(path: str) -> frozenset[int] | None:
        text = text_of(path)
        return fingerprint(text) if text is not None else None

    def excluded(folder: str) -> bool:
        return is_language_folder(folder) or posts.in_posts_folder(f"{folder}/")

    chosen = current if current is not None else config.current
    return find_trees(paths, config.hints(), page_fingerprint, chosen, excluded)


def copy_trees(store: IndexReader, root: Path, current: str | None = None, posts: Posts | None = None) -> LanguageTrees:
    """The index's translations and versions, as the search engine folds them."""
    return LanguageTrees.of(store.paths(), version_trees(store, root, current, posts))


def site_variants(paths: Iterable[str], trees: LanguageTrees) -> Variants:
    """The variant folders among `paths` (scree.content.variants): never a version tree or a language's tree."""
    roots = {tree.root for family in trees.versions.families for tree in family}
    return find_variants(sorted(paths), lambda folder: folder in roots or is_language_folder(folder))


def map_copies(root: Path, current: str | None) -> Callable[[IndexReader], Copies]:
    """Where an index's pages stand among its version trees, as the docs map keeps it (index.docs_map_file)."""
    return lambda store: copies_of(version_trees(store, root, current))
