"""The Schedule page (issue 42): the standing work with each item's place, next run and month's cost; the
owner pauses, resumes and removes an item there with the effects of ``/standing`` (the pending run cancelled,
the next one scheduled from now); a second press is told what is wrong and changes nothing; a form without the
page's CSRF token changes nothing. A real daemon (:class:`bot.daemon.Daemon`, offline model) in this process, a
plain aiohttp client signed in with a link from the real ``sabha web link``, the item set by the real
``sabha schedule add``."""

from __future__ import annotations

from pathlib import Path

from aiohttp import ClientSession

from tests.support.browser import WebDaemon
from tests.support.web_decisions import cli, csrf_of, sign_in


async def _page(http: ClientSession, url: str, jar: dict[str, str]) -> str:
    async with http.get(url, headers=jar) as resp:
        assert resp.status == 200, url
        return await resp.text()


async def _runs(d: WebDaemon) -> list[str]:
    rows = await d.board.parts.db.fetchall("SELECT status FROM scheduled_work WHERE kind = 'standing' ORDER BY id")
    return [str(r["status"]) for r in rows]


async def test_the_owner_pauses_resumes_and_removes_standing_work_on_the_schedule_page(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        empty = await _page(http, d.base + "/ui/schedule", jar)
        assert 'id="no-standing"' in empty and "/every monday 9am brief" in empty
        added = await cli(d.config, "schedule", "add", "monday 9am brief", "--channel", "telegram", "--chat", "42")
        assert added.returncode == 0, added.stderr
        page = await _page(http, d.base + "/ui/schedule", jar)
        assert 'id="standing-1" data-status="active"' in page
        assert "#1 a brief every Monday at 09:00 (UTC)" in page and "in telegram chat 42" in page
        assert "next run <strong class=\"next\">Mon " in page and "$0.00 this month" in page
        csrf = csrf_of(page)

        async with http.post(f"{d.base}/ui/schedule/1/pause", data={}, headers=jar, allow_redirects=False) as resp:
            assert resp.status in (400, 403)  # no CSRF token: refused
        assert await _runs(d) == ["pending"]
        async with http.post(f"{d.base}/ui/schedule/1/pause", data={"csrf": csrf}, headers=jar) as resp:
            paused = await resp.text()
        assert "Paused #1 a brief every Monday at 09:00 (UTC)." in paused and 'data-status="paused"' in paused
        assert await _runs(d) == ["cancelled"]
        async with http.post(f"{d.base}/ui/schedule/1/pause", data={"csrf": csrf}, headers=jar) as resp:
            again = await resp.text()
        assert "Standing item #1 is paused already" in again and await _runs(d) == ["cancelled"]
        async with http.post(f"{d.base}/ui/schedule/1/resume", data={"csrf": csrf}, headers=jar) as resp:
            resumed = await resp.text()
        assert "Resumed #1 a brief every Monday at 09:00 (UTC); next run Mon " in resumed
        assert 'data-status="active"' in resumed
        async with http.post(f"{d.base}/ui/schedule/1/remove", data={"csrf": csrf}, headers=jar) as resp:
            removed = await resp.text()
        assert "Removed #1" in removed and 'id="no-standing"' in removed
        assert all(status == "cancelled" for status in await _runs(d))
        listed = await cli(d.config, "schedule", "list")
        assert "no standing work yet" in listed.stdout
