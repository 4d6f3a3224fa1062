"""Memory text made safe to show: Markdown without HTML, inert links, bounded sizes.

Memory text is untrusted (a session's prompt, a model's note, a file anyone can edit):
markdown-it-py renders it with raw HTML off, so a `<script>` in a body shows as text;
its link check leaves `javascript:`, `vbscript:`, `file:` and `data:` targets unlinked.
A huge line or body is cut before rendering, so a page costs what its screen shows.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it import MarkdownIt
from markupsafe import Markup, escape

MAX_BODY_CHARS = 60_000  # of a memory shown on its page
MAX_LINE_CHARS = 2_000  # of any one line of it
PREVIEW_CHARS = 300
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_WORD = re.compile(r"\w+", re.UNICODE)


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # "commonmark" with html off: raw HTML becomes text; tables for notes written by models.
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.validateLink = _safe_link
    return md


def _safe_link(url: str) -> bool:
    """Only web and in-page links are made links (markdown-it's own check, narrowed)."""
    target = url.strip().lower()
    scheme = re.match(r"^([a-z][a-z0-9+.-]*):", target)
    return scheme is None or scheme.group(1) in ("http", "https", "mailto")


def bounded(text: str, max_chars: int = MAX_BODY_CHARS, max_line: int = MAX_LINE_CHARS) -> tuple[str, bool]:
    """`text` cut to `max_chars`, each line to `max_line`; and whether anything was cut."""
    cut = len(text) > max_chars
    text = text[:max_chars]
    lines = text.split("\n")
    long = [i for i, line in enumerate(lines) if len(line) > max_line]
    for i in long:
        lines[i] = lines[i][:max_line] + " …"
    return "\n".join(lines), cut or bool(long)


def markdown(text: str) -> Markup:
    """HTML for a memory's Markdown body: escaped, bounded, links checked."""
    body, cut = bounded(text)
    html = _markdown().render(body)
    if cut:
        html += '<p class="cut">… (cut here: the rest is in the file)</p>'
    return Markup(html)  # noqa: S704 - markdown-it escaped the text (html off)


def query_words(query: str) -> list[str]:
    """The pieces of a query to mark in a result: its words, and for CJK text the character
    pairs the index matches on (a two-character word inside a longer run)."""
    words: set[str] = set()
    for word in _WORD.findall(query):
        if _CJK.search(word) and len(word) > 2:
            words.update(word[i : i + 2] for i in range(len(word) - 1))
        if len(word) > 1 or _CJK.search(word):
            words.add(word)
    return sorted(words, key=lambda w: (-len(w), w))[:40]


def highlight(text: str, words: list[str], limit: int = PREVIEW_CHARS) -> Markup:
    """`text` (cut to `limit`) escaped, with every occurrence of `words` in <mark>."""
    text = text[:limit] + ("…" if len(text) > limit else "")
    if not words:
        return escape(text)
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    out: list[str] = []
    last = 0
    for match in pattern.finditer(text):
        out.append(str(escape(text[last : match.start()])))
        out.append(f"<mark>{escape(match.group(0))}</mark>")
        last = match.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))  # noqa: S704 - every piece escaped above
