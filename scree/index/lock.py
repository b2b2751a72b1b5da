"""writer.lock: one writer per index (R-W1): non-blocking acquire, the holder's pid, release, per platform; and the
retry every SCREE_LOCK_RETRY_SECONDS that serve and watch both take it with (R-P4)."""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from scree.errors import ScreeError
from scree.index.folder import symlink_refused
from scree.logs import get_logger
from scree.paths import FILE_MODE

if sys.platform == "win32":
    import msvcrt

    _BACKEND = "msvcrt"
else:
    try:
        import fcntl

        _BACKEND = "flock"
    except ImportError:  # WASI, Emscripten: no advisory locks at all
        _BACKEND = "none"

log = get_logger(__name__)

PID_READ_BYTES = 32  # a pid and a newline, with room to spare
# msvcrt locks byte ranges and a locked range cannot be read by others, so Windows locks one byte far past the pid.
WINDOWS_LOCK_OFFSET = 1 << 30
_BUSY_ERRNOS = frozenset({errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK, errno.EDEADLK})
# O_CLOEXEC (O_NOINHERIT on Windows): a child spawned after acquiring must not keep the lock alive (R-P2).
# O_NOFOLLOW (issue 34): the pid is written into writer.lock itself, never through a symlink into another file.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOINHERIT", 0)
_PROBE_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOINHERIT", 0)


def _try_lock(fd: int, *, shared: bool) -> bool:
    """Take the lock on `fd` without waiting: True when taken, False when someone else holds it."""
    try:
        if sys.platform == "win32":
            os.lseek(fd, WINDOWS_LOCK_OFFSET, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # no shared mode: the probe takes it exclusively for a moment
        elif _BACKEND == "flock":
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in _BUSY_ERRNOS:
            return False
        raise
    return True


def _unlock(fd: int) -> None:
    if sys.platform == "win32":
        os.lseek(fd, WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    elif _BACKEND == "flock":
        fcntl.flock(fd, fcntl.LOCK_UN)


def _parse_pid(data: bytes) -> int | None:
    text = data.decode("ascii", errors="replace").split("\n", 1)[0].strip()  # the pid's line; a role may follow
    if not text.isdigit():
        return None
    pid = int(text)
    return pid if pid > 0 else None


def _read_file(path: Path) -> bytes:
    try:
        fd = os.open(path, _PROBE_FLAGS)
    except OSError:
        return b""
    try:
        return os.read(fd, PID_READ_BYTES)
    except OSError:
        return b""
    finally:
        os.close(fd)


class WriterLock:
    """The lock on one index's writer.lock, held through an open file for as long as this object keeps it.

    flock locks belong to an open file description, so the lock ends when the holder exits or is killed, and a
    second WriterLock on the same path in the same process conflicts like another process would. The descriptor is
    close-on-exec; a child made by a bare fork() (no exec) would share it, so start writers with spawn/forkserver.
    Not thread-safe: one owner thread acquires and releases.
    """

    def __init__(self, path: Path, role: str | None = None) -> None:
        """`role`: a word written after the pid (`reindex` for the CLI's), so a blocked process can say who holds it."""
        self.path = path
        self.role = role
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        """Take the lock without waiting and write our pid into the file; False when another holder has it."""
        if self._fd is not None:
            return True
        if _BACKEND == "none":
            log.warning("no file locking on this platform; running without a writer lock", path=str(self.path))
        try:
            fd = os.open(self.path, _OPEN_FLAGS, FILE_MODE)
        except OSError as exc:
            if exc.errno == errno.ELOOP or self.path.is_symlink():
                raise ScreeError(symlink_refused(self.path)) from exc
            raise ScreeError(f"cannot open the lock file {self.path}: {exc.strerror}") from exc
        try:
            if not _try_lock(fd, shared=False):
                os.close(fd)
                return False
            self._tighten_mode(fd)
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, (f"{os.getpid()}\n" + (f"{self.role}\n" if self.role else "")).encode("ascii"))
        except OSError as exc:
            os.close(fd)
            raise ScreeError(f"cannot lock {self.path}: {exc.strerror}") from exc
        self._fd = fd
        return True

    def release(self) -> None:
        """Clear our pid from the file, unlock and close; safe to call when not held."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)  # while still locked, so nobody reads a pid that no longer holds it
            _unlock(fd)
        except OSError as exc:
            log.warning("could not unlock writer.lock cleanly; closing it", path=str(self.path), error=str(exc))
        finally:
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def fileno(self) -> int:
        """The locked descriptor, for a writer child that must share this lock on purpose; ValueError when the lock is
        not held, as a closed file's fileno() raises."""
        if self._fd is None:
            raise ValueError(f"{self.path} is not held")
        return self._fd

    def holder_pid(self) -> int | None:
        """The pid written in the lock file (None when empty or not a pid); readable without holding the lock."""
        return _parse_pid(_read_file(self.path))

    def holder_role(self) -> str | None:
        """The role the holder wrote after its pid (None for serve and watch, which write none)."""
        lines = _read_file(self.path).decode("ascii", errors="replace").split("\n")
        return lines[1].strip() or None if len(lines) > 1 else None

    def _tighten_mode(self, fd: int) -> None:
        """A lock file left by an older run or another umask gets mode 0600 (R-F2)."""
        if sys.platform == "win32":
            return
        try:
            os.fchmod(fd, FILE_MODE)
        except OSError as exc:
            log.warning("could not set lock file mode to 0600", path=str(self.path), error=str(exc))

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)  # the kernel drops the lock with the last descriptor


def lock_holder(path: Path) -> int | None:
    """The pid named in `path` when that lock is held right now by anyone, else None (also for a missing file).

    It probes with a shared lock on a new descriptor: a holder in this same process conflicts too (flock works per
    open file description), so our own pid comes back while we hold it. A try_acquire racing the probe may fail
    once; callers retry (R-P4), so that costs one retry interval and never a second writer.
    """
    if _BACKEND == "none":
        return None
    try:
        fd = os.open(path, _PROBE_FLAGS)
    except OSError:
        return None
    try:
        if _try_lock(fd, shared=True):
            _unlock(fd)
            return None
        os.lseek(fd, 0, os.SEEK_SET)
        return _parse_pid(os.read(fd, PID_READ_BYTES))
    except OSError:
        return None
    finally:
        os.close(fd)


SCREE_MARK = "scree"  # in the command line of every scree process: the console script, python -m scree, the container


def holder_problem(pid: int) -> str | None:
    """Why the pid a held writer.lock names cannot be the writer keeping the index (issue 34: a serve killed while its
    writer child lived on left its own pid in the file), or None when it runs and is scree. The lock file names the
    serve or watch; its writer child shares the lock but never writes the file."""
    import psutil

    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            raise psutil.NoSuchProcess(pid)
        command = " ".join(process.cmdline())
    except psutil.NoSuchProcess:
        return f"writer.lock is held, but pid {pid}, which it names, is not running (an orphaned writer?)"
    except psutil.Error:  # another user's process: it cannot be ours to judge
        return None
    if command and SCREE_MARK not in command.lower():
        return f"writer.lock is held, but pid {pid}, which it names, is not scree ({process.name()})"
    return None


LOCK_POLL_S = 0.1  # LockRetry.wait: a stop is noticed within this
_NOBODY_SEEN = -1  # LockRetry: no holder announced yet (None is a holder whose pid is unknown)


class IndexLock(Protocol):
    """The writer lock's small interface: writer.lock's WriterLock and PostgreSQL's PgWriterLock."""

    def try_acquire(self) -> bool: ...

    def release(self) -> None: ...

    @property
    def held(self) -> bool: ...

    def fileno(self) -> int: ...

    def holder_pid(self) -> int | None: ...

    def holder_role(self) -> str | None: ...


class LockRetry:
    """writer.lock taken as R-P4 says, for serve's supervisor and `scree watch` alike: one try every `retry_s`, with
    `prepare` (the index folder) before each, and `on_holder(pid)` once each time another holder is seen."""

    def __init__(
        self, lock: IndexLock, retry_s: float, prepare: Callable[[], None], on_holder: Callable[[int | None], None]
    ) -> None:
        self.lock = lock
        self._retry_s = retry_s
        self._prepare = prepare
        self._on_holder = on_holder
        self._next_try = 0.0
        self._announced: int | None = _NOBODY_SEEN

    def try_take(self, now: float) -> bool:
        """One try, when one is due at `now` (monotonic): True once the lock is taken. ScreeError when the index
        folder or the lock file cannot be made (the next try is still due `retry_s` later)."""
        if now < self._next_try:
            return False
        self._next_try = now + self._retry_s
        self._prepare()
        if self.lock.try_acquire():
            self._announced = _NOBODY_SEEN
            return True
        if getattr(self.lock, "refusal", None) is not None:  # never to be taken here: no holder to wait for
            return False
        pid = self.lock.holder_pid()
        if pid != self._announced:
            self._announced = pid
            self._on_holder(pid)
        return False

    def due_now(self) -> None:
        """The next try_take tries at once (a lost lock is tried for again without waiting)."""
        self._next_try = 0.0

    def wait(self, stopped: Callable[[], bool]) -> bool:
        """Try until the lock is taken (True) or `stopped()` (False). It polls and never waits on an event, so a
        signal handler that sets one cannot deadlock it."""
        while not stopped():
            if self.try_take(time.monotonic()):
                return True
            time.sleep(min(LOCK_POLL_S, max(0.0, self._next_try - time.monotonic())))
        return False
