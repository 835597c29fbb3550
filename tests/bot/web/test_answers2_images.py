"""Images in Markdown on the web pages (review 1, finding 8): an image inside a link
(``[![logo](https://x.example/a.png)](https://b.example/)``) rendered as one link nested inside
another (invalid HTML, and the browser picks which one a click follows), and an inline picture
(``![x](data:image/png;base64,...)``) became a ``data:`` link. Now an image inside a link is the
link's words only, and no ``data:`` address becomes a link or an image. Through the real daemon
(:class:`tests.support.browser.WebDaemon`, the offline model quoting the question in its answer)
and its chat stream, with the stream helper of ``tests/bot/web/test_web_review_fixes.py``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from aiohttp import ClientSession

from bot.web.render import markdown
from tests.bot.web.test_web_review_fixes import _chat_events
from tests.support.browser import WebDaemon
from tests.support.web_decisions import csrf_of, sign_in

DATA_URL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
QUESTION = f"Logo: [![logo](https://x.example/a.png)](https://b.example/) and a dot ![dot]({DATA_URL})"


def _well_formed(html: str) -> None:
    """No link inside a link, no ``data:`` address in a link or an image."""
    depth = 0
    for tag in re.findall(r"<(/?)a\b", html):
        depth += -1 if tag else 1
        assert depth <= 1, f"a link inside a link: {html}"
    assert not re.search(r"""(?:href|src)=["']?\s*data:""", html, re.IGNORECASE), html
    assert "<img" not in html, html


async def test_an_image_in_a_link_and_a_data_image_in_the_chat_stream(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        async with http.get(d.base + "/ui/meetings", headers=jar) as resp:
            csrf = csrf_of(await resp.text())
        headers = {"Cookie": jar["Cookie"], "X-CSRF-Token": csrf, "Content-Type": "application/json"}
        async with http.post(d.base + "/ui/chat/critic/messages", headers=headers,
                             data=json.dumps({"text": QUESTION, "client_id": "image-link-01"})) as resp:
            assert resp.status == 202, await resp.text()
        entries = await _chat_events(http, d, jar, "critic", "offline model", timeout=300)
        shown = [str(e["html"]) for e in entries if "b.example" in str(e.get("html"))]
        assert shown, entries
        for html in shown:
            _well_formed(html)
            assert '<a href="https://b.example/">logo</a>' in html, html


def test_the_rules_as_a_function() -> None:
    html = str(markdown(QUESTION + f" [a link]({DATA_URL}) [![](https://x.example/c.png)](https://c.example/)"))
    _well_formed(html)
    assert '<a href="https://b.example/">logo</a>' in html, html
    assert '<a href="https://c.example/">https://x.example/c.png</a>' in html, html
