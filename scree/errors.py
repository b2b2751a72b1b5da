"""The error hierarchy: each class says when it is raised; the CLI turns any of them into one line and an exit code."""

from __future__ import annotations


class ScreeError(Exception):
    """Base of every error scree reports to a user as one line (exit code 1 unless a subclass says otherwise)."""

    exit_code = 1


class UsageError(ScreeError):
    """The command line or a setting is malformed (exit code 2)."""

    exit_code = 2


class ConfigError(ScreeError):
    """A setting, settings file or environment variable has a value scree cannot use."""


class IndexMismatchError(ScreeError):
    """The index on disk was made for another folder, model or dimension count (R-F3)."""


class IndexCorruptError(ScreeError):
    """The index file cannot be opened or fails its integrity check."""


class IndexWriteError(ScreeError):
    """A write to the index failed for want of room or through an I/O error (full disk, file size limit); the
    transaction was rolled back, so the index holds what it held before."""


class LockHeldError(ScreeError):
    """Another process holds writer.lock; `pid` names it when the lock file says."""

    def __init__(self, message: str, pid: int | None = None) -> None:
        super().__init__(message)
        self.pid = pid


class EmbeddingError(ScreeError):
    """The embeddings backend failed for a reason retrying will not fix (bad request, ZDR refusal, bad reply)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class EmbeddingAuthError(EmbeddingError):
    """The embeddings API rejected the key (HTTP 401 or 403)."""


class EmbeddingUnavailableError(EmbeddingError):
    """The embeddings API is unreachable or kept answering 429/5xx after every retry: an outage (R-E4)."""


class ModelMissingError(ScreeError):
    """The offline model's files are absent or fail their checksum (R-E6)."""


class PathRefusedError(ScreeError):
    """A path given by a client is not one scree would index (absolute, escaping, ignored, NUL byte)."""


class IndexUnavailableError(ScreeError):
    """The index's database server cannot be reached, refused the login, or lacks what scree needs (issue 31)."""


class WriterFencedError(IndexWriteError):
    """This writer's lock was taken over (its connection dropped, its supervisor died): it must write no more rows."""
