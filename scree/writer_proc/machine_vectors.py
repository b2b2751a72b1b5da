"""What a sync asks of the machine-wide vector cache (issue 24), and the guarantee that the cache never breaks a sync.

A vector embedded once on this machine is not embedded again for the same model and embedded text, whichever index
asks: a worktree, a second checkout, `reindex -all`. The sync looks up the hashes its index lacks here before
embedding, and hands over what it embedded, written in batches of FLUSH_ROWS (one short transaction per batch, next
to the seconds an embedding batch takes). Every failure of the cache is the cache's own: a corrupt file is deleted and
made again, an unwritable folder or a second failure switches the cache off for this process, each with one log line,
and the sync goes on embedding as if there were no cache. Busy (another writer's transaction past the busy timeout)
skips one lookup or one batch, silently: the vectors are embedded or cached another time.

Issue 34: a vector the cache hands out has passed its checks (store/vector_cache_policy.vector_fault: its checksum,
finite values, unit length); a row that failed is deleted with the next batch and its text embedded again, as if
missing, with one log line per sync (at close). Another version's cache, or a symlink where the file should be, is
bypassed and left as it is, never deleted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import apsw

from scree.config import BYTES_PER_MB, Settings
from scree.content.chunking import EMBED_FORMAT
from scree.embedders.base import Embedder
from scree.embedders.kinds import worth_caching
from scree.logs import get_logger
from scree.store.vector_cache import NotACacheError, NotOursError, VectorCacheFile, remove_cache_files
from scree.store.vector_cache_policy import bound_bytes, keys_for, space_of

log = get_logger(__name__)
T = TypeVar("T")

FLUSH_ROWS = 256  # vectors written per transaction
_DAMAGED = (apsw.CorruptError, apsw.NotADBError, NotACacheError, apsw.SQLError)  # rebuilt once, then bypassed


class MachineVectors:
    """The cache as one sync's Syncer sees it: get(hashes), remember(vectors), touch(hashes), flush(), close().

    The file is opened on first use, so a sync that never misses its own index never opens it."""

    def __init__(self, path: Path, bound: int, space: bytes, dims: int) -> None:
        self.path = path
        self._bound = bound
        self._space = space
        self._vector_bytes = dims * 4
        self._file: VectorCacheFile | None = None
        self._off = False
        self._rebuilt = False
        self._waiting: dict[bytes, bytes] = {}  # key -> vector, not yet written
        self._touched: set[bytes] = set()  # keys found here, whose last use is not yet written
        self._bad: set[bytes] = set()  # keys whose rows failed their check, not yet deleted
        self._bad_seen: dict[str, int] = {}  # why rows failed since the last close, for its one log line

    @classmethod
    def for_sync(cls, settings: Settings, embedder: Embedder) -> MachineVectors | None:
        """The cache for this embedder, or None when SCREE_VECTOR_CACHE_MB is 0 or embedding costs nothing."""
        bound = bound_bytes(settings.vector_cache_mb, BYTES_PER_MB)
        if bound == 0 or not worth_caching(embedder) or embedder.dims <= 0:
            return None
        space = space_of(embedder.identity, embedder.dims, EMBED_FORMAT)
        return cls(settings.vector_cache_path, bound, space, embedder.dims)

    def get(self, text_hashes: Sequence[str]) -> dict[str, bytes]:
        """Text hash -> vector for those the cache holds; {} when it is off or busy."""
        if not text_hashes:
            return {}
        keys = keys_for(self._space, text_hashes)
        answer = self._guarded(lambda cache: cache.get(list(keys), self._vector_bytes))
        if answer is None:
            return {}
        found, bad = answer
        for reason in bad.values():
            self._bad_seen[reason] = self._bad_seen.get(reason, 0) + 1
        self._bad.update(bad)
        self._touched.update(found)
        return {keys[key]: vector for key, vector in found.items()}

    def remember(self, pairs: Iterable[tuple[str, bytes]]) -> None:
        """Vectors just embedded, written with the next batch."""
        if self._off:
            return
        vectors = dict(pairs)
        for key, text_hash in keys_for(self._space, vectors).items():
            self._waiting[key] = vectors[text_hash]
        if len(self._waiting) + len(self._touched) + len(self._bad) >= FLUSH_ROWS:
            self.flush()

    def flush(self) -> None:
        """Delete the rows that failed their check, write what is waiting and the last-use times of what was found,
        in one transaction."""
        if not self._waiting and not self._touched and not self._bad:
            return
        items, touched, drop = list(self._waiting.items()), list(self._touched), list(self._bad)
        self._waiting.clear()
        self._touched.clear()
        self._bad.clear()
        self._guarded(lambda cache: cache.put(items, touched, self._bound, drop))

    def close(self) -> None:
        self.flush()
        if self._bad_seen:
            bad = sum(self._bad_seen.values())
            reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(self._bad_seen.items()))
            log.warning(f"{bad} bad vectors in the vector cache ({reasons}): dropped and embedded again")
            self._bad_seen.clear()
        if self._file is not None:
            self._file.close()
            self._file = None

    def _guarded(self, work: Callable[[VectorCacheFile], T]) -> T | None:
        """Run `work` on the open cache; None when it is off, busy or just failed (then rebuilt or switched off)."""
        if self._off:
            return None
        try:
            if self._file is None:
                self._file = VectorCacheFile.open(self.path)
            return work(self._file)
        except apsw.BusyError:
            log.debug("vector cache busy; this batch skips it", path=str(self.path))
            return None
        except NotOursError as exc:  # another version's file, or a symlink: bypassed, never deleted
            self._drop()
            self._switch_off(exc)
            return None
        except _DAMAGED as exc:
            self._drop()
            if self._rebuilt:
                self._switch_off(exc)
                return None
            self._rebuilt = True
            try:
                remove_cache_files(self.path)
                self._file = VectorCacheFile.open(self.path)
            except (apsw.Error, NotACacheError, OSError) as again:
                self._drop()
                self._switch_off(again)
                return None
            log.warning("vector cache was unreadable; made it again, empty", path=str(self.path), reason=str(exc))
            return None
        except (apsw.Error, OSError) as exc:
            self._drop()
            self._switch_off(exc)
            return None

    def _drop(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except apsw.Error:
                pass
            self._file = None

    def _switch_off(self, exc: BaseException) -> None:
        self._off = True
        self._waiting.clear()
        self._touched.clear()
        self._bad.clear()
        log.warning(
            "vector cache bypassed; vectors are embedded as if there were none",
            path=str(self.path),
            reason=str(exc) or type(exc).__name__,
        )
