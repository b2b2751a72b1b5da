"""Parallel language trees (#11): which language a path is in, the site's main language, the query's language, and
the first sync's order. Pure: no I/O."""

from __future__ import annotations

import pytest

from scree.content.languages import ORIGINAL, Copy, LanguageTrees, copy_of, language_folder
from scree.content.versions import find_trees

PAGES = ("intro.md", "install.md", "config.md", "cli/run.md", "cli/watch.md", "guides/ci.md")

FASTAPI = [
    "docs/en/docs/index.md",
    "docs/en/docs/tutorial/cors.md",
    "docs/en/docs/tutorial/body.md",
    "docs/en/docs/tutorial/security/oauth2.md",
    "docs/tr/docs/tutorial/cors.md",
    "docs/tr/docs/tutorial/body.md",
    "docs/pt-BR/docs/tutorial/cors.md",
    "docs/pt-BR/docs/tutorial/body.md",
    "docs/zh/docs/tutorial/body.md",
    "README.md",
]


def test_a_language_folder_or_suffix_names_the_copy() -> None:
    assert copy_of("docs/de/docs/tutorial/cors.md") == Copy("de", "docs/*/docs/tutorial/cors.md")
    assert copy_of("docs/pt-BR/index.md") == Copy("pt-br", "docs/*/index.md")
    assert copy_of("i18n/zh_CN/guide.md") == Copy("zh-cn", "i18n/*/guide.md")
    assert copy_of("guide/setup.fr.md") == Copy("fr", "guide/setup.*.md")
    assert copy_of("docs/api/setup.md") is None
    assert copy_of("docs/tutorial.md") is None
    # a language and region written as one word (vuex's docs/ptbr/ beside ja/ and zh/), but no word that could be one
    assert copy_of("docs/ptbr/guide/state.md") == Copy("pt-br", "docs/*/guide/state.md")
    assert copy_of("docs/zhCN/guide/state.md") == Copy("zh-cn", "docs/*/guide/state.md")
    assert copy_of("src/node/index.md") is None and copy_of("docs/demo/index.md") is None
    # a three-letter code with its region as BCP 47 writes it (Starship's docs/ckb-IR/ beside de-DE/ and ja-JP/),
    # never such a word in lower case alone
    assert copy_of("docs/ckb-IR/guide/README.md") == Copy("ckb-ir", "docs/*/guide/README.md")
    assert copy_of("docs/fil_PH/guide/README.md") == Copy("fil-ph", "docs/*/guide/README.md")
    assert copy_of("docs/web-ui/guide/README.md") is None and copy_of("docs/ckb/guide/README.md") is None


def test_trees_need_pages_shared_between_languages() -> None:
    trees = LanguageTrees.of(FASTAPI)
    assert trees.main == "en"
    # zh shares only one page, but its folder sits beside the en, tr and pt-BR trees: a tree with one page yet
    assert set(trees.languages) == {"en", "tr", "pt-br", "zh"}
    assert trees.copy("docs/zh/docs/tutorial/body.md") == Copy("zh", "docs/*/docs/tutorial/body.md")
    alone = [path for path in FASTAPI if "/tr/" not in path and "/pt-BR/" not in path]
    assert LanguageTrees.of(alone).counts == ()  # en and zh sharing one page, no tree beside: not yet trees
    assert LanguageTrees.of(["ml/intro.md", "ml/models.md", "docs/intro.md"]).counts == ()
    assert LanguageTrees.of(["ml/intro.md", "ml/models.md"]).copy("ml/intro.md") is None


def test_the_query_language_from_its_script_and_its_words_else_the_main_one() -> None:
    trees = LanguageTrees.of(
        FASTAPI + ["docs/zh/docs/tutorial/cors.md", "docs/ru/docs/tutorial/cors.md", "docs/ru/docs/tutorial/body.md"]
    )
    assert trees.query_language("how do I add CORS") == "en"
    assert trees.query_language("cors") == "en"
    assert trees.query_language("nasıl CORS eklenir için bir") == "tr"
    assert trees.query_language("como adicionar CORS para o app") == "pt-br"
    assert trees.query_language("如何添加跨域") == "zh"
    assert trees.query_language("как добавить CORS") == "ru"
    assert LanguageTrees().query_language("anything") is None


def test_the_first_sync_takes_the_main_language_first() -> None:
    trees = LanguageTrees.of(FASTAPI)
    ordered = trees.sync_order(sorted(FASTAPI))
    english = [path for path in ordered if path.startswith("docs/en/")]
    assert ordered[: len(english) + 1] == sorted([*english, "README.md"])
    assert set(ordered) == set(FASTAPI)
    assert LanguageTrees().sync_order(["b.md", "a.md"]) == ["b.md", "a.md"]


def test_docusaurus_versions_and_translations_are_copies_of_the_current_page() -> None:
    """Issue 25: i18n/<lang>/docusaurus-plugin-content-docs/{current,version-N}/ and versioned_docs/version-N/ copies
    name the docs/ page they copy, whatever their markdown extension; a docs plugin with an id maps to its folder."""
    plugin = "docusaurus-plugin-content-docs"
    assert copy_of(f"i18n/ko/{plugin}/current/intro.mdx") == Copy("ko", "docs/intro.md", None, structural=True)
    assert copy_of(f"site/i18n/pt-BR/{plugin}/version-2.x/a/b.md") == Copy("pt-br", "site/docs/a/b.md", "2.x", True)
    assert copy_of("versioned_docs/version-3.x/faq/x.md") == Copy("", "docs/faq/x.md", "3.x", structural=True)
    assert copy_of("community_versioned_docs/version-1.0/x.md") == Copy("", "community/x.md", "1.0", True)
    assert copy_of(f"i18n/ja/{plugin}-community/current/x.md") == Copy("ja", "community/x.md", None, True)
    assert copy_of("i18n/fr/docusaurus-plugin-content-blog/2024-01-01-hello.md").page == "blog/2024-01-01-hello.md"
    assert copy_of("versioned_docs/notes.md") is None


def test_the_copy_shown_is_in_the_querys_language_else_the_current_original() -> None:
    plugin = "docusaurus-plugin-content-docs"
    paths = [
        "docs/intro.md",
        "docs/upgrade.mdx",
        "versioned_docs/version-2.x/upgrade.md",
        "versioned_docs/version-10.x/upgrade.md",
        f"i18n/ko/{plugin}/current/upgrade.mdx",
        f"i18n/ko/{plugin}/version-10.x/upgrade.mdx",
    ]
    trees = LanguageTrees.of(paths)
    assert trees.main == "" and "ko" in trees.languages
    assert trees.copy("docs/intro.md") is None  # a page with no other copy
    english = trees.query_language("how do I upgrade a release")
    assert english == ""
    ranked = sorted(paths[1:], key=lambda path: trees.preference(path, english))
    assert ranked[:3] == ["docs/upgrade.mdx", "versioned_docs/version-10.x/upgrade.md", paths[2]]
    korean = trees.query_language("릴리스를 업그레이드하는 방법")
    assert korean == "ko"
    assert min(paths[1:], key=lambda path: trees.preference(path, korean)) == f"i18n/ko/{plugin}/current/upgrade.mdx"
    ordered = trees.sync_order(paths)
    assert ordered[:2] == ["docs/intro.md", "docs/upgrade.mdx"]
    assert ordered[-1] == f"i18n/ko/{plugin}/version-10.x/upgrade.mdx"


def test_an_untagged_page_is_the_original_of_its_suffix_translations() -> None:
    trees = LanguageTrees.of(["guide/setup.md", "guide/setup.fr.md", "guide/run.md", "guide/run.fr.md"])
    assert trees.copy("guide/setup.md") == Copy("", "guide/setup.*.md")
    assert min(["guide/setup.fr.md", "guide/setup.md"], key=lambda p: trees.preference(p, "")) == "guide/setup.md"


def test_an_untagged_tree_with_language_folders_inside_is_the_original_and_main() -> None:
    """Starlight's layout (VitePress and MkDocs keep the same): the original pages at src/content/docs/, each
    translation in a language folder inside that tree. The untagged pages are the originals of their translations
    and the main language, however many languages translate them (German had been taken as the main one)."""
    pages = ("index.mdx", "guides/sidebar.mdx", "guides/i18n.mdx", "reference/configuration.mdx")
    paths = [f"docs/src/content/docs/{page}" for page in pages]
    paths += [f"docs/src/content/docs/{language}/{page}" for language in ("de", "fr", "ja") for page in pages]
    paths.append("docs/src/content/docs/guides/only-in-english.mdx")
    trees = LanguageTrees.of(paths)
    sidebar = "docs/src/content/docs/*/guides/sidebar.md"
    assert trees.main == ""
    assert trees.copy("docs/src/content/docs/guides/sidebar.mdx") == Copy("", sidebar)
    assert trees.copy("docs/src/content/docs/de/guides/sidebar.mdx") == Copy("de", sidebar)
    assert trees.copy("docs/src/content/docs/guides/only-in-english.mdx") is None
    english = min(
        [f"docs/src/content/docs/{language}guides/i18n.mdx" for language in ("de/", "", "fr/")],
        key=lambda path: trees.preference(path, trees.query_language("how do I translate my site")),
    )
    assert english == "docs/src/content/docs/guides/i18n.mdx"


def test_a_glued_language_folder_is_a_translation_and_english_queries_get_english() -> None:
    """vuex's VitePress docs: the English original at docs/, translations in docs/ja/, docs/zh/ and docs/ptbr/
    (`'/ptbr/': {lang: 'pt-BR'}`); ptbr was no language, so its pages were hits of their own beside the English
    ones, second and fourth for "How do I commit a mutation with a payload?"."""
    pages = ("guide/state.md", "guide/mutations.md", "guide/actions.md", "api/index.md")
    paths = [f"docs/{page}" for page in pages]
    paths += [f"docs/{language}/{page}" for language in ("ja", "zh", "ptbr") for page in pages]
    trees = LanguageTrees.of(paths)
    assert trees.main == "" and set(trees.languages) == {"", "ja", "zh", "pt-br"}
    mutations = [f"docs/{language}guide/mutations.md" for language in ("ptbr/", "", "ja/")]
    copies = [trees.copy(path) for path in mutations]
    assert all(copy is not None and copy.page == "docs/*/guide/mutations.md" for copy in copies), copies
    asked = trees.query_language("How do I commit a mutation with a payload?")
    assert min(mutations, key=lambda path: trees.preference(path, asked)) == "docs/guide/mutations.md"


def test_a_country_code_used_for_a_language_is_that_language() -> None:
    """axios-docs: posts/en/ and 16 other languages, Korean in posts/kr/ and Kurdish in posts/ku/; neither was a
    language, so the Korean and Kurdish copies of each page were hits of their own. A Korean question gets the
    Korean page, an English one the English page."""
    pages = ("intro.md", "api_intro.md", "cancellation.md", "interceptors.md")
    paths = [f"posts/{language}/{page}" for language in ("en", "ja", "zh", "kr", "ku") for page in pages]
    trees = LanguageTrees.of(paths)
    assert trees.main == "en" and set(trees.languages) == {"en", "ja", "zh", "kr", "ku"}
    copies = [f"posts/{language}/cancellation.md" for language in ("kr", "ku", "en")]
    assert all(trees.copy(path) == Copy(path.split("/")[1], "posts/*/cancellation.md") for path in copies)
    assert (
        min(copies, key=lambda path: trees.preference(path, trees.query_language("요청을 취소하는 방법"))) == copies[0]
    )
    assert (
        min(copies, key=lambda path: trees.preference(path, trees.query_language("How do I cancel a request?")))
        == (copies[2])
    )
    assert copy_of("docs/jp/guide.md") == Copy("jp", "docs/*/guide.md")


def test_a_jekyll_language_collection_translates_the_collections_beside_it() -> None:
    """docs.scala-lang keeps its tour in the Jekyll collection _tour/ and each translation in a collection of its
    language: _zh-cn/tour/, _fr/tour/, _ja/overviews/collections/ for _overviews/collections/. No folder was a
    language, so "What is a case class?" showed the Chinese, French and Portuguese case-classes pages 2nd to 4th."""
    pages = ("_tour/case-classes.md", "_tour/traits.md", "_overviews/collections/arrays.md", "index.md")
    languages = ("zh-cn", "fr", "pt-br", "ja")
    paths = [*pages, "_sips/sips/001.md", "_includes/footer.md"]
    paths += [f"_{language}/{page.removeprefix('_')}" for language in languages for page in pages]
    trees = LanguageTrees.of(paths)
    assert trees.main == "" and set(trees.languages) == {"", *languages}
    assert copy_of("_fr/tour/case-classes.md") == Copy("fr", "*/_tour/case-classes.md")
    assert copy_of("_ja/index.md") == Copy("ja", "*/index.md") and language_folder("site/_ja")
    assert trees.copy("_tour/case-classes.md") == Copy(ORIGINAL, "*/_tour/case-classes.md")
    arrays = [f"_{language}/overviews/collections/arrays.md" for language in languages]
    arrays.append("_overviews/collections/arrays.md")
    asked = trees.query_language("What is a case class?")
    assert min(arrays, key=lambda path: trees.preference(path, asked)) == "_overviews/collections/arrays.md"
    assert trees.copy("_sips/sips/001.md") is None and copy_of("_includes/footer.md") is None


def test_a_repository_file_translated_beside_its_original_is_a_copy_of_it() -> None:
    """Code repositories translate their README and CONTRIBUTING beside the original: ent's README_zh.md,
    README_jp.md and README_kr.md, helm-www's README-ko.md, hertzbeat's README_CN.md. Each was a page of its own, so
    an English question on installing could show the Chinese README beside the English one. The name says what the
    page is, so one page makes its language, and the untagged original stays the main one; other names with a code
    after them are words (client-id.md, sort_ro.md, rotate-ca.md)."""
    paths = ["README.md", "README_zh.md", "README_kr.md", "docs/CONTRIBUTING.md", "docs/CONTRIBUTING-ja.md"]
    paths += ["docs/intro.md", "docs/client.md", "docs/client-id.md", "docs/sort.md", "docs/sort_ro.md"]
    trees = LanguageTrees.of(paths)
    assert trees.main == "" and set(trees.languages) == {"", "zh", "kr", "ja"}
    assert trees.copy("README_zh.md") == Copy("zh", "README.*.md", structural=True)
    assert trees.copy("README.md") == Copy(ORIGINAL, "README.*.md")
    assert trees.copy("docs/CONTRIBUTING-ja.md") == Copy("ja", "docs/CONTRIBUTING.*.md", structural=True)
    assert trees.copy("docs/client-id.md") is None and trees.copy("docs/sort_ro.md") is None
    readmes = ["README_zh.md", "README.md", "README_kr.md"]
    english = trees.query_language("How do I install it?")
    assert min(readmes, key=lambda path: trees.preference(path, english)) == "README.md"
    korean = trees.query_language("어떻게 설치하나요?")
    assert min(readmes, key=lambda path: trees.preference(path, korean)) == "README_kr.md"
    # ent keeps README_jp.md too: Han characters without kana are Chinese, whichever language has more pages
    both = LanguageTrees.of([*paths, "README_jp.md"])
    assert both.query_language("如何安装 ent 并生成第一个 schema？") == "zh"
    assert both.query_language("ent をインストールする方法") in ("ja", "jp")
    # vue-element-admin's README.es.md, README.ja.md beside README.md: a language of no tree of the site's; vant's
    # component pages README.zh-CN.md beside README.md are its suffix tree, counted as they were
    dotted = LanguageTrees.of(["README.md", "README.es.md", "README.ja.md", "src/views/intro.md"])
    assert dotted.main == "" and dotted.copy("README.es.md") == Copy("es", "README.*.md")
    vant = [f"src/{name}/README{suffix}.md" for name in ("button", "cell", "icon") for suffix in ("", ".zh-CN")]
    assert LanguageTrees.of(vant).counts == (("", 3), ("zh-cn", 3))
    # jx-docs: content/en/ is the site's main language, README.md and README_CN.md the repository's own
    docs = [f"content/{language}/docs/{page}" for language in ("en", "zh", "es") for page in PAGES]
    jx = LanguageTrees.of([*docs, "README.md", "README_CN.md"])
    assert jx.main == "en"
    assert min(["README_CN.md", "README.md"], key=lambda path: jx.preference(path, "en")) == "README.md"
    # a site whose Japanese tree holds more pages than its Chinese one: a question in Han alone is still Chinese
    site = [f"docs/{language}/{page}" for language in ("en", "ja") for page in PAGES]
    site = LanguageTrees.of([*site, *(f"docs/zh/{page}" for page in PAGES[:3])])
    assert site.languages.index("ja") < site.languages.index("zh")
    assert site.query_language("如何添加跨域") == "zh" and site.query_language("CORS を追加する方法") == "ja"


@pytest.mark.parametrize("root_locale", [True, False])
def test_starlight_versions_keep_each_languages_old_versions_inside_its_folder(root_locale: bool) -> None:
    """starlight-versions archives a version in src/content/docs/2.0/ and each locale's in <locale>/2.0/. With a root
    locale (English at the docs root) the French 2.0 pages were current French pages; with no root locale
    (meowrch's en/ and ru/, each with its 2.0/), a language folder was never a version tree, so no version was
    found and every 2.0 page stood as current."""
    docs = "src/content/docs"
    english = f"{docs}/" if root_locale else f"{docs}/en/"
    paths = [
        f"{folder}{version}{page}" for folder in (english, f"{docs}/fr/") for version in ("", "2.0/") for page in PAGES
    ]
    trees = LanguageTrees.of(paths, find_trees(paths, excluded=language_folder))
    english_code = ORIGINAL if root_locale else "en"
    assert trees.copy(f"{english}2.0/cli/run.md") == Copy(english_code, f"{docs}/*/cli/run.md", "2.0", structural=True)
    assert trees.copy(f"{docs}/fr/2.0/cli/run.md") == Copy("fr", f"{docs}/*/cli/run.md", "2.0", structural=True)
    assert trees.copy(f"{docs}/fr/cli/run.md") == Copy("fr", f"{docs}/*/cli/run.md", structural=True)
    assert trees.main == english_code


def test_a_function_word_of_several_languages_says_less_than_one_of_its_own() -> None:
    """OpenTelemetry's site holds Spanish and French trees: `un` is a function word of both, `qu'` and `est` of
    French alone, so a French question is French (it tied with Spanish, the larger tree, and went to it)."""
    pages = ("concepts/glossary.md", "concepts/traces.md", "collector/install.md")
    trees = LanguageTrees.of([f"content/{language}/docs/{page}" for language in ("en", "es", "fr") for page in pages])
    assert trees.query_language("Qu'est-ce qu'un span") == "fr"
    assert trees.query_language("¿Qué es un span?") == "es"
    assert trees.query_language("what is a span") == "en"


def test_the_main_language_has_the_most_pages_when_translations_are_complete() -> None:
    """FastAPI's docs/en/ beside complete translations: every language shares every translated page, so the shared
    count ties and German came first by name; English holds pages not translated yet, so it is the main language,
    and a query with no function words ("CORS middleware") is read as English."""
    translated = ("index.md", "tutorial/cors.md", "tutorial/body.md", "tutorial/first-steps.md")
    paths = [f"docs/{language}/docs/{page}" for language in ("de", "en", "es") for page in translated]
    paths += ["docs/en/docs/release-notes.md", "docs/en/docs/advanced/settings.md"]
    trees = LanguageTrees.of(paths)
    assert trees.main == "en"
    assert trees.query_language("CORS middleware") == "en"


def test_the_untagged_tree_stays_the_original_beside_a_larger_translation() -> None:
    """vuejs/router: packages/docs/ in English, packages/docs/zh/ with more pages (its generated API pages are
    translated, the English ones are not kept in the repository). The untagged tree is still the original."""
    guide = [f"guide/page{n}.md" for n in range(6)]
    paths = [f"packages/docs/{page}" for page in guide]
    paths += [f"packages/docs/zh/{page}" for page in [*guide, "api/index.md", "api/router.md", "api/link.md"]]
    trees = LanguageTrees.of(paths)
    assert trees.main == ""
    assert trees.query_language("router link active class") == ""
    bigger = paths + [f"packages/docs/zh/api/extra{n}.md" for n in range(6)]  # 15 pages to 6: the evidence says zh
    assert LanguageTrees.of(bigger).main == "zh"


def test_a_translated_plugin_without_its_original_does_not_make_the_translation_main() -> None:
    """KubeVela's site: docs/ in English beside i18n/zh/ translating docs (a few pages fewer), the blog, and a videos
    plugin whose English pages are not in the repository. Counting the 18 video pages made Chinese the main
    language, so English queries showed Chinese copies; only folders the untagged tree also holds count."""
    docs = [f"end-user/page{n}.md" for n in range(20)]
    paths = [f"docs/{page}" for page in docs] + ["blog/2021-09-02-post.md"]
    zh = "i18n/zh/docusaurus-plugin-content"
    paths += [f"{zh}-docs/current/{page}" for page in docs[:18]] + [f"{zh}-blog/2021-09-02-post.md"]
    paths += [f"{zh}-docs/version-v1.2/{page}" for page in docs[:15]]
    assert LanguageTrees.of(paths).main == ""
    videos = [f"{zh}-docs-videos/current/video{n}.md" for n in range(4)]
    assert LanguageTrees.of([*paths, *videos]).main == ""
    assert LanguageTrees.of([*paths, *videos, *(f"{zh}-docs/current/more{n}.md" for n in range(4))]).main == "zh"


def test_a_query_of_names_only_is_english_beside_an_original_in_another_language() -> None:
    """apache/rocketmq-site: docs/ in Chinese (the original, untagged) beside its English translation in i18n/en/.
    A query with no function words ("consumer group load balancing") was read as the original's language and showed
    the Chinese copy of a page; `en` being a tree of its own says the original is not English."""
    pages = [f"domain/page{n}.md" for n in range(6)]
    paths = [f"docs/{page}" for page in pages] + [
        f"i18n/en/docusaurus-plugin-content-docs/current/{page}" for page in pages
    ]
    trees = LanguageTrees.of(paths)
    assert trees.main == ""
    assert trees.query_language("consumer group load balancing") == "en"
    assert trees.query_language("how do I balance the load") == "en"
    assert trees.query_language("如何发送事务消息") == ""  # its script: the original's, no tree says Chinese
    # Nacos: docs/latest/zh-cn/ and en/, Chinese the main language by its pages: a Latin query is not Chinese
    nacos = [f"docs/latest/{language}/{page}" for language in ("zh-cn", "en") for page in pages]
    chinese_main = LanguageTrees.of([*nacos, "docs/latest/zh-cn/extra.md", "docs/latest/zh-cn/more.md"])
    assert chinese_main.main == "zh-cn"
    assert chinese_main.query_language("consumer group load balancing") == "en"
    assert chinese_main.query_language("如何发送事务消息") == "zh-cn"
    # EMQX: zh_CN/ (291 pages) beside en_US/ (288): the English tree under a regional code is English all the same
    emqx = [f"{language}/messaging/{page}" for language in ("zh_CN", "en_US") for page in pages]
    regional = LanguageTrees.of([*emqx, "zh_CN/messaging/extra.md", "zh_CN/messaging/more.md"])
    assert regional.main == "zh-cn"
    assert regional.query_language("MQTT retained messages") == "en-us"
    assert regional.query_language("如何发送保留消息") == "zh-cn"


def test_cn_is_chinese_as_sites_write_it() -> None:
    """apache/hugegraph-doc (Hugo): content/en/ and content/cn/ hold the same pages; `cn` is no ISO 639-1 code, so
    neither was a language tree and Chinese pages came up as pages of their own for English queries."""
    pages = [f"docs/page{n}.md" for n in range(6)]
    trees = LanguageTrees.of([f"content/{language}/{page}" for language in ("en", "cn") for page in pages])
    assert trees.main == "en"
    copy = trees.copy("content/cn/docs/page1.md")
    assert copy is not None and copy.language == "cn" and copy.page == "content/*/docs/page1.md"
    assert trees.query_language("如何安装") == "cn"
    assert trees.query_language("how do I install it") == "en"


def test_complete_translations_that_tie_make_english_main() -> None:
    """expressjs.com: src/content/docs/<lang>/5x/ in ten languages of 62 pages each, every count tied, so German
    was main by name and a query of names only ("express.static options") showed German pages."""
    pages = [f"guide/page{n}.md" for n in range(6)]
    languages = ("de", "en", "es", "fr", "ja", "zh-cn")
    paths = [f"src/content/docs/{language}/5x/{page}" for language in languages for page in pages]
    trees = LanguageTrees.of(paths)
    assert trees.main == "en"
    assert trees.query_language("express.static options") == "en"
    assert LanguageTrees.of([path for path in paths if "/en/" not in path]).main == "de"  # no English: by name


def test_a_three_letter_language_with_its_region_is_a_translation() -> None:
    """Starship: docs/ beside 21 Crowdin trees (de-DE/, ja-JP/...), Central Kurdish in docs/ckb-IR/, whose pages keep
    most of the English text. ckb-IR was no language, so its copies were hits of their own for English questions
    (3 of the first 8 for "How do I install starship on Linux?")."""
    pages = ("guide/README.md", "installing/README.md", "faq/README.md", "config/README.md")
    paths = [f"docs/{page}" for page in pages]
    paths += [f"docs/{language}/{page}" for language in ("de-DE", "ja-JP", "ckb-IR") for page in pages]
    trees = LanguageTrees.of(paths)
    assert trees.main == "" and set(trees.languages) == {"", "de-de", "ja-jp", "ckb-ir"}
    installing = ["docs/ckb-IR/installing/README.md", "docs/installing/README.md"]
    asked = trees.query_language("How do I install starship on Linux?")
    assert min(installing, key=lambda path: trees.preference(path, asked)) == "docs/installing/README.md"
