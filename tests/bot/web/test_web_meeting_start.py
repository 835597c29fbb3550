"""The web's New meeting form over ``board.meetings.confirm_over_usd`` (the real daemon in this process, the
offline model priced in ``llm.prices``): the form does not start the meeting, it sends the owner to the chair's
web chat, where the estimate waits with Start and Cancel buttons; no model call is made until the Start button's
command is sent from that chat (as the page's button does), which starts the meeting once."""

from __future__ import annotations

import json
import re
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout

from tests.support.browser import WebDaemon
from tests.support.telegram import eventually
from tests.support.web_chat import post_message
from tests.support.web_decisions import csrf_of, sign_in

GATED = ["llm:", "  model: offline", "  prices:", "    offline: {input: 100, output: 400}",
         "board:", "  meetings:", "    confirm_over_usd: 0.05", "    budget_usd: 1000"]


async def _outbox(d: WebDaemon) -> list[dict[str, object]]:
    rows = await d.board.parts.db.fetchall(
        "SELECT kind, body, buttons FROM web_chat_outbox WHERE conversation = 'general' ORDER BY seq")
    return [dict(r) for r in rows]


async def test_the_new_meeting_form_waits_for_start_in_the_chairs_chat(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path, extra=GATED) as d, ClientSession(timeout=ClientTimeout(total=30)) as http:
        jar = await sign_in(http, d)
        async with http.get(d.base + "/ui/meetings/new", headers=jar) as resp:
            page = await resp.text()
        nonce = re.search(r'name="nonce" value="([^"]+)"', page)
        assert nonce, page[:500]
        csrf = csrf_of(page)
        form = {"topic": "Should we open a Pune office?", "roster": "board", "rounds": "2", "mode": "parallel",
                "csrf": csrf, "nonce": nonce.group(1)}
        async with http.post(d.base + "/ui/meetings", data=form, headers=jar, allow_redirects=False) as resp:
            assert resp.status == 303, await resp.text()
            assert resp.headers["Location"] == "/ui/chat/general"

        async def asked() -> bool:
            return any(r["buttons"] for r in await _outbox(d))

        await eventually(asked, "the estimate with its buttons in the chair's chat")
        [ask] = [r for r in await _outbox(d) if r["buttons"]]
        assert json.loads(str(ask["buttons"])) == [["Start", "/start_meeting 1"], ["Cancel", "/cancel_meeting 1"]]
        assert "2 rounds in parallel" in str(ask["body"]) and "Expected: about $" in str(ask["body"])
        assert d.model is not None and d.model.calls == 0  # nothing spent
        assert await d.board.parts.room.store.list(5) == []

        status, _ = await post_message(http, d.base, "general", "/start_meeting 1", csrf=csrf, cookie=jar["Cookie"])
        assert status in (200, 201, 202), status

        async def started() -> bool:
            return bool(await d.board.parts.room.store.list(5))

        await eventually(started, "the meeting started by the Start button's command")
        [meeting] = await d.board.parts.room.store.list(5)
        assert meeting.topic == "Should we open a Pune office?"
        await d.board.parts.room.drain(120)
        assert d.model.calls > 0
