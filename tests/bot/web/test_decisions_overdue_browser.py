"""The decisions page's overdue action item in a real browser (Chromium at 375 and 1280 px; issue 38): the row says
who owes the item and how late it is in the board's words ("the Chair owes it", "overdue by 1 hour"), once,
as /actions says it, instead of "OVERDUE ... (owner: general)". Screenshots under test-artifacts/web/."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from aiohttp import ClientSession

from board.clock import FakeClock
from board.schedule.work import parse_stamp
from tests.support.browser import Browser, WebDaemon, browser  # noqa: F401
from tests.support.web_decisions import hold_meeting, sign_in


def _row(b: Browser, base: str, item: int, width: int) -> str:
    b.size(width)
    b.driver.get(f"{base}/ui/decisions")
    [row] = b.wait_for(f"#a-{item}")
    b.driver.execute_script("arguments[0].scrollIntoView()", row)
    b.shot(f"decisions-overdue-{width}")
    return str(row.text)


async def test_an_overdue_item_reads_how_late_and_who_owes_it(tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        meeting_id = await hold_meeting(http, d, jar, "Should we renew the cloud contract?")
        item = (await d.board.parts.room.store.actions(meeting_id=meeting_id))[0]
        assert item.due_at is not None
        d.daemon.web.clock = FakeClock(parse_stamp(item.due_at) + timedelta(hours=1))
        await asyncio.to_thread(browser.sign_in, await d.link())
        for width in (375, 1280):
            text = await asyncio.to_thread(_row, browser, d.base, item.id, width)
            assert "overdue by 1 hour" in text and text.count("overdue") == 1, text
            assert "OVERDUE" not in text and "owner" not in text.lower(), text
