"""The table of embedder kinds (R-E1): one row per kind SCREE_EMBEDDER may name; adding a kind is a class and a row.

Every question about a kind is a column here, so nothing else lists kinds: the factory builds from `make`, the
settings accept `embedder_choices()`, the writer shares `shares_queries` kinds' models with readers (issue 24), the
machine-wide vector cache keeps `cached` kinds' vectors, search drops vector-only hits under `similarity_floor`, and
`scree doctor` prints `checks`. Each row imports its embedder's module only when called (R-E6: a keyword-only reader
never loads numpy or openvino).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from scree.config import Settings
from scree.embedders.base import Embedder
from scree.embedders.graph import DIMS as LOCAL_DIMS
from scree.embedders.hashed import DEFAULT_HASH_DIMS, HASH_MODEL_ID
from scree.embedders.model_install import MODEL_NAME
from scree.errors import ConfigError, ScreeError

AUTO = "auto"  # SCREE_EMBEDDER's default: the API when a key is configured, else the offline model (R-E6)

Level = Literal["ok", "warn", "fail"]


@dataclass(frozen=True, slots=True)
class Check:
    """One line of `scree doctor` about the embedder: anything but "ok" means a sync would not embed with vectors."""

    level: Level
    what: str
    detail: str


@dataclass(frozen=True, slots=True)
class EmbedderKind:
    """What scree needs to know about one kind of embedder."""

    name: str  # SCREE_EMBEDDER's value and the first part of the identity an index records
    identity: Callable[[Settings], tuple[str, int]]  # (identity, dims) an index built with it records, nothing loaded
    available: Callable[[Settings], bool]  # could it embed now, judged without loading it (a key, the model's files)
    make: Callable[[Settings], Embedder]  # the embedder itself; a model loads at its first embed
    shares_queries: bool  # readers embed queries through the writer's loaded copy (issue 24)
    cached: bool  # its vectors cost time or money: worth the machine-wide vector cache (issue 24)
    releases_idle: bool  # holds memory worth handing back after a quiet spell (scree.embedders.idle)
    similarity_floor: float | None  # lowest cosine a vector-only hit of its model may have; None: not measured
    # The vector list's weight in a hybrid search for a query written mostly in CJK script (Query.mostly_cjk), for a
    # model that learned from English text and so tells little of Chinese, Japanese or Korean; None: as any query.
    cjk_vector_weight: float | None = None
    # Raise ModelMissingError when files it needs are missing or fail their checks: a writer then indexes for keyword
    # search only (R-E6) rather than fail. None: the kind needs no files.
    verify: Callable[[Settings], None] | None = None
    checks: Callable[[Settings], list[Check]] = lambda _settings: []  # doctor's lines beyond the key and identity


def _api_identity(settings: Settings) -> tuple[str, int]:
    return f"api:{settings.api_model}", settings.api_dims


def _make_api(settings: Settings) -> Embedder:
    if not settings.api_key:
        raise ConfigError("SCREE_EMBEDDER=api needs OPENROUTER_API_KEY or SCREE_API_KEY")
    from scree.embedders.api import ApiEmbedder

    return ApiEmbedder.from_settings(settings)


def _make_local(settings: Settings) -> Embedder:
    from scree.embedders.local import LocalEmbedder

    return LocalEmbedder.from_settings(settings)


def _local_files_present(settings: Settings) -> bool:
    """The offline model's files are in place (their checksums are checked when it loads)."""
    from scree.embedders.model_install import PINNED_FILES, model_dir

    folder = model_dir(settings)
    return all((folder / name).is_file() for name in PINNED_FILES)


def _verify_local(settings: Settings) -> None:
    from scree.embedders.model_install import check_model, model_dir

    check_model(model_dir(settings))


def _local_checks(settings: Settings) -> list[Check]:
    from scree.embedders.model_install import PINNED_FILES, check_model, model_dir

    folder = model_dir(settings)
    try:
        check_model(folder)
    except ScreeError as exc:
        # R-E6: no model at all is the keyword-only mode, not a fault; a model that fails its checks is broken
        if any((folder / name).exists() for name in PINNED_FILES):
            return [Check("fail", "offline model", str(exc))]
        return [Check("warn", "offline model", f"{exc}; semantic search is off until then")]
    from scree.embedders.runtime import precision_choice

    choice = precision_choice(settings.model_precision)  # asks OpenVINO's CPU plugin; compiles nothing
    if isinstance(choice, str):
        return [Check("ok", "offline model", str(folder)), Check("fail", "offline model precision", choice)]
    return [Check("ok", "offline model", str(folder)), Check("ok", "offline model precision", str(choice))]


def _make_hash(_settings: Settings) -> Embedder:
    from scree.embedders.hashed import HashEmbedder

    return HashEmbedder(dims=DEFAULT_HASH_DIMS)


KINDS: dict[str, EmbedderKind] = {
    row.name: row
    for row in (
        EmbedderKind(
            name="api",
            identity=_api_identity,
            available=lambda settings: bool(settings.api_key),
            make=_make_api,
            shares_queries=False,  # a reader calls the API itself: nothing is loaded to share
            cached=True,
            releases_idle=False,
            similarity_floor=None,  # the model is the user's choice; none measured
        ),
        EmbedderKind(
            name="local",
            identity=lambda _settings: (f"local:{MODEL_NAME}", LOCAL_DIMS),
            available=_local_files_present,
            make=_make_local,
            shares_queries=True,
            cached=True,
            releases_idle=True,
            # Below it nothing is a real match ("kittens" in a repository about puppies). all-MiniLM-L6-v2 on the
            # docs trees: the best relevant chunk of every query scored >= 0.258 (5th percentile 0.294); 316
            # unrelated queries (SciFact claims, everyday questions) had a best chunk of median 0.165, 95th
            # percentile 0.247.
            similarity_floor=0.25,
            # all-MiniLM-L6-v2 read English: Chinese questions on two real Chinese docs trees (Arthas' site/docs/doc/,
            # 12 questions; Hexo's source/zh-cn/, 14), MRR@5 semantic 0.111 / 0.270, keyword 0.583 / 0.810, hybrid
            # at the usual weight 1.7: 0.413 / 0.687; at 0.3 0.562 / 0.827, 0.5-0.7 0.604 / 0.827-0.833, 1.0 0.556
            # / 0.744. The words still decide; the vectors break ties. Checked after on FastAPI's Japanese docs (12
            # Japanese questions over docs/en, ja and zh): 0.500 at 1.7, 0.632 at 0.3, 0.669 at 0.6, 0.604 at 1.0;
            # 0.711 once a question's English names count as words, not letters (Query.mostly_cjk). Once a Chinese
            # question's phrasing left its CJK pairs (query._CHINESE_QUESTION), Arthas / Hexo / FastAPI: 0.611 /
            # 0.869 / 0.674 at 0.3, 0.653 / 0.869 / 0.711 at 0.6, 0.500 / 0.786 / 0.646 at 1.0; once a Japanese
            # question's phrasing left them too, FastAPI 0.806 / 0.812 / 0.711 at 0.3 / 0.6 / 1.0.
            cjk_vector_weight=0.6,
            verify=_verify_local,
            checks=_local_checks,
        ),
        EmbedderKind(
            name="hash",  # the deterministic test double: knows no meaning, costs nothing
            identity=lambda _settings: (f"hash:{HASH_MODEL_ID}", DEFAULT_HASH_DIMS),
            available=lambda _settings: True,
            make=_make_hash,
            shares_queries=False,
            cached=False,
            releases_idle=False,
            similarity_floor=None,
        ),
    )
}


def embedder_choices() -> tuple[str, ...]:
    """What SCREE_EMBEDDER accepts: "auto" and the table's rows."""
    return (AUTO, *KINDS)


def chosen(settings: Settings) -> EmbedderKind:
    """The row SCREE_EMBEDDER names; "auto" is the API when a key is configured, else the offline model (R-E6)."""
    name = settings.embedder
    if name == AUTO:
        name = "api" if settings.api_key else "local"
    row = KINDS.get(name)
    if row is None:
        raise ConfigError(f"SCREE_EMBEDDER={settings.embedder!r} is not one of: {', '.join(embedder_choices())}")
    return row


def kind_of(identity_or_kind: str) -> EmbedderKind | None:
    """The row of an embedder's `kind`, or of an identity an index recorded ("local:all-MiniLM-L6-v2"); None for the
    keyword-only embedder and for kinds this version does not know."""
    return KINDS.get(identity_or_kind.split(":", 1)[0])


def expected_identity(settings: Settings) -> tuple[str, int]:
    """The (identity, dims) an index built with these settings records, without loading any model."""
    return chosen(settings).identity(settings)


def embedder_available(settings: Settings) -> bool:
    """Whether an embedder with vectors could be built now, without loading one."""
    return chosen(settings).available(settings)


def shares_queries(embedder: Embedder) -> bool:
    """Whether readers embed their queries through this writer's embedder, which holds a model (issue 24)."""
    row = kind_of(embedder.kind)
    return row is not None and row.shares_queries


def worth_caching(embedder: Embedder) -> bool:
    """Whether this embedder's vectors cost enough (time or money) to keep in the machine-wide cache (issue 24)."""
    row = kind_of(embedder.kind)
    return row is not None and row.cached


def cjk_vector_weight(identity: str) -> float | None:
    """The vector list's weight for a query mostly in CJK script, for the model that recorded `identity`; None: the
    usual weight (ranking.vector_weight)."""
    row = kind_of(identity)
    return None if row is None else row.cjk_vector_weight


def similarity_floor(identity: str) -> float | None:
    """The floor measured for the model that recorded `identity`; None when none was (search.ranking.above_floor)."""
    row = kind_of(identity)
    return None if row is None else row.similarity_floor
