"""`scree doctor` (R-L2): versions, sqlite-vec, the index, the key's presence (never its value), the lock, the cost."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from importlib import metadata
from typing import TYPE_CHECKING

from scree.config import BYTES_PER_MB, Settings
from scree.content.files import FileContent, read_markdown
from scree.content.formats import NotDocs, detect, rows_for
from scree.content.ignore import IgnorePolicy
from scree.content.plaintext import NOT_DOCS_RULE
from scree.embedders.base import KEYWORD_ONLY
from scree.embedders.kinds import Check, chosen, expected_identity
from scree.errors import ScreeError
from scree.index.folder import ROOT_NAME
from scree.paths import DIR_MODE, FILE_MODE
from scree.replies import formats_note, left_out_note, plural
from scree.writer_proc.sync import markdown_bytes

if TYPE_CHECKING:
    from scree.store import IndexReader

MIN_PYTHON = (3, 11)
DEPENDENCIES = ("apsw", "sqlite-vec", "mcp", "requests", "structlog", "psutil", "tokenizers", "numpy")
TOKENS_PER_BYTE = 0.25  # R-L2: bytes / 4 tokens, an upper bound
DOLLARS_PER_MILLION_TOKENS = 0.02
KEYWORD_ONLY_WHY = "built with no API key and no offline model"  # R-E6's degraded mode


def cost_estimate(total_bytes: int) -> float:
    return total_bytes * TOKENS_PER_BYTE / 1e6 * DOLLARS_PER_MILLION_TOKENS


class _Report:
    def __init__(self, emit: Callable[[str], None]) -> None:
        self.emit = emit
        self.failures = 0

    def ok(self, what: str, detail: str) -> None:
        self.emit(f"ok    {what}: {detail}")

    def warn(self, what: str, detail: str) -> None:
        self.emit(f"warn  {what}: {detail}")

    def fail(self, what: str, detail: str) -> None:
        self.failures += 1
        self.emit(f"FAIL  {what}: {detail}")

    def check(self, check: Check) -> None:
        """A line an embedder kind's row asked for (scree.embedders.kinds)."""
        {"ok": self.ok, "warn": self.warn, "fail": self.fail}[check.level](check.what, check.detail)


def _check_runtime(report: _Report) -> None:
    version = ".".join(map(str, sys.version_info[:3]))
    (report.ok if sys.version_info[:2] >= MIN_PYTHON else report.fail)("python", version)
    for name in DEPENDENCIES:
        try:
            report.ok(name, metadata.version(name))
        except metadata.PackageNotFoundError:
            report.fail(name, "not installed")
    try:
        import apsw

        from scree.store.extension import vec0_path

        conn = apsw.Connection(":memory:")
        conn.enable_load_extension(True)
        conn.load_extension(vec0_path())
        vec_version = conn.execute("select vec_version()").fetchall()[0][0]
        report.ok("sqlite-vec loads", f"{vec_version} on SQLite {apsw.sqlite_lib_version()}")
        conn.close()
    except Exception as exc:  # noqa: BLE001 - any failure to load is what doctor reports
        report.fail("sqlite-vec loads", str(exc))


def _check_embedder(settings: Settings, report: _Report) -> bool:
    """The key's presence and the embedder; returns whether a sync would now embed with vectors."""
    kind = chosen(settings)
    identity, dims = kind.identity(settings)
    if settings.api_key:
        source = "OPENROUTER_API_KEY" if os.environ.get("OPENROUTER_API_KEY") else "SCREE_API_KEY"
        report.ok("API key", f"set in {source} (value not shown)")
    else:
        report.ok("API key", "not set: the offline model is used")
    report.ok("embedder", f"{identity} ({dims} dimensions)")
    checks = kind.checks(settings)  # the kind's own: the offline model's files and precision
    for check in checks:
        report.check(check)
    return all(check.level == "ok" for check in checks)


def _keyword_only_advice(identity: str, semantic: bool) -> str:
    """What to do about a keyword-only index: model_policy.prepare rebuilds it with vectors at the next sync, so a plain
    reindex is enough once an embedder exists (no -all)."""
    if semantic:
        return f'keyword search only: run "scree reindex" to add vectors with {identity} (serve or watch does it too)'
    return (
        f'keyword search only ({KEYWORD_ONLY_WHY}): run "scree model install" or set OPENROUTER_API_KEY, '
        'then "scree reindex"'
    )


def _check_root_file(settings: Settings, report: _Report) -> None:
    """R-F2: `root` names the folder the index is for (issue 13: doctor passed with it missing or wrong)."""
    root_file = settings.index_dir / ROOT_NAME
    want = str(settings.folder.resolve())
    try:
        named = root_file.read_text(encoding="utf-8", errors="replace").strip()
    except FileNotFoundError:
        report.fail("index root file", f'{root_file} is missing: run "scree reindex" to write it')
        return
    except OSError as exc:
        report.fail("index root file", f"cannot read {root_file}: {exc.strerror or exc}")
        return
    if named != want:
        report.fail("index root file", f"{root_file} names {named!r}, not {want}")
    else:
        report.ok("index root file", want)


def _check_database(settings: Settings, report: _Report) -> bool:
    """issue 31: the PostgreSQL server behind SCREE_DATABASE_URL; False when the index cannot be read there."""
    from scree.index.collection import collection_name
    from scree.store.pg_health import MIN_SERVER_VERSION, MIN_VECTOR_VERSION, database_facts

    assert settings.database_url is not None
    name = collection_name(settings)
    facts = database_facts(settings.database_url, name)
    if facts.problem is not None:
        report.fail("database", facts.problem)
        return False
    version_ok = facts.server_num >= MIN_SERVER_VERSION
    (report.ok if version_ok else report.fail)(
        "database server", f"PostgreSQL {facts.server} (scree needs 15 or later)"
    )
    if facts.vector is None:
        how = "CREATE EXTENSION vector as a superuser" if facts.vector_available else "install pgvector on the server"
        (report.warn if facts.can_write else report.fail)("pgvector", f"not installed in this database: {how}")
    else:
        major_minor = tuple(int(part) for part in facts.vector.split(".")[:2] if part.isdigit())
        ok = major_minor >= MIN_VECTOR_VERSION
        (report.ok if ok else report.fail)("pgvector", f"{facts.vector} (scree needs 0.7 or later)")
    rights = "read and write (a writer)" if facts.can_write else "read only (search, never index)"
    if not facts.can_read and facts.schema:
        report.fail("database privileges", "this role cannot read scree's tables: GRANT SELECT to it")
        return False
    report.ok("database privileges", rights)
    if facts.schema == 0 or not facts.collection:
        report.warn("collection", f'{name} holds no index yet: run "scree reindex" or "scree watch" with a writer role')
        return False
    report.ok("collection", f"{name}: {facts.files} files, {facts.chunks} chunks")
    hnsw = f"; its HNSW index {facts.hnsw_bytes / 1e6:.1f} MB" if facts.hnsw_bytes is not None else "; exact search"
    report.ok("database size", f"{facts.table_bytes / 1e6:.1f} MB of scree tables (all collections){hnsw}")
    return True


def _check_index(settings: Settings, report: _Report, semantic: bool) -> None:

    if settings.database_url is not None:
        if _check_database(settings, report):
            _check_index_contents(settings, report, semantic)
        return
    if not settings.db_path.exists():
        report.warn("index", f'none yet at {settings.db_path}: run "scree reindex"')
        return
    if not settings.custom_db:  # a --db file's folder is the user's own
        mode = stat.S_IMODE(settings.index_dir.stat().st_mode)
        (report.ok if mode == DIR_MODE else report.fail)("index folder mode", f"{mode:o} (want {DIR_MODE:o})")
        _check_root_file(settings, report)
    mode = stat.S_IMODE(settings.db_path.stat().st_mode)
    (report.ok if mode == FILE_MODE else report.fail)("index file mode", f"{mode:o} (want {FILE_MODE:o})")
    _check_index_contents(settings, report, semantic)


def _check_index_contents(settings: Settings, report: _Report, semantic: bool) -> None:
    """Integrity, model and size, read through the backend's reader."""
    from scree.index.backend import open_reader

    try:
        with open_reader(settings) as store:
            integrity = store.integrity_check()
            (report.ok if integrity == "ok" else report.fail)("index integrity", integrity)
            report.ok("index folder", str(settings.folder))
            recorded = store.model()
            identity, dims = expected_identity(settings)
            if recorded is None:
                report.warn("index model", "none recorded yet")
            elif recorded[0] == KEYWORD_ONLY:  # a degraded mode (R-E6): keyword search works, nothing is broken
                report.warn("index model", _keyword_only_advice(identity, semantic))
            elif recorded != (identity, dims):
                report.fail("index model", f'{recorded[0]} but settings select {identity}: run "scree reindex --all"')
            else:
                report.ok("index model", f"{recorded[0]} ({recorded[1]} dimensions)")
            files, chunks = store.counts()
            report.ok("index size", f"{files} files, {chunks} chunks")
            _check_copies(store, settings, report)
    except ScreeError as exc:
        report.fail("index", str(exc))


CACHE_SAMPLE_ROWS = 2000  # rows of the vector cache checked: a few milliseconds, and a damaged stretch shows up


def _check_vector_cache(settings: Settings, report: _Report) -> None:
    """Issue 34: a sample of the machine-wide vector cache's rows checked as a sync checks each one it uses (checksum,
    finite, unit length); a bad row is harmless (dropped and embedded again when a sync meets it) but is named."""
    import apsw

    from scree.store.vector_cache import NotACacheError, NotOursError, VectorCacheFile

    path = settings.vector_cache_path
    if settings.vector_cache_mb <= 0:
        report.ok("vector cache", f"off (SCREE_VECTOR_CACHE_MB=0; {path})")
        return
    if not path.exists() and not path.is_symlink():
        report.ok("vector cache", f"none yet at {path}")
        return
    try:
        cache = VectorCacheFile.open_readonly(path)
    except (NotOursError, NotACacheError) as exc:
        report.warn("vector cache", f"not used: {exc}")
        return
    except (apsw.Error, OSError) as exc:
        report.warn("vector cache", f"unreadable ({exc}): the next sync makes it again")
        return
    try:
        rows, checked, faults = cache.sample(CACHE_SAMPLE_ROWS)
    except apsw.Error as exc:
        report.warn("vector cache", f"unreadable ({exc}): the next sync makes it again")
        return
    finally:
        cache.close()
    if faults:
        reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(faults.items()))
        report.warn(
            "vector cache",
            f"{sum(faults.values())} bad of {checked} rows checked ({reasons}) in {path}: each is dropped and embedded "
            'again when a sync meets it; "scree index remove --vectors" clears the cache',
        )
    else:
        report.ok("vector cache", f"{rows} vectors, {checked} checked, none bad ({path})")


def count_formats(policy: IgnorePolicy, max_file_bytes: int) -> tuple[dict[str, int], int]:
    """Issue 33: the indexable files by the format they are read as, and how many are no docs (a data .txt). An
    ending one row claims is counted by its name; a shared one (.txt: rst or plain text) by reading the file."""
    counts: dict[str, int] = {}
    not_docs = 0
    for path in policy.walk():
        rows = rows_for(path)
        found = rows[0] if len(rows) == 1 else None
        if found is None:
            content = read_markdown(policy.root, path, max_file_bytes)
            if not isinstance(content, FileContent):
                continue
            detected = detect(path, content.text)
            if isinstance(detected, NotDocs):
                not_docs += 1
                continue
            found = detected
        counts[found.name] = counts.get(found.name, 0) + 1
    return counts, not_docs


def _markdown_only(counts: dict[str, int]) -> str:
    markdown = counts.get("markdown", 0)
    return f"by format: {markdown} markdown" if markdown else "no docs files"


OVERRIDE_ADVICE = (
    "SCREE_CURRENT_VERSION=<folder or version>[,<another family's>] names the current tree; a .screeignore line "
    "leaves a tree out"
)


def _check_copies(store: IndexReader, settings: Settings, report: _Report) -> None:
    """Issue 32: the version trees and translations search folds, and why, so a user can see and override them."""
    from scree.content.docs_map import title_of
    from scree.content.fixtures import describe as describe_test_pages
    from scree.content.languages import ORIGINAL
    from scree.content.posts import describe_changelogs
    from scree.content.versions import named_current, overrides
    from scree.search.post_evidence import site_posts
    from scree.search.version_evidence import copy_trees, site_variants

    posts = site_posts(store, settings.folder)  # read once: the version trees leave posts folders out
    trees = copy_trees(store, settings.folder, settings.current_version, posts)
    families = trees.versions.families
    for line in trees.versions.describe():
        report.ok("version trees", line)
    if families:
        report.ok("version trees", f"to change: {OVERRIDE_ADVICE}")
    else:
        report.ok("version trees", "none found (folders that mirror each other's pages, with version names or text)")
    for wanted in overrides(settings.current_version):
        if not any(named_current(wanted, [tree.root for tree in family]) for family in families):
            report.warn("version trees", f"SCREE_CURRENT_VERSION names {wanted}, which is no version tree found")
    if any(language != ORIGINAL for language in trees.languages):
        names = ", ".join(
            f"{language or 'untagged'} ({plural(count, 'shared page')})" for language, count in trees.counts
        )
        main = trees.main
        report.ok(
            "translations", f"main language {'untagged (the original)' if main == ORIGINAL else main}; trees: {names}"
        )
    else:
        report.ok("translations", "none found")
    paths = sorted(store.paths())
    report.ok("variants", site_variants(paths, trees).describe())
    report.ok("posts", posts.describe())
    headings = {path: [chunk.heading for chunk in store.chunks_for_path(path)] for path in paths[:DOCTOR_PAGES_CHECKED]}
    report.ok("changelogs", describe_changelogs(paths, {path: title_of(trails) for path, trails in headings.items()}))
    report.ok("test pages", describe_test_pages(paths))
    _check_page_shapes(headings, len(paths), report)


DOCTOR_PAGES_CHECKED = 5000  # pages read for their headings (by path): a bound on a large index's cost


def _check_page_shapes(headings: dict[str, list[str]], pages: int, report: _Report) -> None:
    """Issue 32: the pages of questions (FAQs) search ranks one place after a page the query's words found, and the
    design proposals it ranks after docs pages of similar rank, each told by its `headings` (of the pages read, of
    `pages` in all)."""
    from scree.search import faq, proposals

    questions = {path: faq.question_count(trails) for path, trails in headings.items() if faq.is_question_page(trails)}
    designs = [path for path, trails in headings.items() if proposals.is_proposal(trails)]
    report.ok("pages of questions", faq.describe(questions, len(headings), pages))
    report.ok("design proposals", proposals.describe(designs, len(headings), pages))


def run_doctor(settings: Settings, emit: Callable[[str], None]) -> int:
    """Print one line per check; exit status 1 when any check failed."""
    report = _Report(emit)
    _check_runtime(report)
    semantic = _check_embedder(settings, report)
    _check_index(settings, report, semantic)
    _check_vector_cache(settings, report)
    from scree.index.backend import holder as lock_holder_of
    from scree.index.backend import holder_where

    holder = lock_holder_of(settings)
    where = holder_where(settings) if holder else None
    report.ok("writer lock", (f"held by pid {holder}" + (f" on {where}" if where else "")) if holder else "free")
    policy = IgnorePolicy(settings.folder, settings.extensions)
    total = markdown_bytes(policy)
    report.ok(
        "cost estimate",
        f"{total / BYTES_PER_MB:.2f} MB of docs, at most ${cost_estimate(total):.4f} to embed with the API "
        f"(bytes / 4 tokens at ${DOLLARS_PER_MILLION_TOKENS} per million tokens)",
    )
    counts, not_docs = count_formats(policy, settings.max_file_bytes)
    report.ok("formats", formats_note(counts, not_docs) or _markdown_only(counts))  # issue 33
    report.ok("plain text", NOT_DOCS_RULE)
    left_out = left_out_note(policy.left_out)  # issue 25: say what SCREE_EXTENSIONS would add, not nothing
    report.ok("other doc files", left_out if left_out is not None else "none left out")
    emit("all checks passed" if report.failures == 0 else f"{report.failures} check(s) failed")
    return 0 if report.failures == 0 else 1
