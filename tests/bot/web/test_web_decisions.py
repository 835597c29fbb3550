"""The owner rules on decisions and dates, snoozes and closes action items from the web pages, with the
same effects as the chat commands: a ratification recorded with the owner and the time (seen by the
real ``sabha decisions show``), a veto that drops the actions and their reminders, a revisit that
needs a reason and schedules the follow-up meeting, a due date the board cannot read refused in the
command's words, a snooze that moves the reminder; a second press changes nothing; no CSRF, no change.

A real daemon (:class:`bot.daemon.Daemon`, offline model) in this process, meetings held from the New
meeting form, a plain aiohttp client signed in with a link from the real ``sabha web link``.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from pathlib import Path

from aiohttp import ClientSession

from board.decisions.ratify import Verdict
from board.decisions.reminders import reminder_key
from board.envelope import Envelope
from board.routing.router import Route
from board.schedule import WorkStatus
from board.schedule.work import parse_stamp
from tests.support.browser import WebDaemon
from tests.support.web_decisions import HTML, cli, csrf_of, hold_meeting, sign_in


async def _page(http: ClientSession, url: str, jar: dict[str, str]) -> str:
    async with http.get(url, headers=jar) as resp:
        assert resp.status == 200, url
        return await resp.text()


def _ruling_block(page: str, meeting_id: str) -> str:
    """The decision's state and forms on a page (``id="ruling-<id>"``)."""
    start = page.index(f'id="ruling-{meeting_id}"')
    return page[start:page.index('<div class="rule-forms">', start) + 3000]


async def test_ratify_from_the_web_is_recorded_once_with_the_owner_and_time(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        meeting_id = await hold_meeting(http, d, jar, "Should we hire a second engineer this quarter?")
        page = await _page(http, d.base + "/ui/decisions", jar)
        block = _ruling_block(page, meeting_id)
        assert 'data-verdict="proposed"' in block and "proposed" in block
        for verb in ("ratify", "veto", "revisit"):
            assert f'action="/ui/decisions/{meeting_id}/{verb}"' in block
        meeting = await _page(http, f"{d.base}/ui/meetings/{meeting_id}", jar)  # the meeting page: the same forms
        assert f'action="/ui/decisions/{meeting_id}/ratify"' in meeting and 'name="back" value="meeting"' in meeting
        csrf = csrf_of(page)

        before = d.board.parts.clock.now().replace(microsecond=0)
        async with http.post(f"{d.base}/ui/decisions/{meeting_id}/ratify", data={"csrf": csrf, "back": "meeting"},
                             headers=jar, allow_redirects=False) as resp:
            assert resp.status == 303
            assert resp.headers["Location"].startswith(f"/ui/meetings/{meeting_id}?note=")
            back = resp.headers["Location"]
        after = d.board.parts.clock.now()
        shown = await _page(http, d.base + back, jar)
        assert f"Decision {meeting_id}" in shown and "ratified by the owner (web)" in shown  # the command's words
        block = _ruling_block(shown, meeting_id)
        assert 'data-verdict="ratified"' in block and "by the owner (web)" in block
        # a ratified decision may still be sent back, not ratified or vetoed again
        assert "/ratify" not in block and "/veto" not in block and "/revisit" in block
        assert "ratified by the owner (web)" not in await _page(http, d.base + back, jar)  # the note shows once

        found = await d.board.parts.decisions.find(meeting_id)
        record = found.record
        assert record is not None and record.verdict is Verdict.RATIFIED
        assert record.ruled_by == "web:owner" and record.ruled_by_name == "the owner (web)"
        assert record.ruled_at is not None
        assert before <= datetime.fromisoformat(record.ruled_at) <= after
        listed = await _page(http, d.base + "/ui/meetings", jar)  # the meetings list says where it stands
        assert 'data-verdict="ratified">decision \u2705 ratified</span>' in listed
        rulings = await d.board.parts.decisions.rulings(meeting_id)
        assert [(r["verdict"], r["via"], r["by_id"]) for r in rulings] == [("ratified", "web", "web:owner")]

        # the terminal sees it: the real `sabha decisions show`
        done = await cli(d.config, "decisions", "show", meeting_id)
        assert done.returncode == 0, done.stderr
        assert "ratified by the owner (web) at " + record.ruled_at.replace("T", " ").removesuffix("+00:00") \
            in done.stdout
        assert "proposed -> ratified by the owner (web) via web" in done.stdout

        # a double submit: already ratified, nothing changed
        async with http.post(f"{d.base}/ui/decisions/{meeting_id}/ratify", data={"csrf": csrf, "back": "meeting"},
                             headers=jar, allow_redirects=False) as resp:
            assert resp.status == 409
            text = await resp.text()
        assert f"Decision {meeting_id} is already ratified" in text and "nothing changed" in text
        assert 'id="meeting"' in text and 'data-verdict="ratified"' in text  # answered on the meeting page
        assert len(await d.board.parts.decisions.rulings(meeting_id)) == 1
        again = await d.board.parts.decisions.find(meeting_id)
        assert again.record is not None and again.record.ruled_at == record.ruled_at

        # an id no meeting has: a 404 page; a prefix does not stand for a decision on the web
        for ref in ("m-20991231-000000-none", meeting_id[:12]):
            async with http.post(f"{d.base}/ui/decisions/{ref}/veto", data={"csrf": csrf}, headers=jar,
                                 allow_redirects=False) as resp:
                assert resp.status == 404, ref
                assert "No decision" in await resp.text()
        async with http.post(f"{d.base}/ui/decisions/{meeting_id}/approve", data={"csrf": csrf}, headers=jar,
                             allow_redirects=False) as resp:
            assert resp.status == 404
        assert len(await d.board.parts.decisions.rulings(meeting_id)) == 1


async def test_veto_drops_the_actions_and_their_reminders(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        meeting_id = await hold_meeting(http, d, jar, "Should we move the office to Porto?")
        items = await d.board.parts.room.store.actions(meeting_id=meeting_id)
        assert items and all(a.status == "open" for a in items)
        armed = [a for a in items if await d.board.parts.schedule.get(reminder_key(a.id)) is not None]
        assert armed  # the offline model dates its actions: their reminders are scheduled
        page = await _page(http, d.base + "/ui/decisions", jar)
        for a in items:
            assert f'id="a-{a.id}"' in page

        async def veto() -> tuple[int, str, str]:
            async with http.post(f"{d.base}/ui/decisions/{meeting_id}/veto", headers=jar, allow_redirects=False,
                                 data={"csrf": csrf_of(page), "reason": "  rent   is too high  "}) as resp:
                return resp.status, resp.headers.get("Location", ""), await resp.text()

        first, second = await asyncio.gather(veto(), veto())  # a double submit, both at once: one veto
        assert sorted([first[0], second[0]]) == [303, 409]
        ok, refused = (first, second) if first[0] == 303 else (second, first)
        assert f"Decision {meeting_id} is already vetoed" in refused[2] and "nothing changed" in refused[2]
        assert ok[1].startswith("/ui/decisions?note=")
        shown = await _page(http, d.base + ok[1], jar)
        assert len(await d.board.parts.decisions.rulings(meeting_id)) == 1
        assert "vetoed by the owner (web)" in shown and "Reason: rent is too high" in shown
        assert "are dropped: no reminders for them" in shown  # the command's words
        block = _ruling_block(shown, meeting_id)
        assert 'data-verdict="vetoed"' in block and "<form" not in block  # a veto is final: no more buttons
        for a in items:
            assert f'id="a-{a.id}"' not in shown  # no longer open
        rows = await d.board.parts.room.store.actions(meeting_id=meeting_id, include_done=True)
        assert {r.status for r in rows} == {"dropped"}
        for a in armed:
            work = await d.board.parts.schedule.get(reminder_key(a.id))
            assert work is not None and work.status is WorkStatus.CANCELLED
        record = (await d.board.parts.decisions.find(meeting_id)).record
        assert record is not None and record.verdict is Verdict.VETOED and record.reason == "rent is too high"


async def test_revisit_needs_a_reason_and_schedules_the_follow_up(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        meeting_id = await hold_meeting(http, d, jar, "Should we sponsor the local meetup?")
        csrf = csrf_of(await _page(http, d.base + "/ui/decisions", jar))
        for reason in ("", "   "):
            async with http.post(f"{d.base}/ui/decisions/{meeting_id}/revisit", data={"csrf": csrf, "reason": reason},
                                 headers=jar, allow_redirects=False) as resp:
                assert resp.status == 400
                text = await resp.text()
            assert "Say why the board should revisit" in text and "Nothing changed" in text
        record = (await d.board.parts.decisions.find(meeting_id)).record
        assert record is not None and record.verdict is Verdict.PROPOSED
        assert await d.board.parts.schedule.get(f"follow_up:decision:{meeting_id}") is None
        async with http.post(f"{d.base}/ui/decisions/{meeting_id}/revisit",
                             data={"csrf": csrf, "reason": "the budget changed", "back": "meeting"}, headers=jar,
                             allow_redirects=False) as resp:
            assert resp.status == 303
        work = await d.board.parts.schedule.get(f"follow_up:decision:{meeting_id}")
        assert work is not None and work.payload["reason"] == "the budget changed"
        assert work.place.channel == "web"  # where the first meeting ran
        record = (await d.board.parts.decisions.find(meeting_id)).record
        assert record is not None and record.verdict is Verdict.REVISIT and record.ruled_by == "web:owner"
        # the daemon convenes the follow-up meeting; both pages link it
        deadline = asyncio.get_running_loop().time() + 60
        while not record.follow_up_id:
            assert asyncio.get_running_loop().time() < deadline, "the follow-up meeting was not convened"
            await asyncio.sleep(0.05)
            record = (await d.board.parts.decisions.find(meeting_id)).record
            assert record is not None
        follow_up = record.follow_up_id
        await d.board.parts.room.drain(120)
        page = await _page(http, d.base + "/ui/decisions", jar)
        assert f'Follow-up meeting: <a href="/ui/meetings/{follow_up}">' in _ruling_block(page, meeting_id)
        assert f'Revisits: <a href="/ui/meetings/{meeting_id}">' in _ruling_block(page, follow_up)
        row = await d.board.parts.room.store.get(follow_up)
        assert row is not None and "the budget changed" in (row.agenda or "")


async def _say(d: WebDaemon, text: str) -> str:
    """What the chat command ``text`` answers the owner (the words the page must repeat)."""
    command, _, rest = text.lstrip("/").partition(" ")
    envelope = Envelope(channel="console", text=text, sender="owner", chat_id="console", is_owner=True)
    reply = await d.board.parts.commands.run_command(envelope, Route(kind="command", role="general", text=rest,
                                                                     session_key="t",
                                                      command=command))
    return reply.text


async def test_due_snooze_and_done_from_the_web(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        meeting_id = await hold_meeting(http, d, jar, "Should we rewrite the billing service?")
        item = (await d.board.parts.room.store.actions(meeting_id=meeting_id))[0]
        key = reminder_key(item.id)
        page = await _page(http, d.base + "/ui/decisions", jar)
        row = page[page.index(f'id="a-{item.id}"'):]
        row = row[:row.index("</tr>")]
        assert 'data-label="Due"' in row and ("Mon" in row or "Tue" in row or "Wed" in row or "Thu" in row
                                             or "Fri" in row or "Sat" in row or "Sun" in row)
        assert row.index("/done") < row.index("/snooze") < row.index("/due")  # Done stays the first button
        csrf = csrf_of(page)
        first = await d.board.parts.schedule.get(key)
        assert first is not None

        # a date the board cannot read: the command's words, the typed text kept, nothing changed
        async with http.post(f"{d.base}/ui/actions/{item.id}/due", data={"csrf": csrf, "when": "soonish"},
                             headers=jar) as resp:
            assert resp.status == 400
            text = await resp.text()
        said = await _say(d, f"/due {item.id} soonish")
        assert "soonish" in said and "Nothing changed" in said
        assert said.replace("'", "&#39;").replace('"', "&#34;") in text
        assert f'id="due-{item.id}" name="when" value="soonish"' in text
        assert (await d.board.parts.room.store.action(item.id)) == item
        unchanged = await d.board.parts.schedule.get(key)
        assert unchanged is not None and unchanged.due_at == first.due_at
        async with http.post(f"{d.base}/ui/actions/{item.id}/due", data={"csrf": csrf, "when": "  "},
                             headers=jar) as resp:
            assert resp.status == 400 and "Say when item" in await resp.text()

        # a good date: the item and its reminder move there
        now = d.board.parts.clock.now()
        async with http.post(f"{d.base}/ui/actions/{item.id}/due", data={"csrf": csrf, "when": "+3d"},
                             headers=jar) as resp:
            assert resp.status == 200
            text = await resp.text()
        assert f"#{item.id} {item.task}" in text and "is now due" in text
        moved = await d.board.parts.schedule.get(key)
        assert moved is not None and moved.status is WorkStatus.PENDING
        assert timedelta(days=3) <= moved.due_at - now < timedelta(days=3, minutes=1)
        dated = await d.board.parts.room.store.action(item.id)
        assert dated is not None and dated.due_text == "+3d" and parse_stamp(dated.due_at or "") == moved.due_at

        # snooze (a day by default): the reminder comes again a day from now
        now = d.board.parts.clock.now()
        async with http.post(f"{d.base}/ui/actions/{item.id}/snooze", data={"csrf": csrf, "length": ""},
                             headers=jar) as resp:
            assert resp.status == 200
            assert f"Snoozed #{item.id}" in await resp.text()
        snoozed = await d.board.parts.schedule.get(key)
        assert snoozed is not None and snoozed.status is WorkStatus.PENDING
        assert timedelta(days=1) <= snoozed.due_at - now < timedelta(days=1, minutes=1)
        async with http.post(f"{d.base}/ui/actions/{item.id}/snooze", data={"csrf": csrf, "length": "1h"},
                             headers=jar) as resp:
            assert resp.status == 200
        hour = await d.board.parts.schedule.get(key)
        now = d.board.parts.clock.now()
        assert hour is not None and timedelta(minutes=59) < hour.due_at - now <= timedelta(hours=1)

        # done: closed, the reminder cancelled; pressing again changes nothing
        async with http.post(f"{d.base}/ui/actions/{item.id}/done", data={"csrf": csrf}, headers=jar) as resp:
            assert resp.status == 200 and f"Done: #{item.id}" in await resp.text()
        closed = await d.board.parts.room.store.action(item.id)
        assert closed is not None and closed.status == "done"
        gone = await d.board.parts.schedule.get(key)
        assert gone is not None and gone.status is WorkStatus.CANCELLED
        async with http.post(f"{d.base}/ui/actions/{item.id}/done", data={"csrf": csrf}, headers=jar) as resp:
            assert resp.status == 409 and "done already" in await resp.text()
        async with http.post(f"{d.base}/ui/actions/{item.id}/snooze", data={"csrf": csrf}, headers=jar) as resp:
            assert resp.status == 400 and "done already" in await resp.text()
        for verb in ("due", "snooze", "done"):
            async with http.post(f"{d.base}/ui/actions/99999/{verb}", data={"csrf": csrf, "when": "friday"},
                                 headers=jar) as resp:
                assert resp.status == 404 and "No open action item #99999" in await resp.text()


async def test_an_overdue_item_says_so(tmp_path: Path) -> None:
    from board.clock import FakeClock

    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        meeting_id = await hold_meeting(http, d, jar, "Should we renew the cloud contract?")
        item = (await d.board.parts.room.store.actions(meeting_id=meeting_id))[0]
        assert item.due_at is not None
        # what the page reads the time by
        d.daemon.web.clock = FakeClock(parse_stamp(item.due_at) + timedelta(hours=1))
        page = await _page(http, d.base + "/ui/decisions", jar)
        row = page[page.index(f'id="a-{item.id}"'):]
        row = row[:row.index("</tr>")]
        assert 'class="overdue"' in row and "overdue by 1 hour" in row  # how late, as /actions says it


async def test_rulings_and_item_changes_need_the_csrf_token(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        meeting_id = await hold_meeting(http, d, jar, "Should we open a support line on weekends?")
        item = (await d.board.parts.room.store.actions(meeting_id=meeting_id))[0]
        work = await d.board.parts.schedule.get(reminder_key(item.id))
        posts = [(f"/ui/decisions/{meeting_id}/ratify", {}), (f"/ui/decisions/{meeting_id}/veto", {"reason": "x"}),
                 (f"/ui/decisions/{meeting_id}/revisit", {"reason": "x"}), (f"/ui/actions/{item.id}/due",
                                                                           {"when": "+1h"}),
                 (f"/ui/actions/{item.id}/snooze", {}), (f"/ui/actions/{item.id}/done", {})]
        for path, data in posts:
            for token in ({}, {"csrf": "forged"}):
                async with http.post(d.base + path, data={**data, **token}, headers=jar,
                                     allow_redirects=False) as resp:
                    assert resp.status == 403, (path, token)
                    assert "CSRF" in await resp.text()
            async with http.post(d.base + path, data={**data, "csrf": "x"}, headers=HTML,
                                 allow_redirects=False) as resp:  # no session at all
                assert resp.status == 401, path
        record = (await d.board.parts.decisions.find(meeting_id)).record
        assert record is not None and record.verdict is Verdict.PROPOSED
        assert await d.board.parts.decisions.rulings(meeting_id) == []
        assert await d.board.parts.room.store.action(item.id) == item
        assert await d.board.parts.schedule.get(reminder_key(item.id)) == work
        # and with it, the same form works
        page = await _page(http, d.base + "/ui/decisions", jar)
        async with http.post(f"{d.base}/ui/decisions/{meeting_id}/ratify", data={"csrf": csrf_of(page)},
                             headers=jar, allow_redirects=False) as resp:
            assert resp.status == 303
        record = (await d.board.parts.decisions.find(meeting_id)).record
        assert record is not None and record.verdict is Verdict.RATIFIED


async def test_the_track_record_page_scores_advisors_as_the_board_does(tmp_path: Path) -> None:
    from board.decisions.predictions.store import PredictionStore

    extra = ["board:", "  meetings:", "    min_resolved_predictions: 2"]
    async with WebDaemon(tmp_path, extra=extra) as d, ClientSession() as http:
        async with http.get(d.base + "/ui/track", headers=HTML, allow_redirects=False) as resp:
            assert resp.status == 303  # the owner's page: sign in first
        jar = await sign_in(http, d)
        assert "No predictions yet" in await _page(http, d.base + "/ui/track", jar)
        for topic in ("Should we raise prices by 10% in January?", "Should we open a second warehouse?"):
            await hold_meeting(http, d, jar, topic)
        rows = await PredictionStore(d.board.parts.db).query(status="all")
        by_role: dict[str, list[float]] = {}
        ids: dict[str, list[int]] = {}
        for row in rows:
            by_role.setdefault(row.role, []).append(row.probability)
            ids.setdefault(row.role, []).append(row.id)
        scored, unscored = sorted(r for r in by_role if len(by_role[r]) >= 2)[:2]
        # scored: its first came true, its second did not; unscored: one resolved (too few), the rest open
        assert "came true" in await _say(d, f"/resolve {ids[scored][0]} yes")
        assert "did not come true" in await _say(d, f"/resolve {ids[scored][1]} no")
        await _say(d, f"/resolve {ids[unscored][0]} yes")
        p1, p2 = by_role[scored][0], by_role[scored][1]
        brier = ((p1 - 1) ** 2 + (p2 - 0) ** 2) / 2  # by hand
        bins: dict[int, list[tuple[float, int]]] = {}
        for p, came in ((p1, 1), (p2, 0)):
            bins.setdefault(min(int(round(p * 10, 9)), 9), []).append((p, came))

        page = await _page(http, d.base + "/ui/track", jar)
        start = page.index(f'id="track-{scored}"')
        block = page[start:page.index("</li>", start)]
        assert 'data-scored="true"' in block
        assert f'<span class="n">{brier:.3f}</span> Brier over <strong>2</strong> resolved' in block
        assert f"(0 can't tell, {len(by_role[scored]) - 2} open)" in block
        for index, items in bins.items():
            mean = sum(p for p, _ in items) / len(items)
            came = sum(c for _, c in items) / len(items)
            assert (f"<th scope=\"row\">{index / 10:.1f}&ndash;{(index + 1) / 10:.1f}</th><td>{len(items)}</td>"
                    f"<td>{mean:.3f}</td>") in block
            assert f"</meter> {came:.3f}</td>" in block
        assert block.count("<tr><th scope=\"row\">") == len(bins)
        start = page.index(f'id="track-{unscored}"')
        block = page[start:page.index("</li>", start)]
        assert 'data-scored="false"' in block and "Brier over" not in block
        assert "too few resolved predictions (n=1); a score needs 2" in block  # the board's words
        # the terminal's `sabha board stats` gives the same score
        done = await cli(d.config, "board", "stats")
        assert done.returncode == 0, done.stderr
        assert f"{scored}: Brier {brier:.3f} over 2 resolved" in done.stdout
        assert f"{unscored}: too few resolved predictions (n=1)" in done.stdout
