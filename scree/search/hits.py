"""The records a search produces: its hits and the result with its notes. Pure data, shared by CLI and MCP."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Hit:
    """One search hit; `start`/`end` are None when the chunk's text is gone from its file (stale)."""

    path: str
    start: int | None
    end: int | None
    heading: str
    score: float
    text: str
    stale: bool = False
    also: tuple[str, ...] = ()  # "path:a-b" of identical chunks elsewhere (R-M4)
    version: str | None = None  # a version other than the current one: "3.4 (old)", "next (unreleased)" (issue 32)
    # issue 34: (n, of) for a part of a line too long for one chunk (chunking.line_parts), None for whole lines
    part: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: list[Hit]
    notes: list[str] = field(default_factory=list)
    dropped_paths: tuple[str, ...] = ()  # files the re-check dropped; the writer should re-check them (R-M2)

    @property
    def note(self) -> str | None:
        return " ".join(self.notes) if self.notes else None
