"""Images in Markdown never load from another host (issue item 9, the web half): an image a person
writes or a model answers with (``![pixel](https://other-host.example/p.png)``) shows on the web
pages and in the web chat's stream as a plain link to it (``rel="nofollow noopener"``, its alt text
as the words), not as an ``<img>`` the browser would fetch (only the CSP stopped that). Through the
real daemon (:class:`tests.support.browser.WebDaemon`, ``sabha run`` in this process on the offline
model, which quotes the question in its answer) and a plain aiohttp client signed in with a link
from the real ``sabha web link``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from aiohttp import ClientSession

from bot.web.render import markdown
from tests.bot.web.test_web_review_fixes import _chat_events
from tests.support.browser import WebDaemon
from tests.support.web_decisions import csrf_of, sign_in

PIXEL = "https://other-host.example/p.png?who=owner"
QUESTION = f"Is this right? ![pixel]({PIXEL}) and ![icon](/ui/logout)"
LINK = '<a href="https://other-host.example/p.png?who=owner" rel="nofollow noopener">pixel</a>'


def _no_outside_image(html: str) -> None:
    assert not re.search(r"<img\b[^>]*other-host", html), html
    assert not re.search(r"<img\b[^>]*/ui/logout", html), html  # a same-site GET is no better
    assert LINK in html, html


async def test_an_image_in_the_chat_stream_and_on_the_pages_is_a_link(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        async with http.get(d.base + "/ui/meetings", headers=jar) as resp:
            csrf = csrf_of(await resp.text())
        headers = {"Cookie": jar["Cookie"], "X-CSRF-Token": csrf, "Content-Type": "application/json"}
        async with http.post(d.base + "/ui/chat/critic/messages", headers=headers,
                             data=json.dumps({"text": QUESTION, "client_id": "image-question-01"})) as resp:
            assert resp.status == 202, await resp.text()
        entries = await _chat_events(http, d, jar, "critic", "offline model", timeout=120)
        reply = entries[-1]
        assert reply.get("kind") == "answer" and "other-host.example" in str(reply.get("text")), reply
        _no_outside_image(str(reply["html"]))

        async with http.get(d.base + "/ui/sessions", headers=jar) as resp:
            listing = await resp.text()
        pages = []
        for sid in dict.fromkeys(re.findall(r'href="/ui/sessions/([^"]+)"', listing)):
            async with http.get(f"{d.base}/ui/sessions/{sid}", headers=jar) as resp:
                assert resp.status == 200
                pages.append(await resp.text())
        shown = [p for p in pages if "other-host.example" in p]
        assert shown, "the conversation is on no page"
        for page in shown:
            _no_outside_image(page)


def test_the_image_rule_as_a_function() -> None:
    html = str(markdown('![a *bold* "chart"](https://x.example/c.png "Q3") ![](https://x.example/y.png) '
                        "![z](javascript:alert(1)) <img src=https://x.example/raw.png>"))
    assert "<img" not in html.replace("&lt;img", ""), html
    assert '<a href="https://x.example/c.png" rel="nofollow noopener" title="Q3">a bold &quot;chart&quot;</a>' in html
    assert '<a href="https://x.example/y.png" rel="nofollow noopener">https://x.example/y.png</a>' in html
    assert 'href="javascript' not in html and 'src="javascript' not in html
