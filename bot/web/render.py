"""Rendering for the web pages: the Jinja2 environment, safe Markdown, the cost chart as SVG.

The environment autoescapes everything and is separate from the sandboxed prompt environment
(:mod:`board.workspace.prompt`): templates here are the daemon's own, under ``bot/web/templates``.
Markdown from models and people is rendered by markdown-it-py in CommonMark mode with raw HTML
off (``html=False``: a ``<script>`` in an answer shows as text) and a link check stricter than
its default: no ``javascript:``, ``vbscript:``, ``file:`` nor any ``data:`` address (markdown-it
lets ``data:image/png`` through) becomes a link or an image; such Markdown stays text. An image
in that Markdown (``![alt](url)``) becomes a plain link to it (``rel="nofollow noopener"``, the
alt text as its words, else the address): the pages never fetch what an answer or a message
points at, from another host or from this one (``![x](/ui/logout)``); an image inside a link
(``[![logo](a.png)](https://b)``) is that link's words only, never a link inside a link. The
pages' own images are in their templates, not in Markdown. ``breaks=True`` (the web chat) renders each line
break as a break, as chat apps do, where CommonMark joins the lines of a paragraph.
The cost chart is drawn here as an SVG string of bars: no script, no outside resource.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

__all__ = ["TEMPLATES", "bar_chart", "environment", "inline_markdown", "markdown", "plain_text", "render_page"]

TEMPLATES = Path(__file__).parent / "templates"


_BAD_ADDRESS = re.compile(r"^\s*(?:javascript|vbscript|file|data):", re.IGNORECASE)


def _safe_address(url: str) -> bool:
    """markdown-it's link check for the pages: no script, local file or inline ``data:`` address."""
    return not _BAD_ADDRESS.match(url)


def _inside_link(tokens: Any, idx: int) -> bool:
    """Whether inline token ``idx`` sits between a ``link_open`` and its ``link_close``."""
    depth = 0
    for token in tokens[:idx]:
        depth += {"link_open": 1, "link_close": -1}.get(token.type, 0)
    return depth > 0


def _image_as_link(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """markdown-it's ``image`` rule for the pages: the image as a link to it, never an ``<img>``; inside
    a link, its words only (the outer link is the one a click follows)."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    words = self.renderInlineAsText(token.children or [], options, env) or src
    if _inside_link(tokens, idx):
        return html.escape(words)
    title = token.attrGet("title")
    title_attr = f' title="{html.escape(str(title))}"' if title else ""
    return f'<a href="{html.escape(src)}" rel="nofollow noopener"{title_attr}>{html.escape(words)}</a>'


@functools.cache
def _md(breaks: bool = False) -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "breaks": breaks})
    md.enable("table")
    md.add_render_rule("image", _image_as_link)
    md.validateLink = _safe_address  # type: ignore[method-assign]
    return md


def markdown(text: str | None, *, breaks: bool = False) -> Markup:
    """``text`` (Markdown from anyone) as safe HTML (``breaks``: a line break stays a break)."""
    return Markup(_md(breaks).render(text or ""))  # html=False: markdown-it escapes every raw tag


def inline_markdown(text: str | None) -> Markup:
    """One line of Markdown (a refusal, a note: a command in backticks becomes code) as safe HTML, with no
    paragraph around it."""
    return Markup(_md().renderInline(text or ""))


def plain_text(text: str | None) -> str:
    """``text`` (Markdown) as the words a reader sees, without its syntax (``**`` ``#`` backticks...): for a
    one-line preview."""
    words: list[str] = []
    for block in _md().parse(text or ""):
        for token in block.children or ():
            if token.type in ("text", "code_inline"):
                words.append(token.content)
            elif token.type in ("softbreak", "hardbreak"):
                words.append(" ")
        if block.type == "fence" or block.type == "code_block":
            words.append(block.content)
        if block.type.endswith("_close") and block.block:
            words.append(" ")
    return " ".join("".join(words).split())


def _money(value: float | None) -> str:
    if not value:
        return "$0"
    return f"${value or 0:,.4f}" if (value or 0) < 1 else f"${value:,.2f}"


@functools.cache
def environment() -> Environment:
    """The pages' Jinja2 environment (autoescape on, undefined names are errors)."""
    from jinja2 import StrictUndefined

    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["markdown"] = markdown
    env.filters["inline_markdown"] = inline_markdown
    env.filters["money"] = _money
    return env


def render_page(name: str, **context: Any) -> str:
    """Render template ``name`` with ``context``."""
    return environment().get_template(name).render(**context)


def parts(name: str) -> Any:
    """The macros of template ``name`` (for fragments the live page swaps in)."""
    return environment().get_template(name).module


def bar_chart(rows: Sequence[tuple[str, float]], *, title: str, width: int = 420, bar: int = 20) -> Markup:
    """A horizontal bar chart of ``(label, dollars)`` as inline SVG (scales with its box; drawn about a
    phone's width so its text stays readable at 375 px)."""
    label_w, value_w, gap = 100, 72, 6
    height = max(1, len(rows)) * (bar + gap) + 30
    top = max((v for _, v in rows), default=0.0) or 1.0
    span = width - label_w - value_w
    out = [f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" preserveAspectRatio="xMinYMin meet" '
           f'xmlns="http://www.w3.org/2000/svg" aria-labelledby="t-{abs(hash(title))}">',
           f'<title id="t-{abs(hash(title))}">{html.escape(title)}</title>']
    if not rows:
        out.append('<text x="0" y="20" class="chart-label">nothing spent in this period</text>')
    for i, (label, value) in enumerate(rows):
        y = 10 + i * (bar + gap)
        w = max(1.0, span * value / top) if value > 0 else 0.0
        out.append(f'<text x="{label_w - 8}" y="{y + bar * 0.7:.1f}" text-anchor="end" class="chart-label">'
                   f'{html.escape(label[:14])}</text>')
        out.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar}" rx="3" class="chart-bar">'
                   f'<title>{html.escape(label)}: {html.escape(_money(value))}</title></rect>')
        out.append(f'<text x="{label_w + w + 6:.1f}" y="{y + bar * 0.7:.1f}" class="chart-value">'
                   f'{html.escape(_money(value))}</text>')
    out.append("</svg>")
    return Markup("".join(out))  # every text in it is escaped above
