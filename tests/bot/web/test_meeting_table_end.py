"""A meeting that stored its end takes nothing more from its page, while its task still tells its subscribers.

Seen in a full run: the live page said the meeting ended (a display was told ENDED at once, each subscriber on a
lane of its own), yet a contribution posted then was accepted (200, "the board hears it in the next round"): the
page asked whether the meeting's task was still running, and it was, while slower bookkeeping heard the end. A
real daemon in this process (:class:`tests.support.browser.WebDaemon`), the owner signed in with the real
``sabha web link``; one subscriber holds the end until the test has posted.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout

from board.room.meeting import MeetingEvent, MeetingEventKind
from tests.support.browser import WebDaemon
from tests.support.telegram import eventually
from tests.support.web_decisions import csrf_of, sign_in

JSON = {"Accept": "application/json"}


async def test_a_contribution_after_the_stored_end_is_refused_while_bookkeeping_still_hears_it(
        tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession(timeout=ClientTimeout(total=60)) as http:
        room = d.board.parts.room
        ended = asyncio.Event()
        release = asyncio.Event()

        async def slow_bookkeeping(event: MeetingEvent) -> None:
            if event.kind == MeetingEventKind.ENDED:
                ended.set()
                await release.wait()  # its task keeps running, the end already stored

        room.subscribe(slow_bookkeeping)
        meeting_id = room.start("Open a Pune office?").id
        try:
            await asyncio.wait_for(ended.wait(), 120)  # bounds a hang only
            assert meeting_id in room.running()  # still running here: the subscriber holds its end
            assert (await d.board.parts.room.store.get(meeting_id)).status == "ended"  # type: ignore[union-attr]
            jar = await sign_in(http, d)
            async with http.get(f"{d.base}/ui/meetings/{meeting_id}", headers=jar) as resp:
                page = await resp.text()
            found = re.search(r'name="message_id" value="([^"]+)"', page)
            said = {"csrf": csrf_of(page), "message_id": found.group(1) if found else "late-1", "text": "One more"}
            async with http.post(f"{d.base}/ui/meetings/{meeting_id}/say", data=said,
                                 headers={**jar, **JSON}) as resp:
                body = await resp.text()
                assert resp.status == 409 and "ended" in body, body
            async with http.post(f"{d.base}/ui/meetings/{meeting_id}/control", data={"csrf": said["csrf"],
                                 "kind": "extend"}, headers={**jar, **JSON}) as resp:
                assert resp.status == 409, await resp.text()
        finally:
            release.set()
        await eventually(lambda: not room.running(), "the meeting's task done")
