"""Parallel language trees (#11): which language a path is in, the site's main language, the query's language, and
the first sync's order. Pure: no I/O."""

from __future__ import annotations

from scree.content.languages import Copy, LanguageTrees, copy_of

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


def test_trees_need_pages_shared_between_languages() -> None:
    trees = LanguageTrees.of(FASTAPI)
    assert trees.main == "en"
    assert set(trees.languages) == {"en", "tr", "pt-br"}  # zh shares only one page: not yet a tree
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
