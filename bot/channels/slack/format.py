"""Markdown (what the models write) as Slack mrkdwn, and long texts split to a size Slack shows whole.

Slack's mrkdwn has ``*bold*``, ``_italic_``, ``~strike~``, `` `code` ``, fenced ```` ``` ```` blocks,
``<url|label>`` links and ``>`` quotes; ``&``, ``<`` and ``>`` in text must be escaped. :func:`to_mrkdwn`
parses the Markdown with markdown-it (CommonMark, raw HTML off, strikethrough on) and writes each token in
mrkdwn: headings become bold lines, bullets ``•``, numbered lists keep their numbers, images their link.
It never fails: should rendering break on some input, the text goes as it is, escaped.
:func:`split_text` cuts a body over :data:`MAX_TEXT` characters at paragraph, then line, then word
boundaries; a cut inside a code block closes it and opens it again in the next part.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = ["MAX_TEXT", "escape", "split_text", "to_mrkdwn"]

log = logging.getLogger("sabha.slack")

#: Characters in one message: Slack truncates ``text`` at 40,000 and advises at most 4,000 for it to read well.
MAX_TEXT = 3900
_FENCE = "```"
_MD = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("strikethrough")
_INLINE_MARKS = {"strong_open": "*", "strong_close": "*", "em_open": "_", "em_close": "_", "s_open": "~",
                 "s_close": "~"}


def escape(text: str) -> str:
    """``text`` with Slack's three control characters escaped (``&``, ``<``, ``>``)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_mrkdwn(markdown: str) -> str:
    """``markdown`` in Slack's mrkdwn (see the module docstring)."""
    try:
        return _Writer(_MD.parse(markdown)).write().strip("\n")
    except Exception:
        log.warning("slack: could not render a text as mrkdwn; sent as plain text", exc_info=True)
        return escape(markdown)


class _Writer:
    """Walks markdown-it's block tokens and writes mrkdwn."""

    def __init__(self, tokens: Sequence[Token]) -> None:
        self.tokens = tokens
        self.out: list[str] = []
        self.lists: list[list[int]] = []  # a counter per open list (-1: bullets)
        self.quote = 0
        self.line_start = True

    def write(self) -> str:
        for token in self.tokens:
            self._block(token)
        return "".join(self.out)

    def _emit(self, text: str) -> None:
        if not text:
            return
        if self.quote:
            prefix = "> " * self.quote
            lines = text.split("\n")
            text = "\n".join((prefix if (i or self.line_start) and line else "") + line
                             for i, line in enumerate(lines))
        self.out.append(text)
        self.line_start = text.endswith("\n")

    def _block(self, t: Token) -> None:
        kind = t.type
        if kind == "inline":
            self._emit(_inline(t.children or []))
        elif kind == "heading_open":
            self._emit("*")
        elif kind == "heading_close":
            self._emit("*\n\n")
        elif kind == "paragraph_close":
            self._emit("\n" if (self.lists and t.hidden) or self.quote else "\n\n")
        elif kind in ("bullet_list_open", "ordered_list_open"):
            start = int(t.attrGet("start") or 1) if kind == "ordered_list_open" else -1
            self.lists.append([start])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            self.lists.pop()
            if not self.lists:
                self._emit("\n")
        elif kind == "list_item_open":
            counter = self.lists[-1]
            mark = "•" if counter[0] < 0 else f"{counter[0]}."
            if counter[0] >= 0:
                counter[0] += 1
            self._emit("    " * (len(self.lists) - 1) + mark + " ")
        elif kind in ("fence", "code_block"):
            self._emit(f"{_FENCE}\n{escape(t.content.rstrip(chr(10)))}\n{_FENCE}\n\n")
        elif kind == "blockquote_open":
            self.quote += 1
        elif kind == "blockquote_close":
            self.quote -= 1
            if not self.quote:
                self._emit("\n")
        elif kind == "hr":
            self._emit("───\n\n")
        elif kind == "html_block":
            self._emit(escape(t.content))


def _inline(children: Sequence[Token]) -> str:
    out: list[str] = []
    href: list[str] = []
    for t in children:
        kind = t.type
        if kind == "text":
            out.append(escape(t.content))
        elif kind in _INLINE_MARKS:
            out.append(_INLINE_MARKS[kind])
        elif kind == "code_inline":
            out.append(f"`{escape(t.content)}`" if "`" not in t.content else escape(t.content))
        elif kind == "softbreak" or kind == "hardbreak":
            out.append("\n")
        elif kind == "link_open":
            href.append(str(t.attrGet("href") or ""))
            out.append("\x00")
        elif kind == "link_close":
            url = href.pop() if href else ""
            start = len(out) - 1 - out[::-1].index("\x00")
            label = "".join(out[start + 1:]).replace("|", "¦")
            del out[start:]
            out.append(_link(url, label))
        elif kind == "image":
            out.append(_link(str(t.attrGet("src") or ""), escape(t.content or "image")))
        elif kind == "html_inline":
            out.append(escape(t.content))
    return "".join(out)


def _link(url: str, label: str) -> str:
    if not url.startswith(("http://", "https://", "mailto:")):
        return label or escape(url)
    url = url.replace("&", "&amp;").replace("|", "%7C").replace(">", "%3E").replace("<", "%3C")
    return f"<{url}|{label}>" if label and label != url else f"<{url}>"


def split_text(text: str, limit: int = MAX_TEXT) -> list[str]:
    """``text`` in parts of at most ``limit`` characters (see the module docstring); [] for blank text."""
    text = text.strip()
    if not text:
        return []
    parts: list[str] = []
    while len(text) > limit:
        cut = _cut(text, limit - len(_FENCE) - 1)
        head, text = text[:cut].rstrip(), text[cut:].lstrip("\n ")
        if head.count(_FENCE) % 2:  # the cut is inside a code block: close it here, open it again there
            head, text = f"{head}\n{_FENCE}", f"{_FENCE}\n{text}"
        parts.append(head)
    parts.append(text)
    return [p for p in parts if p.strip()]


def _cut(text: str, limit: int) -> int:
    for sep in ("\n\n", "\n", " "):
        at = text.rfind(sep, 0, limit)
        if at > limit // 3:
            return at
    return limit
