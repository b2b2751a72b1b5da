"""Dated posts beside a docs tree (issue 32): which folders are a blog's posts, on what evidence, and that a
repository that is only a blog has none to put after its docs. Pure: paths and front matter in, decisions out."""

from __future__ import annotations

from scree.content.posts import (
    DATE_NAME,
    FRONT_MATTER,
    YEAR_FOLDER,
    dated_front_matter,
    dated_name,
    find_posts,
)

DOCS = [f"docs/{name}.md" for name in ("intro", "install", "config", "cli", "api", "faq")]
JEST_BLOG = [f"website/blog/{date}-jest-{n}.md" for n, date in enumerate(("2016-04-12", "2020-05-05", "2025-06-04"))]


def test_dated_names() -> None:
    assert dated_name("website/blog/2025-06-04-jest-30.md")
    assert dated_name("_posts/20230405_release.md")
    assert dated_name("blog/2021-03-09-upgrade/index.md")  # a post as a folder with its index page
    assert dated_name("news/2023-04.md")
    assert not dated_name("docs/2048-game.md")
    assert not dated_name("docs/v2023.md")
    assert not dated_name("blog/2021-03-09-upgrade/images.md")


def test_a_date_named_blog_beside_docs_is_posts() -> None:
    posts = find_posts([*DOCS, *JEST_BLOG, "website/README.md"])
    assert [(f.root, f.pages, f.why) for f in posts.folders] == [("website/blog", 3, DATE_NAME)]
    assert posts.is_post("website/blog/2025-06-04-jest-30.md")
    assert not posts.is_post("docs/cli.md") and not posts.is_post("website/README.md")
    assert posts.describe() == (
        "website/blog/ (3 pages, date-named): shown after docs pages of similar rank (6 docs pages beside them)"
    )


def test_hugo_year_folders_and_front_matter_are_evidence_under_a_posts_name() -> None:
    hugo = [f"content/en/blog/{year}/post-{year}.md" for year in (2017, 2021, 2026)] + ["content/en/blog/_index.md"]
    posts = find_posts([*DOCS, *hugo])
    assert [(f.root, f.pages, f.why) for f in posts.folders] == [("content/en/blog", 4, YEAR_FOLDER)]
    undated = [f"news/{name}.md" for name in ("launch", "funding", "team")]
    heads = {path: "title: x\ndate: 2024-01-02\nauthor: Ann" for path in undated}
    assert find_posts([*DOCS, *undated], heads.get).folders[0].why == FRONT_MATTER
    assert not find_posts([*DOCS, *undated]).folders  # a name alone never decides
    dates_only = {path: "title: x\ndate: 2024-01-02" for path in undated}  # a Hugo docs page often has a date
    assert not find_posts([*DOCS, *undated], dates_only.get).folders
    # under a folder named for a blog a date alone dates a page (Kyverno's Astro blog gives no author); not under news/
    astro = [f"src/content/blog/{name}/index.md" for name in ("release-1.15", "security-audit", "kubecon")]
    heads = {path: "title: x\ndate: 2025-07-31" for path in astro}
    found = find_posts([*DOCS, *astro], heads.get).folders
    assert [(f.root, f.pages, f.why) for f in found] == [("src/content/blog", 3, "front matter date")]
    assert dated_front_matter("date: 2024-01-02\nauthors: [ann, bob]")
    assert dated_front_matter('date = 2020-09-11\nauthor = "Ann"')  # Hugo's TOML front matter
    assert not dated_front_matter(None)


def test_date_named_pages_in_a_folder_of_any_name_but_not_the_root() -> None:
    dated = [f"site/history/2023-0{month}-01-update.md" for month in range(1, 6)]
    posts = find_posts([*DOCS, *dated])
    assert [(f.root, f.why) for f in posts.folders] == [("site/history", DATE_NAME)]
    assert not find_posts([*DOCS, *dated[:4]]).folders  # fewer than MIN_DATED_NAMES
    at_root = [path.rsplit("/", 1)[-1] for path in dated]
    assert not find_posts([*DOCS, *at_root]).folders  # the root holds the docs too


def test_a_repository_that_is_only_a_blog_has_no_posts_to_put_after_docs() -> None:
    blog = [f"_posts/2024-0{month}-01-note.md" for month in range(1, 8)]
    posts = find_posts([*blog, "README.md", "about.md", "index.md", "contact.md"])
    assert not posts.folders and not posts.is_post(blog[0])
    assert posts.describe() == "_posts/ (7 pages), but no docs tree beside them: ranked as any page"
    assert find_posts(DOCS).describe().startswith("none found")
