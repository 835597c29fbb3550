"""The defects reviewer r28 found in the web pages and the web chat, each reproduced through a real
daemon (:class:`tests.support.browser.WebDaemon`, the real ``sabha web`` CLI) and a plain aiohttp
client: a New meeting form's follow-through lands in the chair's chat; Sign out (and ``sabha web
logout --all``) ends sessions for good; failed logins from one address never lock the owner out and
the limiter forgets old addresses; odd bytes in a cookie, a CSRF token, a chat message or a number
are refused with 4xx, never a 500; a New meeting form sent again after a restart starts nothing.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiohttp import ClientSession, ClientTimeout

from board.clock import FakeClock, FileClock
from board.decisions.reminders import reminder_key
from board.schedule import WorkStatus
from bot.web.auth import COOKIE, MAX_CLIENTS, LoginLimiter
from tests.support.browser import WebDaemon
from tests.support.web_decisions import HTML, cli, csrf_of, hold_meeting, sign_in


async def _page(http: ClientSession, url: str, jar: dict[str, str]) -> str:
    async with http.get(url, headers=jar) as resp:
        assert resp.status == 200, (url, resp.status)
        return await resp.text()


async def _chat_events(http: ClientSession, d: WebDaemon, jar: dict[str, str], advisor: str, want: str,
                       timeout: float = 20.0) -> list[dict[str, object]]:
    """The ``entry`` events of ``/ui/chat/<advisor>/events`` until one's text has ``want``."""
    entries: list[dict[str, object]] = []
    async with http.get(f"{d.base}/ui/chat/{advisor}/events", headers={"Cookie": jar["Cookie"]},
                        timeout=ClientTimeout(total=timeout)) as resp:
        assert resp.status == 200
        event = ""
        async for raw in resp.content:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "entry":
                entry = json.loads(line[6:])
                entries.append(entry)
                if want in str(entry.get("text")):
                    return entries
    raise AssertionError(f"{want!r} never came: {entries}")


# -- 1: the New meeting form's follow-through goes to the chair's chat ----------------------------------


async def test_a_form_meetings_reminder_and_notices_land_in_the_chat_with_the_chair(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the daemon's one clock (SABHA_TEST_CLOCK), moved as tests/board/decisions/test_reminders.py does
    clock = tmp_path / "clock"
    FileClock.write(clock, datetime.now(UTC))
    monkeypatch.setenv("SABHA_TEST_CLOCK", str(clock))
    monkeypatch.setenv("SABHA_TEST_MODE", "1")
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        meeting_id = await hold_meeting(http, d, jar, "Should we open a Berlin office?")
        items = await d.board.parts.room.store.actions(meeting_id=meeting_id)
        assert items, "the offline board decided no action items"
        work = await d.board.parts.schedule.get(reminder_key(items[0].id))
        assert work is not None and work.status is WorkStatus.PENDING
        assert (work.place.channel, work.place.chat_id) == ("web", "general"), work.place
        seen = await _chat_events(http, d, jar, "general", "Read the minutes")  # the decision card
        assert any(f"/ui/meetings/{meeting_id}" in str(e.get("text")) for e in seen)  # the start notice
        FileClock.write(clock, work.due_at + timedelta(seconds=1))
        seen = await _chat_events(http, d, jar, "general", "Your reminder")  # issue 38 wording
        assert items[0].task in str(seen[-1]["text"]), seen[-1]
        done = await d.board.parts.schedule.get(reminder_key(items[0].id))
        assert done is not None and done.status is WorkStatus.DONE
        async with http.get(f"{d.base}/ui/chat/owner", headers=jar) as resp:
            assert resp.status == 404  # no page for "owner", and nothing was put there
        row = await d.board.parts.db.fetchone("SELECT COUNT(*) AS n FROM web_chat_outbox WHERE conversation = 'owner'")
        assert row is not None and row["n"] == 0


async def test_a_reply_for_a_chat_that_is_no_advisor_goes_to_the_chair(tmp_path: Path) -> None:
    """Rows scheduled before the fix (place web/owner) are shown, in the chat with the chair."""
    from board.envelope import Reply
    from bot.intake.delivery import SendProgress

    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        channel = next(c for c in d.daemon.channels if c.name == "web")
        reply = Reply(role="general", name="Sabha", emoji="⏰", text="Reminder: an old row's nudge", channel="web",
                      chat_id="owner", kind="command")
        await channel.deliver(reply, SendProgress())
        seen = await _chat_events(http, d, jar, "general", "an old row's nudge")
        assert seen


# -- 3: Sign out ends the session; `sabha web logout --all` ends every one ---------------------------------


async def test_sign_out_ends_the_session_even_after_a_restart(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        other = await sign_in(http, d)
        csrf = csrf_of(await _page(http, d.base + "/ui/meetings", jar))
        async with http.post(d.base + "/ui/logout", data={"csrf": csrf}, headers=jar, allow_redirects=False) as resp:
            assert resp.status == 303
        async with http.get(d.base + "/ui/meetings", headers={"Cookie": jar["Cookie"]}, allow_redirects=False) as resp:
            assert resp.status == 401  # the old cookie, kept by whoever copied it, no longer works
        async with http.get(d.base + "/ui/chat/general/events", headers={"Cookie": jar["Cookie"]},
                            allow_redirects=False) as resp:
            assert resp.status == 401
        async with http.get(d.base + "/ui/login", headers=jar) as resp:  # the login page: signed out there too
            assert resp.status == 200 and "Sign out" not in await resp.text()
        assert "Sign out" in await _page(http, d.base + "/ui/login", other)
        await _page(http, d.base + "/ui/meetings", other)  # the other browser is still signed in
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        async with http.get(d.base + "/ui/meetings", headers={"Cookie": jar["Cookie"]}, allow_redirects=False) as resp:
            assert resp.status == 401
        await _page(http, d.base + "/ui/meetings", other)
        done = await cli(d.config, "web", "logout", "--all")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "signed out 1 session(s)", done.stdout
        async with http.get(d.base + "/ui/meetings", headers={"Cookie": other["Cookie"]},
                            allow_redirects=False) as resp:
            assert resp.status == 401
        await _page(http, d.base + "/ui/meetings", await sign_in(http, d))  # a new link still signs in


# -- 4: the login limiter --------------------------------------------------------------------------------


async def test_failed_logins_never_lock_out_a_valid_link(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path, extra=["web:", "  login_attempts_per_minute: 5"]) as d, ClientSession() as http:
        for _ in range(12):  # someone behind the same proxy guessing
            async with http.post(d.base + "/ui/login", data={"token": "guess"}, headers=HTML,
                                 allow_redirects=False) as resp:
                assert resp.status in (403, 429)
        assert resp.status == 429 and resp.headers["Retry-After"] == "60"
        await _page(http, d.base + "/ui/meetings", await sign_in(http, d))  # the owner's fresh link works


def test_the_limiter_forgets_addresses_idle_a_minute() -> None:
    clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    limiter = LoginLimiter(5, clock)
    for n in range(30_000):
        limiter.failed(f"2001:db8::{n:x}")
    assert limiter.size() == MAX_CLIENTS  # bounded, the longest idle dropped
    clock.advance(seconds=61)
    limiter.failed("2001:db8::ffff:1")
    assert limiter.size() == 1
    for _ in range(5):
        limiter.failed("192.0.2.1")
    assert limiter.blocked("192.0.2.1") and not limiter.blocked("192.0.2.2")
    clock.advance(seconds=61)
    assert not limiter.blocked("192.0.2.1")


# -- 5, 6, 7: odd input is a 4xx, never a 500 ---------------------------------------------------------------


async def test_non_ascii_cookies_and_csrf_tokens_are_refused_not_crashed_on(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        for value in ("abc.é", "é.é", "eyJ9.\u00ff"):
            async with http.get(d.base + "/ui/", headers={"Cookie": f"{COOKIE}={value}"},
                                allow_redirects=False) as resp:
                assert resp.status == 401, (value, await resp.text())
        jar = await sign_in(http, d)
        async with http.post(d.base + "/ui/meetings", data={"csrf": "\u00ff", "topic": "x"}, headers=jar,
                             allow_redirects=False) as resp:
            assert resp.status == 403, await resp.text()
        async with http.post(d.base + "/ui/chat/critic/messages", headers={**jar, "X-CSRF-Token": "é"},
                             data=json.dumps({"text": "hi", "client_id": "nonascii-0001"})) as resp:
            assert resp.status == 403
        assert not await d.board.parts.room.store.list()


async def test_a_chat_message_with_a_lone_surrogate_is_taken_and_resent_fine(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        csrf = csrf_of(await _page(http, d.base + "/ui/meetings", jar))
        body = b'{"text": "hello \\ud800 x", "client_id": "surrogate-0001"}'
        headers = {"Cookie": jar["Cookie"], "X-CSRF-Token": csrf, "Content-Type": "application/json"}
        for duplicate in (False, True):
            async with http.post(d.base + "/ui/chat/critic/messages", data=body, headers=headers) as resp:
                assert resp.status == 202, await resp.text()
                assert (await resp.json())["duplicate"] is duplicate
        seen = await _chat_events(http, d, jar, "critic", "\ufffd")
        assert seen[0]["text"] == "hello \ufffd x"
        async with http.post(d.base + "/ui/chat/critic/messages", headers=headers,
                             data=json.dumps({"text": "marker", "client_id": "marker-00001"})) as resp:
            assert resp.status == 202
        row = await d.board.parts.db.fetchone("SELECT COUNT(*) AS n FROM web_chat_outbox WHERE conversation = 'critic' "
                                        "AND kind = 'question'")
        assert row is not None and row["n"] == 2


async def test_odd_numbers_in_urls_are_4xx(tmp_path: Path) -> None:
    big = "9" * 30
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        meeting_id = await hold_meeting(http, d, jar, "Should we price per seat?")
        csrf = csrf_of(await _page(http, d.base + "/ui/decisions", jar))
        for days in ("%C2%B2", big, "-3", "1e3"):
            async with http.get(f"{d.base}/ui/cost?days={days}", headers=jar) as resp:
                assert resp.status in (200, 400), (days, resp.status)
        for n in ("%C2%B2", big, "%D9%A3"):
            for verb in ("done", "snooze", "due"):
                async with http.post(f"{d.base}/ui/actions/{n}/{verb}", data={"csrf": csrf, "when": "friday"},
                                     headers=jar) as resp:
                    assert resp.status == 404, (n, verb, resp.status)
        page = await _page(http, d.base + "/ui/meetings/new", jar)
        nonce = re.search(r'name="nonce" value="([^"]+)"', page)
        assert nonce
        for rounds in ("²", big):
            form = {"topic": "x", "roster": d.board.settings.roster.name, "rounds": rounds, "mode": "parallel",
                    "csrf": csrf_of(page), "nonce": nonce.group(1)}
            async with http.post(d.base + "/ui/meetings", data=form, headers=jar, allow_redirects=False) as resp:
                assert resp.status == 400 and "Rounds must be" in await resp.text()
        short = ClientTimeout(total=10)
        for after in ("%C2%B2", big):
            async with http.get(f"{d.base}/ui/meetings/{meeting_id}/events?after={after}", headers=jar,
                                timeout=short) as resp:
                assert resp.status == 200
                await resp.read()  # a finished meeting: replayed, then the stream ends
        for last in (big, "²", "-5"):
            async with http.get(f"{d.base}/ui/chat/critic/events", timeout=short,
                                headers={"Cookie": jar["Cookie"], "Last-Event-ID": last}) as resp:
                assert resp.status == 200
                assert (await resp.content.readline()).startswith(b"retry:")
        async with http.get(f"{d.base}/ui/chat/critic/events?after={big}", timeout=short,
                            headers={"Cookie": jar["Cookie"]}) as resp:
            assert resp.status == 200


# -- 9: a New meeting form sent again after a restart ------------------------------------------------------


async def test_the_same_form_after_a_restart_starts_no_second_meeting(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        page = await _page(http, d.base + "/ui/meetings/new", jar)
        nonce = re.search(r'name="nonce" value="([^"]+)"', page)
        assert nonce
        form = {"topic": "Hire a second engineer?", "roster": d.board.settings.roster.name, "rounds": "1",
                "mode": "parallel", "csrf": csrf_of(page), "nonce": nonce.group(1)}
        async with http.post(d.base + "/ui/meetings", data=form, headers=jar, allow_redirects=False) as resp:
            assert resp.status == 303
            first = resp.headers["Location"]
        await d.board.parts.room.drain(120)
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        async with http.post(d.base + "/ui/meetings", data=form, headers=jar, allow_redirects=False) as resp:
            assert resp.status == 303 and resp.headers["Location"] == first
        await d.board.parts.room.drain(120)
        assert len(await d.board.parts.room.store.list()) == 1
