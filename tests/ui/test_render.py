"""Memory text made safe: Markdown without HTML, links only to the web, bounded sizes."""

from __future__ import annotations

import pytest

from daemon.ui.render import MAX_LINE_CHARS, highlight, markdown, query_words


@pytest.mark.parametrize(
    "link",
    [
        "javascript:alert(1)", "JaVaScRiPt:alert(1)", "&#106;avascript:alert(1)", "javascript&colon;alert(1)",
        "vbscript:msgbox(1)", "data:text/html;base64,PHNjcmlwdD4=", "file:///etc/passwd",
    ],
)  # fmt: skip
def test_no_link_but_to_the_web_is_made(link: str) -> None:
    for text in (f"[click]({link})", f"<{link}>", f"[click][r]\n\n[r]: {link}", f"![img]({link})"):
        html = str(markdown(text))
        assert "<a " not in html and "<img" not in html, (text, html)


def test_web_links_stay_links_and_raw_html_is_text() -> None:
    html = str(markdown("[docs](https://example.com/a?b=1) <b onclick=x>bold</b>\n\n<script>x()</script>"))
    assert '<a href="https://example.com/a?b=1">docs</a>' in html
    assert "&lt;b onclick=x&gt;" in html and "&lt;script&gt;" in html and "<script" not in html


def test_a_huge_line_and_a_huge_body_are_cut_before_rendering() -> None:
    html = str(markdown("y" * 100_000 + "\n\n" + "z " * 100_000))
    assert "y" * MAX_LINE_CHARS in html and "y" * (MAX_LINE_CHARS + 1) not in html
    assert len(html) < 70_000 and "cut here" in html


def test_marks_are_escaped_and_find_cjk_pairs_inside_longer_runs() -> None:
    words = query_words("部署环境 <b>")
    assert "部署" in words and "环境" in words
    marked = str(highlight("<b>生产部署</b> ok", words))
    assert marked == "&lt;b&gt;生产<mark>部署</mark>&lt;/b&gt; ok"  # one letter is no word to mark
