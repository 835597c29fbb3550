"""The owner's web pages behind a load balancer: two real daemons (``sabha run``'s :class:`bot.daemon.Daemon`, in
this process) on one PostgreSQL, each with its own data dir, as README's "Beyond one machine" lays them out. Any
page may be served by either replica, so what one replica says must hold on the other: a browser signed in
through one is signed in on both, and a meeting one runs is live on the other's page (in a real browser too).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from aiohttp import ClientSession

from board.room.meeting.events import MeetingEvent
from bot.web.auth import COOKIE
from tests.support.browser import Browser, WebDaemon, browser  # noqa: F401

HTML = {"Accept": "text/html"}


@pytest.fixture
async def two(tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[list[WebDaemon]]:
    """Replicas ``ra`` and ``rb`` on one state store (no $SABHA_WEB_SECRET: the default an operator starts with)."""
    monkeypatch.delenv("SABHA_WEB_SECRET", raising=False)
    async with AsyncExitStack() as stack:
        made = []
        for name in ("ra", "rb"):
            extra = ["state:", f"  url: {pg_url}", "replicas:", f"  name: {name}"]
            made.append(await stack.enter_async_context(WebDaemon(tmp_path / name, extra=extra)))
        yield made


async def _sign_in(http: ClientSession, d: WebDaemon) -> dict[str, str]:
    link = await d.link()
    async with http.post(f"{d.base}/ui/login", data={"token": link.split("token=")[1]}, allow_redirects=False) as r:
        assert r.status == 303, await r.text()
        found = re.search(rf"{COOKIE}=([^;]+)", r.headers["Set-Cookie"])
    assert found
    return {"Cookie": f"{COOKIE}={found.group(1)}"}


async def test_signed_in_through_one_replica_is_signed_in_on_the_other(two: list[WebDaemon]) -> None:
    """Each replica signed cookies with a key of its own data dir: behind nginx's round robin every other page
    sent the owner back to the login page."""
    ra, rb = two
    async with ClientSession() as http:
        jar = await _sign_in(http, ra)
        for d in (ra, rb, ra, rb):
            async with http.get(f"{d.base}/ui/meetings", headers={**HTML, **jar}, allow_redirects=False) as resp:
                assert resp.status == 200, (d.base, resp.status, resp.headers.get("Location"))
        async with http.post(f"{rb.base}/ui/logout", headers={**HTML, **jar}, allow_redirects=False) as resp:
            assert resp.status in (303, 403)  # (no CSRF token here: refused; the session stays)
        # neither replica keeps the key in its data dir: it is the shared state's
        assert not (ra.config.parent / "sessions" / "web-secret.key").exists()
        assert not (rb.config.parent / "sessions" / "web-secret.key").exists()


async def test_a_meeting_running_on_one_replica_is_live_on_the_page_of_the_other(two: list[WebDaemon]) -> None:
    """The page of a meeting that another replica runs was drawn from the record as "stopped without an end (a
    crash?)" and never moved: only the replica running a meeting had it in its live feed. On a shared state the
    other replica follows it from the record, to its decision."""
    from tests.bot.web.test_web_stream import _hold_after, _read, _start

    ra, rb = two
    async with ClientSession() as http:
        jar = await _sign_in(http, ra)
        seen = _hold_after(ra, 2)  # ra's model stops after two statements: the meeting is mid-way
        async with http.get(f"{ra.base}/ui/meetings/new", headers={**HTML, **jar}) as resp:
            assert resp.status == 200
        meeting = await _start(http, ra, jar, "Should we open an office in Lisbon?")
        for _ in range(500):
            if seen["held"]:
                break
            await asyncio.sleep(0.02)
        running_a, running_b = ra.board.parts.room.running(), rb.board.parts.room.running()
        assert seen["held"] and meeting in running_a and meeting not in running_b
        async with http.get(f"{rb.base}/ui/meetings/{meeting}", headers={**HTML, **jar}) as resp:
            page = await resp.text()
        assert resp.status == 200
        assert 'data-live="true"' in page, page
        assert "crash" not in page and "another replica" in page
        stream = re.search(r'data-stream="([^"]+)"', page)
        last = re.search(r'data-last-seq="(\d+)"', page)
        assert stream and last
        joiner = "&" if "?" in stream.group(1) else "?"
        url = f"{rb.base}{stream.group(1).replace('&amp;', '&')}{joiner}after={last.group(1)}"
        assert ra.model is not None
        ra.model.release()
        rest = await _read(http, url, jar, until=lambda m: m.get("ended") or m.get("kind") == "reload")
        kinds = [m.get("kind") for m in rest]
        assert "reload" not in kinds and kinds[-1] == "ended", kinds
        assert "decision" in kinds and "agent_spoke" in kinds, kinds
        phases = [op["html"] for m in rest if not m.get("ended") for op in m.get("ops", [])
                  if op["target"] == "region-phase"]
        assert phases and all("another replica" in html for html in phases), phases  # as the page said
        seqs = [int(m["id"]) for m in rest]
        assert seqs == list(range(int(last.group(1)) + 1, seqs[-1] + 1))  # after the page, no gap, no repeat
        # the stream of an ended meeting ends (it went on to wait on this replica's live feed, for ever)
        async with asyncio.timeout(10):
            again = await _read(http, url, {**jar, "Last-Event-ID": str(seqs[-1])}, until=lambda m: False)
        assert again == []


async def test_in_a_browser_the_other_replicas_page_follows_the_meeting_to_its_decision(
        two: list[WebDaemon], browser: Browser) -> None:  # noqa: F811
    ra, rb = two
    b = browser
    held = 0

    async def hold_after_one(event: MeetingEvent) -> None:
        nonlocal held
        if str(event.kind) == "agent_spoke" and not held and ra.model is not None:
            held = 1
            ra.model.hold()

    ra.board.parts.room.subscribe(hold_after_one)
    await asyncio.to_thread(b.sign_in, await ra.link())  # the cookie is the host's: both replicas see it
    async with ClientSession() as http:
        jar = await _sign_in(http, ra)
        from tests.bot.web.test_web_stream import _start

        meeting = await _start(http, ra, jar, "Should we price per seat or per team?")
    for _ in range(500):
        if held:
            break
        await asyncio.sleep(0.02)
    assert held and meeting in ra.board.parts.room.running()
    await asyncio.to_thread(b.driver.get, f"{rb.base}/ui/meetings/{meeting}")
    await asyncio.to_thread(b.wait_for, "#statements > li", 1)
    assert "another replica" in " ".join(await asyncio.to_thread(b.texts, "#region-phase"))
    await asyncio.to_thread(b.wait_for, "#live-status", 1)
    for _ in range(100):  # the stream opens (the phase keeps saying where the meeting runs as events arrive)
        assert "another replica" in " ".join(await asyncio.to_thread(b.texts, "#region-phase"))
        if await asyncio.to_thread(b.texts, "#live-status") == ["live"]:
            break
        await asyncio.sleep(0.05)
    assert await asyncio.to_thread(b.texts, "#live-status") == ["live"]
    assert ra.model is not None
    ra.model.release()
    await asyncio.to_thread(b.wait_for, "#region-decision .decision", 1, 60)
    await asyncio.to_thread(b.wait_for, "#region-phase [data-ended=true]", 1, 30)
    assert await asyncio.to_thread(b.texts, "#live-status") == ["ended"]
    details = await rb.board.parts.room.store.details(meeting)
    seqs = [e.get_attribute("id") for e in b.wait_for("#statements > li", 1)]
    assert len(seqs) == len(set(seqs)) == len(details["statements"])  # every statement, each once
    await asyncio.to_thread(b.shot, "meeting-followed-on-another-replica-1280")
