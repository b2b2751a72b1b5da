"""The three MCP tools as plain methods over Settings and a WriterControl: search_docs, read_doc, reindex (SPEC §8)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scree.config import Settings
from scree.errors import PathRefusedError, ScreeError
from scree.paths import normalise_rel_path
from scree.protocol import WriterControl
from scree.replies import opted_out_refusal, status_note, stored_copy_note, tool_error
from scree.search import DEFAULT_K, DEFAULT_MODE
from scree.search.render import DOC_CAP_BYTES, RESPONSE_CAP_BYTES, ReplyCap, fit_text

if TYPE_CHECKING:  # imported for real on first use, so the handshake never waits for them (R-M8)
    from scree.content.files import FileContent
    from scree.content.ignore import IgnorePolicy
    from scree.search.engine import SearchEngine
    from scree.search.hits import SearchResult


@dataclass(frozen=True, slots=True)
class Reply:
    """One tool result: text for the model, and whether it reports a failure (MCP `isError`)."""

    text: str
    is_error: bool = False


def split_lines(text: str) -> list[str]:
    """Lines of LF-normalised text as R-C3 numbers them: a final newline does not start another line."""
    if not text:
        return []
    return text.removesuffix("\n").split("\n")


def select_range(total: int, start: int | None, end: int | None) -> tuple[int, int] | str:
    """R-M6: the 1-based inclusive range to show, or why the request is refused. `end` past the file is clamped."""
    if start is not None and start < 1 or end is not None and end < 1:
        return "error: start and end are 1-based line numbers (at least 1)"
    if start is not None and end is not None and start > end:
        return f"error: start ({start}) is after end ({end})"
    first = 1 if start is None else start
    last = total if end is None else min(end, total)
    if start is not None and first > total:
        return f"error: start ({start}) is past the last line ({total})"
    return first, last


@dataclass(frozen=True, slots=True)
class ToolCaps:
    """How large each tool's reply may be (R-M1, R-M6, R-M10); server.py declares them in tools/list."""

    search: ReplyCap
    doc: ReplyCap
    reindex: ReplyCap

    @classmethod
    def for_client(cls, client_tokens: int) -> ToolCaps:
        return cls(
            search=ReplyCap.for_client(RESPONSE_CAP_BYTES, client_tokens),
            doc=ReplyCap.for_client(DOC_CAP_BYTES, client_tokens),
            reindex=ReplyCap.for_client(RESPONSE_CAP_BYTES, client_tokens),
        )


class ReaderTools:
    """What the MCP tools do, apart from MCP; the store and the ignore rules are opened on first use."""

    def __init__(self, settings: Settings, control: WriterControl) -> None:
        self._settings = settings
        self._control = control
        self._lock = threading.Lock()  # the engine is made, replaced or closed by one thread at a time
        self._policy: IgnorePolicy | None = None
        self._engine: SearchEngine | None = None
        self.caps = ToolCaps.for_client(settings.client_tokens)

    def close(self) -> None:
        """Close the store and the engine (a database connection, the SQLite file): the session ended. A tool
        called after opens them again."""
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()

    # --- shared pieces ---

    def policy(self) -> IgnorePolicy:
        """The ignore rules, re-read when an ignore file changed since the last call (it counts at once), else the
        compiled ones kept (issue 13: big ignore files made every call slow).

        One object, shared with the search engine; its rules load lazily, only along the paths a call asks about.
        """
        if self._policy is None:
            from scree.content.ignore import IgnorePolicy

            self._policy = IgnorePolicy(self._settings.folder, self._settings.extensions)
        else:
            self._policy.refresh()
        return self._policy

    def _engine_now(self) -> SearchEngine | None:
        """The search engine over the index, opened read-only once it exists; None while there is no index."""
        if self._engine is not None and not self._engine.has_index:
            # opened while a writer was still creating the file (blank, no schema yet): look again each time
            self._engine.close()
            self._engine = None
        if self._engine is None:
            from scree.index.backend import index_present

            if not index_present(self._settings):
                return None
            from scree.embedders.idle import READER_IDLE_S
            from scree.index.backend import open_reader
            from scree.search.engine import SearchEngine

            settings = self._settings
            store = open_reader(settings)
            self._engine = SearchEngine.over(
                store, settings, self.policy(), release_idle_s=READER_IDLE_S, shared_model=True
            )
        else:
            self.policy()  # the engine's policy is this object: forget its cached decisions
        return self._engine

    def _read(self, rel: str) -> tuple[FileContent, str | None] | Reply:
        """The file's content, or the one-line refusal: missing, not a regular file, too large, no docs page (the
        table of formats says so of a license or a data file, issue 33), opted out. The lines are the file's own,
        raw, whatever its format; with a note when the text is a shared index's stored copy."""
        from scree.content.chunking import opted_out
        from scree.content.files import FileContent, read_markdown
        from scree.content.formats import NotDocs, detect

        content = read_markdown(self._settings.folder, rel, self._settings.max_file_bytes)
        stored = self._stored(rel, content)
        if stored is not None:
            return stored, stored_copy_note(
                stored.sha256, stored.mtime_ns, other_revision=isinstance(content, FileContent)
            )
        if content is None:
            return Reply(f'error: no such file: "{rel}"', is_error=True)
        if not isinstance(content, FileContent):
            return Reply(f'refused: "{rel}" cannot be read by scree ({content.reason})', is_error=True)
        row = detect(rel, content.text)
        if isinstance(row, NotDocs):
            return Reply(f'refused: "{rel}" cannot be read by scree ({row.reason})', is_error=True)
        if opted_out(content.text):
            return Reply(opted_out_refusal(rel), is_error=True)
        return content, None

    def _stored(self, rel: str, on_disk: object) -> FileContent | None:
        """issue 31: a shared index's copy of `rel` when this folder is no checkout of the collection and has no copy
        with the indexed hash: what the writer indexed, never a file it did not. A checkout reads its own files."""
        from scree.content.files import FileContent, decode_text
        from scree.index.backend import shared

        if not shared(self._settings):
            return None
        with self._lock:
            engine = self._engine_now()
        found = engine.stored_text(rel) if engine is not None else None
        if found is None or (isinstance(on_disk, FileContent) and on_disk.sha256 == found[0]):
            return None
        return FileContent(text=decode_text(found[1]), sha256=found[0], size=len(found[1]), mtime_ns=found[2])

    def _opted_out(self, rel: str) -> bool:
        from scree.content.chunking import opted_out
        from scree.content.files import FileContent, read_markdown

        content = read_markdown(self._settings.folder, rel, self._settings.max_file_bytes)
        return isinstance(content, FileContent) and opted_out(content.text)

    # --- the tools ---

    def search_docs(self, query: str, k: int = DEFAULT_K, mode: str = DEFAULT_MODE, path: str | None = None) -> Reply:
        """R-M1..R-M5: hits best first, the engine's notes, then the writer's status note as the last line. `k` and
        `mode` come checked against the tool's schema (server.py), which answers a bad one in a line of its own."""
        from scree.search.render import render_hits

        try:
            result = self._search(query, k, mode, path)
        except ScreeError as exc:
            note = status_note(self._control.status())
            return Reply(tool_error(exc) + (f"\n{note}" if note else ""), is_error=True)
        if result.dropped_paths:
            self._control.recheck(result.dropped_paths)
        note = status_note(self._control.status())
        notes = [*result.notes, note] if note else list(result.notes)
        return Reply(render_hits(result.hits, notes, self.caps.search))

    def _search(self, query: str, k: int, mode: str, path: str | None) -> SearchResult:
        from scree.search.hits import SearchResult

        with self._lock:
            engine = self._engine_now()
        if engine is None:
            return SearchResult(hits=[])
        return engine.search(query, k=k, mode=mode, path=path)  # it serialises its store; a closed one finds nothing

    def read_doc(self, path: str, start: int | None = None, end: int | None = None, part: int | None = None) -> Reply:
        """R-M6: one <doc> element for lines start..end of a file scree would index; with `part`, that part of line
        `start`, a line too long for one chunk cut as the chunker cuts it (issue 34: search hits name it)."""
        from scree.content.chunking import line_parts, normalise_newlines
        from scree.search.render import render_doc

        try:
            rel = normalise_rel_path(self.policy(), path)
        except PathRefusedError as exc:
            return Reply(tool_error(exc), is_error=True)
        read = self._read(rel)
        if isinstance(read, Reply):
            return read
        content, note = read
        if part is not None:
            if start is None or end not in (None, start):
                return Reply("error: part needs start, the line it is a part of, and no other end", is_error=True)
            end = start
        lines = split_lines(normalise_newlines(content.text))
        chosen = select_range(len(lines), start, end)
        if isinstance(chosen, str):
            return Reply(chosen, is_error=True)
        first, last = chosen
        if part is not None:
            parts = line_parts(lines[first - 1])
            if part > len(parts):
                return Reply(f"error: line {first} has {len(parts)} part{'s' * (len(parts) != 1)}", is_error=True)
            shown = render_doc(rel, [parts[part - 1]], first, first, self.caps.doc, note, (part, len(parts)))
            return Reply(shown)
        if first == last and len(parts := line_parts(lines[first - 1])) > 1:
            advice = f"[line {first} is long: read it in {len(parts)} parts, start={first} with part=1 to {len(parts)}]"
            note = f"{note}\n{advice}" if note else advice
        return Reply(render_doc(rel, lines[first - 1 : last], first, last, self.caps.doc, note))

    def reindex(self, path: str | None = None) -> Reply:
        """R-M7: the writer's one-line reply; an ignored path is refused before the writer is asked."""
        rel: str | None = None
        try:
            if path is not None:
                rel = normalise_rel_path(self.policy(), path)
                if self._opted_out(rel):
                    return Reply(opted_out_refusal(rel), is_error=True)
            return Reply(fit_text(self._control.request_reindex(rel), self.caps.reindex.size))
        except ScreeError as exc:
            return Reply(tool_error(exc), is_error=True)
