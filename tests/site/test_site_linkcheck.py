"""The built site's link check finds what is broken (a missing page, a missing anchor, an absolute
path) and lists external links without fetching them."""

from __future__ import annotations

from tools.site.linkcheck import check_site, write_report


def _site(tmp_path, links: str):
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "_static").mkdir()
    (tmp_path / "index.html").write_text(f'<html><body><h1 id="top">Top</h1>{links}</body></html>')
    (tmp_path / "docs" / "page.html").write_text('<section id="there"><a href="../index.html#top">up</a></section>')
    (tmp_path / "_static" / "macros.html").write_text('<a href="{{ pathto(x) }}">a template, not a page</a>')
    return tmp_path


def test_a_good_site_passes(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.html").write_text("<p>a folder's page</p>")
    links = ('<a href="docs/page.html#there">a</a><a href="#top">b</a><a href="docs/">c</a>'
             '<a href="https://example.org/x">d</a><img src="docs/page.html"><a href="#">e</a>')
    report = check_site(_site(tmp_path, links))
    assert report.broken == []
    assert report.internal == 6 and report.pages == 3 and set(report.external) == {"https://example.org/x"}


def test_each_broken_kind_is_found(tmp_path):
    report = check_site(_site(tmp_path, '<a href="docs/page.html#nowhere">a</a><a href="docs/gone.html">b</a>'
                                        '<a href="#missing">c</a><a href="/docs/page.html">d</a><img src="x.png">'))
    found = {(link, why.split(" ")[0]) for _, link, why in report.broken}
    assert found == {("docs/page.html#nowhere", "no"), ("docs/gone.html", "no"), ("#missing", "no"),
                     ("/docs/page.html", "an"), ("x.png", "no")}
    whys = " ".join(why for _, _, why in report.broken)
    assert "no anchor #nowhere in docs/page.html" in whys and "no anchor #missing in index.html" in whys


def test_external_links_are_listed_not_fetched(tmp_path):
    report = check_site(_site(tmp_path, '<a href="https://unreachable.invalid/page">x</a>'))
    assert report.broken == [] and report.external == {"https://unreachable.invalid/page": {"index.html"}}
    write_report(report, tmp_path / "report" / "links.txt")
    assert "https://unreachable.invalid/page  <- index.html" in (tmp_path / "report" / "links.txt").read_text()
