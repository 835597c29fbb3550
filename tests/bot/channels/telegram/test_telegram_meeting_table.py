"""The meeting's Telegram topic shows the whole sequence (issue 40): a real ``sabha run`` on the fake Bot API (a
forum, the real PTB client), a scripted board model whose rounds the test holds, and the owner signed in to the
web pages of the same daemon.

During round 1 the owner writes in the meeting's own topic (taken as a contribution, not echoed there: the topic
shows it as the owner's message), writes in General, where the meeting was called (shown in the topic: nobody
reading the topic saw it), writes in from the web page (``POST /ui/meetings/{id}/say``), and sends
``/pause``. After round 1 the topic shows the pause's line (and the status says it is paused); ``/resume``
shows its line; then the web's contribution (``🗣 the owner (via web): “…”``), then round 2's statements, in that order.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from aiohttp import ClientSession

from bot.web.auth import COOKIE
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI, SentMessage
from tests.support.meeting_table import TableModel, db_rows, llm_lines
from tests.support.telegram import FORUM, OWNER, TOKEN, eventually

TOPIC = "Should we open a Pune office?"
FROM_TOPIC = "Rent in Pune went up 30% this year"
FROM_WEB = "Check *the* hiring pipeline first"
FROM_GENERAL = "Ask the landlord about a 3 year lease"
HTML = {"Accept": "text/html"}
JSON = {"Accept": "application/json"}


def _web_link(root: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(Path(__file__).resolve().parents[4]), TELEGRAM_BOT_TOKEN=TOKEN)
    done = subprocess.run([sys.executable, "-m", "bot.cli", "web", "link", "--config", str(root / "sabha.yaml")],
                          capture_output=True, text=True, env=env, cwd=root, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def _hidden(page: str, name: str) -> str:
    found = re.search(rf'name="{name}"(?: id="[^"]*")? value="([^"]*)"', page)
    assert found, f"no {name} field on the page"
    return found.group(1)


def _in_topic(fake: FakeTelegramAPI, thread: int) -> list[SentMessage]:
    return [m for m in fake.sent_to(FORUM, thread) if not m.text.startswith("🏛 Board meeting")]  # not the status


def _index(posts: list[SentMessage], fragment: str) -> list[int]:
    return [i for i, m in enumerate(posts) if fragment in m.text]


async def _say_on_web(daemon: SabhaProcess, root: Path, meeting_id: str, text: str) -> None:
    """Sign in with the real ``sabha web link`` and write into the meeting from its live page."""
    base = f"http://127.0.0.1:{daemon.port}"
    link = _web_link(root)
    async with ClientSession() as http:
        async with http.post(f"{base}/ui/login", data={"token": link.split("token=")[1]},
                             allow_redirects=False) as r:
            assert r.status == 303, await r.text()
            cookie = re.search(rf"{COOKIE}=([^;]+)", r.headers["Set-Cookie"])
            assert cookie is not None
            jar = {"Cookie": f"{COOKIE}={cookie.group(1)}"}
        async with http.get(f"{base}/ui/meetings/{meeting_id}", headers={**HTML, **jar}) as r:
            assert r.status == 200, await r.text()
            page = await r.text()
        sent = {"csrf": _hidden(page, "csrf"), "message_id": _hidden(page, "message_id"), "text": text}
        async with http.post(f"{base}/ui/meetings/{meeting_id}/say", data=sent, headers={**JSON, **jar}) as r:
            assert r.status == 200, await r.text()


async def test_the_topic_shows_the_webs_contribution_between_the_rounds_and_the_pause_and_resume(
        tmp_path: Path, fake: FakeTelegramAPI) -> None:
    async with TableModel() as model:
        model.hold(1)
        extra = [*llm_lines(model), "board:", "  meetings:", "    agent_timeout_s: 600", "    max_duration_s: 3600",
                 "    max_turns_per_agent: 2"]
        sabha = SabhaProcess(write_config(tmp_path, fake, None, extra=extra))
        try:
            await sabha.start()
            fake.push_text(FORUM, OWNER, f"/meeting {TOPIC}")
            await model.reach(1)
            await eventually(lambda: fake.created_topics, "the meeting's own topic")
            thread = int(fake.created_topics[-1]["message_thread_id"])
            rows = db_rows(tmp_path, "SELECT id FROM meetings WHERE status = 'running'")
            meeting_id = str(rows[0][0])
            fake.push_text(FORUM, OWNER, FROM_TOPIC, thread_id=thread)
            await eventually(lambda: _index(fake.sent_to(FORUM), "Noted for round 2"), "the owner's note")
            fake.push_text(FORUM, OWNER, FROM_GENERAL)  # in General, where the meeting was called: its origin
            await eventually(lambda: len(_index(fake.sent_to(FORUM), "Noted for round 2")) >= 2, "the second note")
            await _say_on_web(sabha, tmp_path, meeting_id, FROM_WEB)
            fake.push_text(FORUM, OWNER, "/pause", thread_id=thread)
            await eventually(lambda: _index(fake.sent_to(FORUM), f"Pausing {meeting_id}"), "the pause's answer")
            model.release(1)
            await eventually(lambda: _index(_in_topic(fake, thread), "⏸ Paused"), "the pause's line in the topic")
            assert not _index(_in_topic(fake, thread), "board meeting, round 2")  # paused: no round 2
            await eventually(lambda: any("Status: paused: no new round until /resume" in m.text
                                         for m in fake.edited_messages), "the status saying it is paused")
            fake.push_text(FORUM, OWNER, "/resume", thread_id=thread)
            await eventually(lambda: db_rows(tmp_path, "SELECT 1 FROM meetings WHERE id = ? AND status = 'ended'",
                                             meeting_id), "the meeting's end", timeout=240)
            await eventually(lambda: _index(_in_topic(fake, thread), "📝 Minutes"), "the minutes in the topic")
        finally:
            await sabha.close()
    posts = _in_topic(fake, thread)
    first, second = _index(posts, "board meeting, round 1"), _index(posts, "board meeting, round 2")
    paused, resumed = _index(posts, "⏸ Paused"), _index(posts, "▶️ Resumed")
    web = _index(posts, "🗣 the owner (via web)")
    assert len(first) == 5 and len(second) == 5, [m.text[:60] for m in posts]
    assert len(paused) == len(resumed) == len(web) == 1, [m.text[:60] for m in posts]
    assert max(first) < paused[0] < resumed[0] < web[0] < min(second), [m.text[:60] for m in posts]
    assert posts[web[0]].text == f"🗣 the owner (via web): \u201c{FROM_WEB}\u201d"  # as written: no Markdown
    assert "no new round starts until /resume" in posts[paused[0]].text
    echoes = [m.text for m in posts if FROM_TOPIC in m.text and "🗣" in m.text]
    assert echoes == [], echoes  # written in the topic: shown there as the owner's own message, not again
    general = [i for i in _index(posts, FROM_GENERAL) if posts[i].text.startswith("🗣")]
    assert len(general) == 1 and max(first) < general[0] < min(second), [m.text[:60] for m in posts]
    got = {r[0] for r in db_rows(tmp_path, "SELECT item FROM meeting_posts WHERE channel = 'telegram' AND status = "
                                           "'sent' AND (item LIKE 'contribution:%' OR item LIKE 'control:%')")}
    assert len([i for i in got if i.startswith("control:")]) == 2 and len(got) == 4, got
