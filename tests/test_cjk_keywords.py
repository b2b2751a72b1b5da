"""Keyword search over text without spaces between words (Chinese, Japanese, Korean): the CJK pairs table beside
the word index, its triggers, its migration of an older index in place, and the pure query side (R-S1, R-M3)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from backends import Backend
from cli_helpers import reindex_here, scree_env, search_json, write_file
from test_store import raw

from scree.content.cjk import apart_from_cjk, cjk_index_text, cjk_pairs
from scree.content.formats import keyword_text
from scree.content.languages import LanguageTrees
from scree.search.engine import keyword_ranking
from scree.search.query import analyse, cjk_terms, keyword_match, keyword_terms
from scree.store import SCHEMA_VERSION, FileState, NewChunk, SqliteReader, SqliteWriter
from scree.store.keywords import fts5_expression
from scree.store.schema import CJK_TABLE, KEYWORD_FUNCTION, migrate

DIMS = 8
MODEL = "hash:test"
ZH = "中文文本没有空格，搜索应该找到它。"
JA = "Rustのクロージャは周囲の環境を捕捉できる関数です。"
KO = "한국어 텍스트는 조사가 단어에 붙습니다."
EN = "Bearer tokens expire after one hour."


def unit(seed: str) -> bytes:
    import struct

    values = [((b % 17) + 1) / 17 for b in hashlib.sha256(seed.encode()).digest()[:DIMS]]
    return struct.pack(f"{DIMS}f", *values)


def chunk(ordinal: int, text: str, heading: str = "Title") -> NewChunk:
    text_hash = hashlib.sha256(f"{ordinal}{text}".encode()).hexdigest()
    return NewChunk(ordinal, heading, text, ordinal + 1, ordinal + 1, text_hash, unit(text))


def state(path: str, tag: str = "v1") -> FileState:
    return FileState(path, hashlib.sha256(f"{path}{tag}".encode()).hexdigest(), 1, 100)


@pytest.fixture
def store(tmp_path: Path) -> SqliteWriter:
    folder = tmp_path / "notes"
    folder.mkdir()
    opened = SqliteWriter.open(tmp_path / "index" / "index.db", folder)
    opened.set_model(MODEL, DIMS)
    return opened


def paths(store: SqliteWriter, query: str, limit: int = 10) -> list[str]:
    ids = [chunk_id for chunk_id, _ in keyword_ranking(store, query, limit)]
    rows = store.chunks_by_ids(ids)
    return [rows[i].path for i in ids]


def cjk_rows(store: SqliteWriter) -> int:
    return int(store._conn.execute(f"select count(*) from {CJK_TABLE}_docsize").fetchone()[0])


# --- pure: the pairs and the query expressions ---


def test_cjk_runs_become_overlapping_pairs() -> None:
    assert cjk_pairs("中文文本") == ["中文", "文文", "文本"]
    assert cjk_pairs("a 中 b") == ["中"]  # a run of one character is itself
    assert cjk_pairs("クロージャ") == ["クロ", "ロー", "ージ", "ジャ"]  # the long-vowel mark is part of the run
    assert cjk_pairs("텍스트는") == ["텍스", "스트", "트는"]
    assert cjk_index_text(EN) == "" and cjk_index_text("x 搜索 y") == "搜索"


def fts_match_expression(query: str) -> str | None:
    """The FTS5 OR-query the SQLite store runs over the word index for `query`."""
    return fts5_expression(keyword_terms(query))


def cjk_match_expression(query: str) -> str | None:
    """The FTS5 OR-query the SQLite store runs over the CJK pairs' table for `query`."""
    return fts5_expression(cjk_terms(query))


def test_query_words_and_cjk_pairs_are_split_between_the_two_tables() -> None:
    assert fts_match_expression("Rustのクロージャ tokens?") == '"Rust" OR "tokens"'
    assert cjk_match_expression("Rustのクロージャ tokens?") == '"のク" OR "クロ" OR "ロー" OR "ージ" OR "ジャ"'
    assert fts_match_expression("搜索") is None and cjk_match_expression("搜索 tokens") == '"搜索"'
    assert cjk_match_expression("plain English") is None
    assert fts_match_expression("tok* *expire") == '"tok"* OR "expire"'  # a trailing * is a prefix, a leading one not
    assert fts_match_expression("tok* tok") == '"tok"* OR "tok"'
    assert cjk_match_expression("中" * 500) == '"中中"'  # distinct pairs only
    assert cjk_match_expression("".join(chr(0x4E00 + n) for n in range(100))).count(" OR ") == 31  # at most 32


# --- the store: found inside runs, kept with its chunks ---


def test_words_inside_unspaced_text_are_found(store: SqliteWriter) -> None:
    store.replace_files([(state("zh.md"), [chunk(0, ZH, heading="说明")])])
    store.replace_files([(state("ja.md"), [chunk(0, JA, heading="クロージャ")])])
    store.replace_files([(state("ko.md"), [chunk(0, KO, heading="한국어")])])
    store.replace_files([(state("en.md"), [chunk(0, EN)])])
    assert paths(store, "搜索") == ["zh.md"]  # two characters inside a run of sixteen
    assert paths(store, "空格") == ["zh.md"]
    assert paths(store, "如何搜索没有空格的文本？") == ["zh.md"]  # a question: its pairs, ranked by bm25
    assert paths(store, "クロージャ") == ["ja.md"]
    assert paths(store, "環境") == ["ja.md"]
    assert paths(store, "텍스트") == ["ko.md"]  # Hangul with a particle attached: 텍스트는
    assert sorted(paths(store, "tokens 搜索")) == ["en.md", "zh.md"]  # both tables, fused by rank
    assert paths(store, "expire") == ["en.md"]  # the word index as before
    assert paths(store, "猫") == []
    assert cjk_rows(store) == 3  # only chunks with CJK text have a row
    assert store.integrity_check() == "ok"


def test_cjk_rows_go_with_their_chunks(store: SqliteWriter) -> None:
    store.replace_files([(state("zh.md"), [chunk(0, ZH), chunk(1, "第二段：变量绑定。")])])
    assert cjk_rows(store) == 2
    store.replace_files([(state("zh.md", "v2"), [chunk(0, "只有闭包。")])])
    assert cjk_rows(store) == 1 and paths(store, "搜索") == [] and paths(store, "闭包") == ["zh.md"]
    store.delete_files(["zh.md"])
    assert cjk_rows(store) == 0 and paths(store, "闭包") == []
    store.replace_files([(state("zh.md", "v3"), [chunk(0, ZH)])])
    store.reset(MODEL, DIMS)
    assert cjk_rows(store) == 0
    assert store.integrity_check() == "ok"


def test_a_schema_4_index_is_upgraded_in_place_with_its_cjk_rows(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    db_path = tmp_path / "index.db"
    conn = raw(db_path)
    assert migrate(conn, upto=4) == [1, 2, 3, 4]
    conn.execute("insert into meta(key, value) values ('folder', ?)", (str(folder.resolve()),))
    conn.execute("insert into meta(key, value) values ('model', ?), ('dims', ?)", (MODEL, str(DIMS)))
    conn.execute(
        f"create virtual table chunk_vectors using vec0(chunk_id integer primary key, embedding float[{DIMS}])"
    )
    conn.execute("insert into files values ('zh.md', 'abc', 1, 2), ('en.md', 'def', 1, 2)")
    for n, (path, text) in enumerate((("zh.md", ZH), ("en.md", EN)), start=1):
        conn.execute(
            "insert into chunks(path, ordinal, heading, text, start_line, end_line, text_hash) "
            "values (?, 0, 'Old', ?, 1, 3, ?)",
            (path, text, f"hash-{n}"),
        )
        conn.execute("insert into chunk_vectors(chunk_id, embedding) values (?, ?)", (n, unit(text)))
        conn.execute("insert into chunk_vector_bits values (?, vec_quantize_binary(?))", (n, unit(text)))
    conn.close()

    with SqliteWriter.open(db_path, folder) as upgraded:
        assert upgraded.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert paths(upgraded, "搜索") == ["zh.md"] and paths(upgraded, "Bearer") == ["en.md"]
        assert cjk_rows(upgraded) == 1
        assert upgraded.vectors_for_hashes(["hash-1"]) == {"hash-1": unit(ZH)}  # nothing re-embedded
        assert upgraded.integrity_check() == "ok"
    with SqliteReader.open(db_path, folder) as reader:
        assert paths(reader, "空格") == ["zh.md"]


@pytest.mark.parametrize(
    ("query", "mostly"),
    [
        ("如何查看JVM已加载的类信息？", True),
        (JA, True),
        (KO, True),
        ("FastAPIでCORSを設定するには？", True),  # two names of its product, eight characters of Japanese
        ("什么是 keyspace？", True),
        ("如何从v1.17升级到v1.18？", True),  # a version is one word
        ("how do I use the 数据面板", False),
        (EN, False),
        ("", False),
    ],
)
def test_a_query_is_mostly_cjk_when_its_cjk_characters_outnumber_its_other_letters(query: str, mostly: bool) -> None:
    assert analyse(query, LanguageTrees.of([])).mostly_cjk is mostly


ARTHAS_LIKE = {  # a diagnostics tool's Chinese docs, in the shape of Arthas' site/docs/doc/
    "trace.md": "# trace\n\n方法内部调用路径，并输出方法路径上的每个节点上耗时。\n\n"
    "trace 命令能主动搜索对应的方法调用路径，渲染和统计整个调用链路上的所有性能开销和追踪调用链路。\n",
    "intro.md": "# 简介\n\n这是一款线上监控诊断产品，通过全局视角实时查看应用 load、内存、gc、线程的状态信息，"
    "并能在不修改应用代码的情况下，对业务问题进行诊断。\n",
    "quick-start.md": "# 快速入门\n\n启动示例程序，然后连接到进程，就可以开始使用了。\n",
    "jad.md": "# jad\n\n反编译指定已加载类的源码，方便确认线上运行的代码是否符合预期。\n",
    "logger.md": "# logger\n\n查看日志信息，并可以动态修改日志级别。\n",
    "heapdump.md": "# heapdump\n\n生成堆转储文件，类似 jmap 命令的 heap dump 功能。\n",
    "thread.md": "# thread\n\n查看当前线程信息，查看线程的堆栈，找出占用 CPU 最高的线程。\n",
}


def test_a_chinese_question_over_the_offline_model_is_answered_by_its_words(tmp_path: Path, installed: Path) -> None:
    """all-MiniLM-L6-v2 learned from English: at the usual vector weight its cosines put jad.md (decompiling) before
    trace.md (each call's time) for "how do I see how long a method's calls take?"; the words decide now."""
    folder = tmp_path / "docs"
    for name, text in ARTHAS_LIKE.items():
        write_file(folder, name, text)
    env = scree_env(tmp_path / "data", SCREE_LOCAL_MODEL_DIR=str(installed))
    reindex_here(env, folder)
    for query, page in (("如何查看方法的调用耗时？", "trace.md"), ("如何动态修改日志级别？", "logger.md")):
        hits = search_json(folder, query, env, "-k", "3")["hits"]
        assert hits[0]["path"] == page, (query, [hit["path"] for hit in hits])


def test_cjk_runs_are_set_apart_from_the_words_glued_to_them() -> None:
    assert apart_from_cjk("在Kubernetes上跑Vitess") == " 在 Kubernetes 上跑 Vitess"
    assert apart_from_cjk(EN) == EN  # no CJK: the text itself
    assert keyword_text("docs/a.md", "用keyspace分片") == " 用 keyspace 分片 "


GLUED = {  # Vitess's Chinese docs write English names into the Chinese with no space around them
    "zh/local.md": "# 在Kubernetes上跑Vitess\n\n先创建一个keyspace，再用vtctldclient把它分片。\n",
    "en/local.md": "# Run locally\n\nStart the cluster on your laptop with the example scripts.\n",
}


def test_a_word_glued_to_chinese_is_found_by_keyword_on_both_backends(tmp_path: Path, index_backend: Backend) -> None:
    folder = tmp_path / "notes"
    for name, text in GLUED.items():
        write_file(folder, name, text)
    with index_backend.engine(folder) as engine:
        for query in ("kubernetes", "vtctldclient keyspace", "Vitess"):
            hits = engine.search(query, k=3, mode="keyword").hits
            assert hits and hits[0].path == "zh/local.md", (query, [hit.path for hit in hits])


def test_a_schema_6_index_is_rebuilt_with_its_words_apart_from_cjk(tmp_path: Path) -> None:
    """Migration 7 rebuilds the word index from headings and text with CJK runs set apart: a chunk indexed before it
    is found by the English words glued to its Chinese, nothing re-embedded, FTS5's own check passing."""
    folder = tmp_path / "notes"
    folder.mkdir()
    db_path = tmp_path / "index.db"
    conn = raw(db_path)
    conn.create_scalar_function(KEYWORD_FUNCTION, lambda path, text: text, 2)  # schema 6's scree: the text as written
    assert migrate(conn, upto=6) == [1, 2, 3, 4, 5, 6]
    conn.execute("insert into meta(key, value) values ('folder', ?)", (str(folder.resolve()),))
    conn.execute("insert into files values ('zh/local.md', 'abc', 1, 2)")
    conn.execute(
        "insert into chunks(path, ordinal, heading, text, start_line, end_line, text_hash) "
        "values ('zh/local.md', 0, '在Kubernetes上跑Vitess', '先创建一个keyspace，再分片。', 1, 3, 'h0')"
    )
    glued = 'select rowid from chunks_fts where chunks_fts match \'"kubernetes" OR "keyspace"\''
    assert conn.execute(glued).fetchall() == []  # one word with the Chinese: no match before
    conn.close()
    with SqliteWriter.open(db_path, folder) as upgraded:
        assert upgraded.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert upgraded.integrity_check() == "ok"
        for query in ("kubernetes", "keyspace"):
            ranked = [chunk_id for chunk_id, _ in upgraded.keyword_lists(keyword_match(query), 5)[0]]
            assert ranked == [1], query
        upgraded.delete_files(["zh/local.md"])  # the delete trigger removes what the insert indexed
        assert upgraded.integrity_check() == "ok"


def test_a_chinese_questions_phrasing_is_left_out_of_its_pairs() -> None:
    assert cjk_terms("如何在本机运行Vitess？") == ["本机", "机运", "运行"]  # not 如何, 何在, 在本
    assert keyword_match("什么是 keyspace？").cjk_pairs == ()  # keyspace is what it asks for
    assert keyword_match("什么是？").cjk_pairs == ("什么", "么是")  # nothing else to ask for: its own pairs
    assert cjk_terms(JA) == list(dict.fromkeys(cjk_pairs(JA)))  # Japanese (it has kana): its own phrasing only
    assert cjk_terms("FastAPIでCORSを設定するには？") == ["で", "を設", "設定"]  # not する, るに, には


FASTAPI_LIKE = {  # FastAPI's Japanese docs, in their words
    "tutorial/cors.md": "# CORS\n\nCORSMiddleware にオリジンの一覧を渡します。\n",
    "tutorial/testing.md": "# テスト\n\nテストを書くには、TestClient をインポートするだけです。\n",
    "tutorial/first-steps.md": "# 最初のステップ\n\nアプリを実行するには、uvicorn を使用します。\n",
    "tutorial/settings.md": "# 設定\n\n環境変数を設定するには、Settings クラスを作成します。\n",
}


VITESS_LIKE = {  # as Vitess's Chinese docs have them: the page's title in every section's heading trail
    "concepts/vschema.md": "# VSchema\n\nVSchema 用于描述如何在keyspace和分片中存储数据。\n",
    "get-started/local.md": "# 本机运行Vitess\n\n本指南涵盖了从预编译的二进制文件安装，进行本地测试。\n\n"
    "## 安装包\n\n下载每周构建的二进制文件。\n\n## 启动集群\n\n运行示例脚本，启动本机集群。\n\n"
    "## 拆除\n\n运行脚本，停止本机集群。\n",
    "get-started/kubernetes.md": "# 在Kubernetes上跑Vitess\n\n用 operator 部署一个集群，运行示例。\n",
    "reference/cli.md": "# 命令行\n\n运行 vtctldclient 管理集群。\n\n## 运行参数\n\n每个参数的默认值。\n",
}


WHAT_IS = {
    "concepts/keyspace.md": "# Keyspace\n\n一个 keyspace 是逻辑上的数据库，可以有多个分片。\n",
    "overview/whatisvitess.md": "# Vitess是什么\n\n说明 Vitess 是什么：一个数据库集群系统，管理每个 keyspace 和分片。\n"
    "\n## 为什么\n\n为什么要用它，它是什么。\n",
}


@pytest.mark.parametrize(
    ("pages", "query", "page"),
    [
        # 如何在 (how ... on) asked for the pair 何在, rare in docs: the VSchema page, saying 如何在 in passing, came
        # before the page titled 本机运行Vitess for "how do I run it on this machine?"
        (VITESS_LIKE, "如何在本机运行？", "get-started/local.md"),
        # するには asked for する, るに and には, which the settings page's 環境変数を設定するには holds: it came before
        # the CORS page listing the origins for "how do I set the origins?"
        (FASTAPI_LIKE, "オリジンを設定するには？", "tutorial/cors.md"),
        # with its phrasing left out, "what is a keyspace?" asks for keyspace alone, not for 什么 and 么是, which the
        # overview's title "Vitess是什么" holds
        (VITESS_LIKE | WHAT_IS, "什么是 keyspace？", "concepts/keyspace.md"),
    ],
)
def test_a_question_finds_the_page_its_content_words_name_not_its_phrasing(
    tmp_path: Path, index_backend: Backend, pages: dict[str, str], query: str, page: str
) -> None:
    folder = tmp_path / "notes"
    for name, text in pages.items():
        write_file(folder, name, text)
    with index_backend.engine(folder) as engine:
        hits = engine.search(query, k=3, mode="keyword").hits
    assert hits and hits[0].path == page, [hit.path for hit in hits]
