"""The live meeting stream (SSE): replay then follow, resume with Last-Event-ID without gaps or
repeats, 50 watchers at once, a slow watcher dropped without slowing the meeting.

A real daemon in this process on the gated offline model, plain aiohttp clients.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, ClientTimeout

from board.room.meeting.events import MeetingEvent, MeetingEventKind
from bot.web.auth import COOKIE
from bot.web.meeting_feed import MeetingFeed
from tests.support.browser import WebDaemon

HTML = {"Accept": "text/html"}


async def _signed_in(http: ClientSession, d: WebDaemon) -> dict[str, str]:
    link = await d.link()
    async with http.post(f"{d.base}/ui/login", data={"token": link.split("token=")[1]}, allow_redirects=False) as r:
        found = re.search(rf"{COOKIE}=([^;]+)", r.headers["Set-Cookie"])
    assert found
    return {"Cookie": f"{COOKIE}={found.group(1)}"}


async def _start(http: ClientSession, d: WebDaemon, jar: dict[str, str], topic: str) -> str:
    async with http.get(d.base + "/ui/meetings/new", headers={**HTML, **jar}) as resp:
        csrf = re.search(r'name="csrf" value="([^"]+)"', await resp.text())
    assert csrf
    async with http.post(d.base + "/ui/meetings", data={"topic": topic, "roster": "board", "rounds": "2",
                                                        "mode": "parallel", "csrf": csrf.group(1)},
                         headers={**HTML, **jar}, allow_redirects=False) as resp:
        assert resp.status == 303
        return str(resp.headers["Location"]).rsplit("/", 1)[1]


async def _read(http: ClientSession, url: str, headers: dict[str, str], *, until: Any) -> list[dict[str, Any]]:
    """SSE messages (with their ``id``) until ``until(message)`` is true or the stream ends."""
    got: list[dict[str, Any]] = []
    async with http.get(url, headers=headers, timeout=ClientTimeout(total=60)) as resp:
        assert resp.status == 200 and resp.content_type == "text/event-stream"
        block: dict[str, str] = {}
        async for raw in resp.content:
            line = raw.decode().rstrip("\n")
            if line.startswith(("id:", "data:", "event:")):
                key, _, value = line.partition(": ")
                block[key] = value
            elif not line and block:
                message = {**json.loads(block.get("data", "{}")), "id": block.get("id")}
                block = {}
                got.append(message)
                if until(message):
                    break
    return got


def _hold_after(d: WebDaemon, statements: int) -> Counter[str]:
    seen: Counter[str] = Counter()

    async def hold(event: MeetingEvent) -> None:
        seen[str(event.kind)] += 1
        if seen["agent_spoke"] >= statements and not seen["held"] and d.model is not None:
            seen["held"] += 1  # once: after the test releases it, the meeting runs to its end
            d.model.hold()

    d.board.parts.room.subscribe(hold)
    return seen


async def test_a_dropped_stream_resumes_without_gaps_or_repeats(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await _signed_in(http, d)
        seen = _hold_after(d, 2)
        meeting = await _start(http, d, jar, "Should we hire a second engineer?")
        url = f"{d.base}/ui/meetings/{meeting}/events"
        first = await _read(http, url, jar, until=lambda m: m["kind"] == "agent_spoke")  # then the tab closes
        for _ in range(500):  # the 2nd statement (which holds the model) may come after the 1st reached us
            if seen["held"]:
                break
            await asyncio.sleep(0.02)
        assert seen["held"] and meeting in d.board.parts.room.running() and seen["ended"] == 0  # closed mid-meeting
        assert d.model is not None
        d.model.release()
        rest = await _read(http, url, {**jar, "Last-Event-ID": first[-1]["id"]}, until=lambda m: m.get("ended"))
        seqs = [int(m["id"]) for m in first + rest]
        assert seqs == list(range(1, len(seqs) + 1))  # no gap, no repeat
        assert rest[-1]["kind"] == "ended"
        log = d.daemon.web.feed.log(meeting)
        assert log is not None and log.last_seq == seqs[-1]
        statements = [m for m in first + rest if m["kind"] == "agent_spoke"]
        appended = [op["id"] for m in statements for op in m["ops"] if op["op"] == "append"]
        assert len(appended) == len(set(appended)) == len(statements)
        # a page opened afterwards is rendered whole from the log, and its stream only says it ended
        async with http.get(f"{d.base}/ui/meetings/{meeting}", headers={**HTML, **jar}) as resp:
            page = await resp.text()
        assert len(re.findall(r'<li class="statement[ "]', page)) == len(statements) + seen["objection"]
        assert 'data-live="false"' in page and "Recommendation:" in page
        # ?after= is what the page asks for first
        again = await _read(http, f"{url}?after={seqs[-3]}", jar, until=lambda m: m.get("ended"))
        assert [int(m["id"]) for m in again] == seqs[-2:]


async def test_fifty_watchers_see_the_same_meeting_and_the_daemon_keeps_answering(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await _signed_in(http, d)
        seen = _hold_after(d, 1)
        meeting = await _start(http, d, jar, "Should we move the launch to spring?")
        url = f"{d.base}/ui/meetings/{meeting}/events"
        watchers = [asyncio.create_task(_read(http, url, jar, until=lambda m: m.get("ended"))) for _ in range(50)]
        web = d.daemon.web
        for _ in range(1000):
            if web.feed.watchers(meeting) == 50 and seen["held"]:
                break
            await asyncio.sleep(0.02)
        assert web.feed.watchers(meeting) == 50
        async with http.get(d.base + "/healthz") as resp:  # the daemon answers while they watch
            assert resp.status == 200
        assert seen["ended"] == 0
        assert d.model is not None
        d.model.release()
        results = await asyncio.wait_for(asyncio.gather(*watchers), 60)
        expected = list(range(1, web.feed.log(meeting).last_seq + 1))
        for got in results:
            assert [int(m["id"]) for m in got] == expected
        assert web.feed.watchers(meeting) == 0  # every stream left the feed


async def test_a_full_queue_drops_that_watcher_and_never_waits() -> None:
    feed = MeetingFeed(queue_size=3)
    event = MeetingEvent(kind=MeetingEventKind.ROUND_DONE, meeting_id="m-1", topic="t")
    with feed.listen("m-1") as (slow, _log), feed.listen("m-1") as (quick, log):
        for _ in range(5):  # the slow one reads nothing; publishing never blocks
            feed.publish(event)
            while not quick.queue.empty():
                quick.queue.get_nowait()
        assert slow.overflowed and not quick.overflowed
        assert feed.watchers("m-1") == 1 and feed.dropped == 1
        assert [e.seq for e in log.after(2)] == [3, 4, 5]  # what the dropped one gets on reconnecting


async def test_stopping_the_daemon_ends_the_streams_of_a_meeting_it_leaves_to_resume(tmp_path: Path) -> None:
    """A stop suspends a meeting still running after the grace (issue 40: it resumes at the next start): the
    page's stream ends with the daemon, and the record stays running, not cancelled."""
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await _signed_in(http, d)
        seen = _hold_after(d, 1)
        meeting = await _start(http, d, jar, "Should we sponsor the conference?")
        url = f"{d.base}/ui/meetings/{meeting}/events"
        watcher = asyncio.create_task(_read(http, url, jar, until=lambda m: m.get("ended")))
        for _ in range(1000):
            if d.daemon.web.feed.watchers(meeting) == 1 and seen["held"]:
                break
            await asyncio.sleep(0.02)
        d.daemon.meeting_grace = 0.2  # the held meeting is suspended at shutdown, not waited for
        d.daemon.request_stop()
        got = await asyncio.wait_for(watcher, 20)
        assert not any(m.get("kind") == "ended" for m in got)
        row = await d.board.parts.room.store.get(meeting)
        assert row is not None and row.status == "running" and row.stop_reason is None
