"""What the live meeting page's box and buttons accept (issue 40), against a real ``sabha run`` over HTTP.

The owner signs in with the real ``sabha web link`` and starts a meeting from the New meeting form; its model is
a slow fake (:class:`tests.support.fakes.seat_model.SeatModel`) whose round-1 statements wait, so the meeting
runs while the test posts:

- a contribution without the page's CSRF token is refused (403), one without a session too (401): nothing stored;
- the same form sent twice (same page-made message id) is stored once, and both sends are told the same id;
- an empty one, or an unknown control, is refused with what to do (400);
- Pause (a plain form post, as without script) holds the meeting after round 1: no round 2 is asked until
  Resume; Wrap up during round 2 ends it after round 2;
- once the meeting ended, a contribution or a control is refused (409), saying it ended; nothing stored;
- after a restart the page is drawn from the record, with the same sequence as the live page showed.
"""

from __future__ import annotations

import asyncio
import re
import signal
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientSession

from bot.web.auth import COOKIE
from tests.support.browser import web_link
from tests.support.daemon import SabhaProcess
from tests.support.fakes.seat_model import SeatModel
from tests.support.seat import write_seat_config

HTML = {"Accept": "text/html"}
JSON = {"Accept": "application/json"}
SPECIALISTS = 5
WAIT_S = 120.0


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[tuple[SabhaProcess, SeatModel]]:
    async with SeatModel(latency=0.05) as model:
        model.hold(1)
        model.hold(2)
        daemon = SabhaProcess(write_seat_config(tmp_path, model), env={})
        try:
            await daemon.start()
            yield daemon, model
        finally:
            model.release(1)
            model.release(2)
            await daemon.close()


def hidden(page: str, name: str) -> str:
    found = re.search(rf'name="{name}"(?: id="[^"]*")? value="([^"]*)"', page)
    assert found, f"no {name} field on the page"
    return found.group(1)


def contributions(config: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(config.parent / "sessions" / "sabha.db") as conn:
        return [(str(r[0]), str(r[1]), str(r[2])) for r in
                conn.execute("SELECT text, via, message_id FROM meeting_contributions ORDER BY id")]


async def test_what_the_box_and_the_buttons_accept(running: tuple[SabhaProcess, SeatModel]) -> None:
    daemon, model = running
    base = f"http://127.0.0.1:{daemon.port}"
    link = await asyncio.to_thread(web_link, daemon.config)
    async with ClientSession() as http:
        async with http.post(f"{base}/ui/login", data={"token": link.split("token=")[1]},
                             allow_redirects=False) as r:
            assert r.status == 303, await r.text()
            jar = {"Cookie": f"{COOKIE}={re.search(rf'{COOKIE}=([^;]+)', r.headers['Set-Cookie']).group(1)}"}  # type: ignore[union-attr]
        async with http.get(f"{base}/ui/meetings/new", headers={**HTML, **jar}) as r:
            form = await r.text()
        start = {"csrf": hidden(form, "csrf"), "nonce": hidden(form, "nonce"), "topic": "Open a Pune office?",
                 "roster": "board", "rounds": "3", "mode": "parallel"}
        async with http.post(f"{base}/ui/meetings", data=start, headers={**HTML, **jar}, allow_redirects=False) as r:
            assert r.status == 303, await r.text()
            page_url = base + r.headers["Location"]
        meeting = page_url.rsplit("/", 1)[1]
        deadline = time.monotonic() + WAIT_S
        while model.waiting < SPECIALISTS:  # round 1 is being spoken
            assert time.monotonic() < deadline, daemon.log
            await asyncio.sleep(0.05)
        async with http.get(page_url, headers={**HTML, **jar}) as r:
            page = await r.text()
        csrf, message_id = hidden(page, "csrf"), hidden(page, "message_id")
        say = f"{base}/ui/meetings/{meeting}/say"
        sent = {"csrf": csrf, "message_id": message_id, "text": "Churn is 20%, not 5%."}

        async with http.post(say, data={**sent, "csrf": ""}, headers={**JSON, **jar}) as r:
            assert r.status == 403, await r.text()
        async with http.post(say, data=sent, headers=JSON) as r:
            assert r.status == 401, await r.text()
        assert contributions(daemon.config) == []

        answers = []
        for _ in range(2):  # a double press: the same form twice
            async with http.post(say, data=sent, headers={**JSON, **jar}) as r:
                assert r.status == 200, await r.text()
                answers.append(await r.json())
        assert answers[0]["ok"] and answers[0]["id"] == answers[1]["id"], answers
        assert contributions(daemon.config) == [("Churn is 20%, not 5%.", "web", message_id)]

        async with http.post(say, data={**sent, "text": "  "}, headers={**JSON, **jar}) as r:
            assert r.status == 400 and "empty" in (await r.json())["problem"]
        control = f"{base}/ui/meetings/{meeting}/control"
        async with http.post(control, data={"csrf": csrf, "kind": "explode"}, headers={**JSON, **jar}) as r:
            assert r.status == 400 and "wrap" in (await r.json())["problem"]

        # without script: a plain form post comes back to the page with a note
        async with http.post(control, data={"csrf": csrf, "kind": "pause"}, headers={**HTML, **jar},
                             allow_redirects=False) as r:
            assert r.status == 303 and r.headers["Location"].startswith(f"/ui/meetings/{meeting}?note="), r.headers
        model.release(1)
        await shows(http, page_url, jar, "Paused: no new round", daemon)
        assert model.asked(2) == [], "a round started while paused"
        async with http.post(control, data={"csrf": csrf, "kind": "resume"}, headers={**JSON, **jar}) as r:
            assert r.status == 200 and (await r.json())["said"].startswith("Resuming"), await r.text()
        deadline = time.monotonic() + WAIT_S
        while len(model.asked(2)) < SPECIALISTS:
            assert time.monotonic() < deadline, daemon.log
            await asyncio.sleep(0.05)
        async with http.post(control, data={"csrf": csrf, "kind": "wrap"}, headers={**JSON, **jar}) as r:
            assert r.status == 200, await r.text()
        model.release(2)
        live = await shows(http, page_url, jar, 'data-ended="true"', daemon)
        assert model.asked(3) == [], "a round 3 was asked after Wrap up"

        late = {**sent, "message_id": "late-message-1", "text": "One more thing"}
        async with http.post(say, data=late, headers={**JSON, **jar}) as r:
            assert r.status == 409 and "ended" in (await r.json())["problem"], await r.text()
        async with http.post(control, data={"csrf": csrf, "kind": "extend"}, headers={**JSON, **jar}) as r:
            assert r.status == 409, await r.text()
        assert [c[0] for c in contributions(daemon.config)] == ["Churn is 20%, not 5%."]

        # after a restart the page is drawn from the record: the same sequence
        assert await daemon.signal(signal.SIGTERM) == 0
        await daemon.start()
        async with http.get(f"http://127.0.0.1:{daemon.port}/ui/meetings/{meeting}", headers={**HTML, **jar}) as r:
            recorded = await r.text()
    kinds = sequence(live)
    assert kinds == ["statement"] * SPECIALISTS + ["control", "control", "contribution"] + ["statement"] * SPECIALISTS \
        + ["control"], kinds
    assert sequence(recorded) == kinds, (sequence(recorded), recorded)
    assert "Churn is 20%, not 5%." in recorded and 'id="table"' not in recorded


def sequence(page: str) -> list[str]:
    """The kind of each item of the page's meeting sequence, in order."""
    ol = page.split('id="statements"', 1)[1].split("</ol>", 1)[0]
    return re.findall(r'data-kind="([a-z]+)"', ol)


async def shows(http: ClientSession, url: str, jar: dict[str, str], text: str, daemon: SabhaProcess) -> str:
    """The meeting page once it shows ``text``."""
    deadline = time.monotonic() + WAIT_S
    while True:
        async with http.get(url, headers={**HTML, **jar}) as r:
            page = await r.text()
        if text in page:
            return page
        assert time.monotonic() < deadline, f"the page never showed {text!r}:\n{daemon.log}"
        await asyncio.sleep(0.1)
