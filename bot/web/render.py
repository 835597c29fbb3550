"""Rendering for the web pages: the Jinja2 environment, safe Markdown, the cost chart as SVG.

The environment autoescapes everything and is separate from the sandboxed prompt environment
(:mod:`board.workspace.prompt`): templates here are the daemon's own, under ``bot/web/templates``.
Markdown from models and people is rendered by markdown-it-py in CommonMark mode with raw HTML
off (``html=False``: a ``<script>`` in an answer shows as text) and its default link check
(no ``javascript:`` or ``data:`` links). An image in that Markdown (``![alt](url)``) becomes a
plain link to it (``rel="nofollow noopener"``, the alt text as its words, else the address):
the pages never fetch what an answer or a message points at, from another host or from this
one (``![x](/ui/logout)``); the pages' own images are in their templates, not in Markdown.
The cost chart is drawn here as an SVG string of bars: no script, no outside resource.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

__all__ = ["TEMPLATES", "bar_chart", "environment", "markdown", "render_page"]

TEMPLATES = Path(__file__).parent / "templates"


def _image_as_link(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """markdown-it's ``image`` rule for the pages: the image as a link to it, never an ``<img>``."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    words = self.renderInlineAsText(token.children or [], options, env) or src
    title = token.attrGet("title")
    title_attr = f' title="{html.escape(str(title))}"' if title else ""
    return f'<a href="{html.escape(src)}" rel="nofollow noopener"{title_attr}>{html.escape(words)}</a>'


@functools.cache
def _md() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
    md.add_render_rule("image", _image_as_link)
    return md


def markdown(text: str | None) -> Markup:
    """``text`` (Markdown from anyone) as safe HTML."""
    return Markup(_md().render(text or ""))  # html=False: markdown-it escapes every raw tag


def _money(value: float | None) -> str:
    return f"${value or 0:,.4f}" if (value or 0) < 1 else f"${value:,.2f}"


@functools.cache
def environment() -> Environment:
    """The pages' Jinja2 environment (autoescape on, undefined names are errors)."""
    from jinja2 import StrictUndefined

    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["markdown"] = markdown
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
