"""The operations page (issue 44), ``/ui/ops``: a real daemon in this process (:class:`tests.support.browser.WebDaemon`,
offline model), the owner signed in with a link from the real ``sabha web link``, a state seeded with known figures
(:mod:`tests.support.ops_seed`): the page shows p50/p95 per channel and per model in each window, the errors and
fallbacks, the guardrail feed, prompt size per tier with the cache-read share, the queue and what scheduled work
waits; rows two days old count in neither window. The turns in flight now are read from the daemon's own lanes
while the web chat's messages wait on a held model. Without the owner's session (none, or a forged one) the page is
not shown; every other page links to it."""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout

from bot.web.auth import COOKIE
from tests.support.browser import WebDaemon
from tests.support.ops_seed import MODEL, seed
from tests.support.telegram import eventually
from tests.support.web_chat import post_message
from tests.support.web_decisions import HTML, csrf_of, sign_in


def section(page: str, name: str) -> str:
    """The HTML of ``<section id="name">``."""
    start = page.index(f'id="{name}"')
    return page[start:page.index("</section>", start)]


def row(html: str, key: str) -> str:
    """The table row whose header is ``key``."""
    start = html.index(f'<th scope="row">{key}')
    return html[start:html.index("</tr>", start)]


async def test_the_ops_page_shows_the_seeded_figures(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        parts = d.board.parts
        await seed(parts.db, parts.ledger)
        me = await parts.db.fetchone("SELECT name FROM replicas WHERE pid = ?", (os.getpid(),))
        assert me is not None  # this daemon registered itself
        await parts.db.execute("INSERT INTO leases(key, holder, expires_at, taken_at) VALUES (?, ?, ?, ?)",
                               ("lane:telegram:42", me["name"], time.time() + 600, "2026-11-29T20:00:00+00:00"))
        jar = await sign_in(http, d)
        async with http.get(d.base + "/ui/ops", headers=jar) as resp:
            assert resp.status == 200
            page = await resp.text()
        for window in ("hour", "day"):
            latency = section(page, f"latency-{window}")
            telegram = row(latency, "telegram")  # message stored -> answer sent: 0.1 s ... 2.0 s
            assert 'data-label="Answers">20<' in telegram and ">1.0 s<" in telegram and ">1.9 s<" in telegram, telegram
            model = row(latency, MODEL)  # the ok calls; the failed one and the one 2 days old not counted
            assert 'data-label="Calls">20<' in model and ">1.0 s<" in model and ">1.9 s<" in model, model
            assert "99999" not in latency and "100.0 s" not in latency
            assert "whatsapp" not in latency  # nothing answered there yet
        errors = section(page, "errors")
        assert 'id="error-count">1<' in errors and 'id="fallback-count">1<' in errors, errors
        assert "rate_limit: 429 slow down" in errors and "answered on attempt 2" in errors
        assert "openai/gpt-fallback" in errors
        guard = section(page, "guardrails")
        assert "1 in the last day" in guard and "prompt leak</strong>: replace" in guard and "critic" in guard
        prompt = section(page, "prompt")  # static = static + soul + tools; message = the message + tool loop
        for tier, size in (("static", "1,500"), ("dynamic", "50"), ("history", "400"), ("message", "30")):
            assert f"{tier}</th><td>{size}<" in prompt, prompt
        assert 'id="cache-share">75%<' in prompt and "over 20 calls" in prompt
        queue = section(page, "queue")
        assert 'data-label="Waiting">1<' in row(queue, "whatsapp")
        assert 'data-label="Waiting">0<' in row(queue, "telegram")
        scheduled = section(page, "scheduled")
        assert "1 overdue" in scheduled and scheduled.count("reminder in telegram 42") == 2
        mine = row(section(page, "replicas"), str(me["name"]))  # this process, its heartbeat, the lease it holds
        assert f"pid {os.getpid()}" in mine and " s ago<" in mine and 'class="leases">1<' in mine, mine
        async with http.get(d.base + "/ui/cost", headers=jar) as resp:  # the nav of the other pages leads here
            assert 'href="/ui/ops"' in await resp.text()


async def test_without_the_owners_session_there_is_no_ops_page(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        await seed(d.board.parts.db, d.board.parts.ledger)
        for headers in (HTML, {**HTML, "Cookie": f"{COOKIE}=forged.by.a.stranger"}):
            async with http.get(d.base + "/ui/ops", headers=headers, allow_redirects=False) as resp:
                body = await resp.text()
                assert resp.status in (302, 303, 401, 403), resp.status
                assert "Time to answer" not in body and MODEL not in body and "429 slow down" not in body


async def test_the_turns_in_flight_now_are_this_processs_lanes(tmp_path: Path) -> None:
    """While the model holds every call, three messages to three advisors are three turns in flight and a second
    message to one of them waits its turn; once the model answers, nothing is in flight and four were answered."""
    async with WebDaemon(tmp_path) as d, ClientSession(timeout=ClientTimeout(total=60)) as http:
        jar = await sign_in(http, d)
        async with http.get(d.base + "/ui/meetings/new", headers=jar) as resp:
            csrf = csrf_of(await resp.text())

        async def turns() -> str:
            async with http.get(d.base + "/ui/ops", headers=jar) as resp:
                assert resp.status == 200
                page = await resp.text()
            start = page.index('id="turns"')
            return page[start:page.index("</p>", start)]

        idle = await turns()
        assert 'id="turns-running">0<' in idle and 'id="turns-waiting">0<' in idle and "of 32" in idle, idle
        assert d.model is not None
        d.model.hold()
        for advisor in ("general", "finance", "critic"):
            status, _ = await post_message(http, d.base, advisor, f"a question for {advisor}", csrf=csrf,
                                           cookie=jar["Cookie"])
            assert status in (200, 201, 202), status
        await eventually(lambda: _has(turns, 'id="turns-running">3<'), "three turns in flight")
        status, _ = await post_message(http, d.base, "general", "and a second one", csrf=csrf, cookie=jar["Cookie"])
        assert status in (200, 201, 202), status
        await eventually(lambda: _has(turns, 'id="turns-waiting">1<'), "the second message to general waiting")
        busy = await turns()
        assert 'id="turns-running">3<' in busy and "in 3 conversations with work;" in busy, busy
        d.model.release()
        await eventually(lambda: _has(turns, "4 answered since"), "every message answered")
        done = await turns()
        assert 'id="turns-running">0<' in done and 'id="turns-waiting">0<' in done and "at most 3 at once" in done


async def _has(read: Callable[[], Awaitable[str]], text: str) -> bool:
    return text in await read()
