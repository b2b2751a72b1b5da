"""Search quality on a Docusaurus-style site: the current English page against its old versions and translations.

Run: python -m bench.versioned_site [--modes keyword,semantic,hybrid] [--json PATH] [--keep DIR]

Issue 25: on a real Docusaurus site (helm-www) old-version pages and translations took 35 of 75 top-5 slots and
hybrid MRR@5 was 0.689 with default settings. This benchmark builds such a site from the uv docs in eval/docs (MIT /
Apache-2.0), laid out as Docusaurus lays one out, and scores the uv queries of eval/docs/dataset.json against it:

- docs/<page>.md, or .mdx for every third page (imports, <Tabs>/<TabItem> around its first code block); each page's
  `# Title` moved into front matter `title:` as Docusaurus writes it (the H1 is dropped);
- versioned_docs/version-3.x/<page>: identical copies, every fourth page without its last section (slightly older);
- versioned_docs/version-2.x/<page> for every other page: older, every fourth paragraph missing, always .md;
- i18n/{ko,ja,zh}/docusaurus-plugin-content-docs/current/<page>: ko for every page, ja and zh for every third;
  a few hand-translated titles and openings, otherwise the English text as Crowdin leaves untranslated pages;
  i18n/ko/.../version-3.x/<page> for every fifth page;
- i18n/{de,es,tr}/docusaurus-plugin-content-docs/current/<page>: bench/translated_tree.json's hand translations.

Only the current docs/ page counts as relevant (the dataset's grades); k = 5. Printed per mode: MRR@5, Hit@1,
Hit@3, and how many top-5 slots went to old versions and to translations. The vectors come through a cache
(bench/results/quality-cache/vectors-versioned-*.db), so reruns embed only new text.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench import add_modes_option
from bench.quality import CACHE, EVAL, TRANSLATED, CachedEmbedder, unpack_docs

K = 5
LANGS_ALL = ("ko",)  # a copy of every page
LANGS_SOME = ("ja", "zh")  # a copy of every third page
DOCS_PLUGIN = "docusaurus-plugin-content-docs"
MDX_IMPORTS = "import Tabs from '@theme/Tabs';\nimport TabItem from '@theme/TabItem';\n\n"

# Hand-made titles and opening sentences (the rest of such a page stays English, as partly translated sites have it).
TRANSLATED_OPENINGS: dict[str, dict[str, tuple[str, str]]] = {
    "ko": {
        "concepts/cache.md": (
            "캐싱",
            "uv는 이전 실행에서 이미 받은 의존성을 다시 내려받거나 다시 빌드하지 않도록 적극적으로 캐시합니다.",
        ),
        "guides/tools.md": (
            "도구 사용하기",
            "많은 파이썬 패키지는 도구로 쓸 수 있는 애플리케이션을 제공합니다. uv는 도구 실행과 설치를 지원합니다.",
        ),
        "reference/troubleshooting/build-failures.md": (
            "빌드 실패 문제 해결",
            "호환되는 휠이 없으면 uv는 패키지를 빌드해야 합니다. 빌드는 여러 이유로 실패할 수 있습니다.",
        ),
        "concepts/authentication/certificates.md": (
            "TLS 인증서",
            "uv는 TLS를 사용해 패키지 인덱스 및 다른 HTTPS 서버와 안전하게 통신합니다. "
            "인증서는 서버의 신원을 확인합니다.",
        ),
        "guides/integration/docker.md": (
            "Docker에서 uv 사용하기",
            "Docker 이미지에서 uv로 파이썬 의존성을 관리하는 방법을 설명합니다.",
        ),
        "concepts/projects/dependencies.md": ("의존성 관리", "프로젝트의 의존성은 여러 필드에 정의됩니다."),
    },
    "ja": {
        "concepts/cache.md": (
            "キャッシュ",
            "uv は以前の実行で取得した依存関係を再ダウンロードや再ビルドしないように積極的にキャッシュします。",
        ),
        "guides/tools.md": (
            "ツールの使用",
            "多くの Python パッケージはツールとして使えるアプリケーションを提供します。",
        ),
        "reference/troubleshooting/build-failures.md": (
            "ビルド失敗のトラブルシューティング",
            "互換性のあるホイールがない場合、uv はパッケージをビルドする必要があります。",
        ),
    },
    "zh": {
        "concepts/cache.md": ("缓存", "uv 使用积极的缓存策略，避免重新下载或重新构建以前运行中已经获取的依赖。"),
        "guides/tools.md": (
            "使用工具",
            "许多 Python 包提供可以作为工具使用的应用程序。uv 对调用和安装工具有专门支持。",
        ),
        "concepts/authentication/certificates.md": (
            "TLS 证书",
            "uv 使用 TLS 与软件包索引和其他 HTTPS 服务器安全通信。",
        ),
    },
}
_H1 = re.compile(r"^# (.+)\n", re.MULTILINE)


def split_page(text: str) -> tuple[str, str]:
    """(title, body) of a uv page: its front matter dropped, its first `# ` heading taken out as the title."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        text = text[end + 5 :] if end >= 0 else text
    found = _H1.search(text)
    if found is None:
        return "", text.lstrip("\n")
    return found.group(1).strip(), (text[: found.start()] + text[found.end() :]).lstrip("\n")


def as_docusaurus(title: str, body: str, mdx: bool, position: int) -> str:
    """A page as Docusaurus has it: title in front matter, no H1; an .mdx page imports Tabs and wraps its first code
    block in them."""
    front = f"---\ntitle: {json.dumps(title, ensure_ascii=False)}\nsidebar_position: {position}\n---\n\n"
    if not mdx:
        return front + body
    fence = re.search(r"^```[^\n]*\n.*?^```\n", body, re.MULTILINE | re.DOTALL)
    if fence is not None:
        tabbed = f'<Tabs>\n<TabItem value="unix" label="macOS and Linux">\n\n{fence.group(0)}\n</TabItem>\n</Tabs>\n'
        body = body[: fence.start()] + tabbed + body[fence.end() :]
    return front + MDX_IMPORTS + body


def older(body: str, every: int) -> str:
    """An older version of a page body: every `every`-th paragraph outside fences missing."""
    kept: list[str] = []
    for index, paragraph in enumerate(body.split("\n\n")):
        if index % every == every - 1 and "```" not in paragraph and not paragraph.startswith("#"):
            continue
        kept.append(paragraph)
    return "\n\n".join(kept)


def without_last_section(body: str) -> str:
    cut = body.rfind("\n## ")
    return body[:cut] + "\n" if cut > 0 else body


def translated(lang: str, page: str, title: str, body: str) -> tuple[str, str]:
    opening = TRANSLATED_OPENINGS.get(lang, {}).get(page)
    if opening is None:
        return title, body
    first_break = body.find("\n\n")
    rest = body[first_break + 2 :] if first_break >= 0 and not body.startswith("#") else body
    return opening[0], f"{opening[1]}\n\n{rest}"


def write_site(english: Path, target: Path) -> tuple[list[tuple[str, dict[str, int]]], dict[str, int]]:
    """Write the site into `target`; returns (query, {relevant current path: grade}) and counts of files by kind."""
    pages = sorted(str(p.relative_to(english)) for p in english.rglob("*.md"))
    files: dict[str, str] = {}
    current: dict[str, str] = {}  # page -> its docs/ path
    kinds = {"current": 0, "version": 0, "translation": 0}
    for index, page in enumerate(pages):
        title, body = split_page((english / page).read_text(encoding="utf-8"))
        title = title or Path(page).stem.replace("-", " ").capitalize()
        mdx = index % 3 == 0
        ext = ".mdx" if mdx else ".md"
        stem = page[: -len(".md")]
        current[page] = f"docs/{stem}{ext}"
        files[current[page]] = as_docusaurus(title, body, mdx, index)
        v3 = without_last_section(body) if index % 4 == 0 else body
        files[f"versioned_docs/version-3.x/{stem}{ext}"] = as_docusaurus(title, v3, mdx, index)
        if index % 2 == 0:
            files[f"versioned_docs/version-2.x/{stem}.md"] = as_docusaurus(title, older(body, 4), False, index)
        for lang in (*LANGS_ALL, *(LANGS_SOME if index % 3 == 0 else ())):
            t_title, t_body = translated(lang, page, title, body)
            files[f"i18n/{lang}/{DOCS_PLUGIN}/current/{stem}{ext}"] = as_docusaurus(t_title, t_body, mdx, index)
            if lang == "ko" and index % 5 == 0:
                files[f"i18n/ko/{DOCS_PLUGIN}/version-3.x/{stem}{ext}"] = as_docusaurus(t_title, v3, mdx, index)
    spec = json.loads(TRANSLATED.read_text(encoding="utf-8"))
    for rel, text in spec["pages"].items():
        lang, _, page = rel.partition("/")
        title, body = split_page(text)
        files[f"i18n/{lang}/{DOCS_PLUGIN}/current/{page}"] = as_docusaurus(title, body, False, 0)
    for rel, text in files.items():
        kinds["version" if rel.startswith("versioned_docs/") or "/version-" in rel else
              "translation" if rel.startswith("i18n/") else "current"] += 1  # fmt: skip
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    dataset = json.loads((EVAL / "docs" / "dataset.json").read_text(encoding="utf-8"))
    queries = [
        (item["query"], {current[q["path"]]: q["grade"] for q in item["qrels"] if q["path"] in current})
        for item in dataset
        if item["library"] == "uv"
    ]
    return queries, kinds


def build(folder: Path, embedder: CachedEmbedder, db: Path) -> tuple[int, int]:
    """A fresh index of `folder` with default settings (SCREE_EXTENSIONS as the user's environment has it)."""
    from scree.config import load_settings
    from scree.content.ignore import IgnorePolicy
    from scree.index.model_policy import prepare
    from scree.store import SqliteWriter
    from scree.store.sqlite_files import remove_db
    from scree.writer_proc.sync import Syncer

    settings = load_settings(os.environ, notes=str(folder))
    remove_db(db)
    with SqliteWriter.open(db, folder) as store:
        prepare(store, embedder)
        Syncer(store, IgnorePolicy(folder, settings.extensions), embedder, settings.max_file_bytes).sync_all()
        return store.counts()


def score(
    search: Callable[[str, str], Sequence[str]], queries: list[tuple[str, dict[str, int]]], mode: str
) -> dict[str, Any]:
    mrr = hit1 = hit3 = 0.0
    slots = {"old_version": 0, "translation": 0}
    ranked: dict[str, list[str]] = {}
    for query, relevant in queries:
        paths = list(search(query, mode))[:K]
        ranked[query] = paths
        first = next((rank for rank, path in enumerate(paths, start=1) if path in relevant), None)
        if first is not None:
            mrr += 1.0 / first
            hit1 += first == 1
            hit3 += first <= 3
        slots["old_version"] += sum(p.startswith("versioned_docs/") or "/version-" in p for p in paths)
        slots["translation"] += sum(p.startswith("i18n/") for p in paths)
    n = len(queries)
    return {"mrr5": mrr / n, "hit1": hit1 / n, "hit3": hit3 / n, "slots": slots, "queries": n, "ranked": ranked}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_modes_option(parser)
    parser.add_argument("--json", type=Path, default=Path("bench/results/versioned_site.json"))
    parser.add_argument("--keep", type=Path, help="write the site here and keep it (default: a temporary folder)")
    args = parser.parse_args()

    from scree.config import load_settings
    from scree.content.ignore import IgnorePolicy
    from scree.embedders.factory import make_embedder
    from scree.search.engine import SearchEngine
    from scree.store import SqliteReader

    english = unpack_docs(EVAL / "docs", CACHE / "versioned-source")["uv"]
    settings = load_settings(os.environ, notes=str(CACHE.parent))
    inner = make_embedder(settings)
    counter = getattr(inner, "count_tokens", lambda texts: [0] * len(texts))
    tag = inner.identity.replace("/", "_").replace(":", "_")
    embedder = CachedEmbedder(inner, CACHE / f"vectors-versioned-{tag}.db", counter)
    work = Path(tempfile.mkdtemp(prefix="scree-versioned-"))
    site = args.keep or work / "site"
    if site.exists():
        shutil.rmtree(site)
    site.mkdir(parents=True)
    try:
        queries, kinds = write_site(english, site)
        db = work / "index.db"
        files, chunks = build(site, embedder, db)
        site_settings = load_settings(os.environ, notes=str(site))
        print(
            f"site: {sum(kinds.values())} files ({kinds['current']} current, {kinds['version']} old versions, "
            f"{kinds['translation']} translations); indexed {files} files, {chunks} chunks; "
            f"SCREE_EXTENSIONS={','.join(site_settings.extensions)}; {len(queries)} queries, k={K}"
        )
        store = SqliteReader.open(db, site)
        engine = SearchEngine(
            store, IgnorePolicy(site, site_settings.extensions), site, site_settings.max_file_bytes, lambda: embedder
        )
        results: dict[str, Any] = {"files": files, "chunks": chunks, "kinds": kinds, "modes": {}}
        try:
            for mode in args.modes:
                out = score(lambda q, m: [hit.path for hit in engine.search(q, k=K, mode=m).hits], queries, mode)
                results["modes"][mode] = out
                print(
                    f"{mode:8}  MRR@5 {out['mrr5']:.3f}  Hit@1 {out['hit1']:.3f}  Hit@3 {out['hit3']:.3f}  "
                    f"top-5 slots: {out['slots']['old_version']} old versions, {out['slots']['translation']} "
                    f"translations of {out['queries'] * K}"
                )
        finally:
            engine.close()
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
        print(f"wrote {args.json}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
