"""Issue 28, the web chat's kill test: a real ``sabha run``, 20 web messages in flight on a slow model,
``kill -9`` mid-answer; after the restart every message is answered exactly once and each browser (an
SSE client per conversation, reconnecting with ``Last-Event-ID`` as EventSource does) shows it once.
Proven with a marker message per conversation after the restart, not with a sleep."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from pathlib import Path

import pytest
from aiohttp import ClientSession

from bot.web.auth import COOKIE
from tests.support.browser import web_link
from tests.support.daemon import SabhaProcess, where_they_stand
from tests.support.fakes.echo_model import EchoModel
from tests.support.telegram import eventually
from tests.support.web_chat import ChatBrowser, new_id, post_message, write_chat_config

ADVISORS = ("general", "finance", "critic", "research", "strategy")
COUNT = 20
_ECHO = re.compile(r"^ECHO (Q\d{3})\b")


async def sign_in(http: ClientSession, base: str, config: Path) -> tuple[str, str]:
    """Log in through a real ``sabha web link``: the session cookie and the chat page's CSRF token."""
    link = await asyncio.to_thread(web_link, config)
    token = link.split("token=", 1)[1]
    async with http.post(f"{base}/ui/login", data={"token": token}, allow_redirects=False) as resp:
        assert resp.status == 303, await resp.text()
        found = re.search(rf"{COOKIE}=([^;]+)", resp.headers["Set-Cookie"])
    assert found is not None
    cookie = f"{COOKIE}={found.group(1)}"
    async with http.get(f"{base}/ui/chat/general", headers={"Cookie": cookie}) as resp:
        assert resp.status == 200
        csrf = re.search(r'name="csrf" value="([^"]+)"', await resp.text())
    assert csrf is not None
    return cookie, csrf.group(1)


@pytest.mark.xdist_group("bursts")
async def test_kill_9_with_20_web_messages_in_flight_answers_each_once_and_every_page_shows_it(
    tmp_path: Path, echo_model: EchoModel
) -> None:
    config = write_chat_config(tmp_path, echo_model)
    sabha = SabhaProcess(config, env={})
    browsers: list[ChatBrowser] = []
    try:
        await sabha.start()
        base = lambda: f"http://127.0.0.1:{sabha.port}"  # noqa: E731 - the port changes at the restart
        async with ClientSession() as http:
            cookie, csrf = await sign_in(http, base(), config)
            browsers = [ChatBrowser(base, advisor, cookie=cookie).start() for advisor in ADVISORS]
            for browser in browsers:
                await browser.wait(lambda b: b.connections == 1, f"the {browser.advisor} page to connect")
            # the real login guards the chat: no cookie, a forged one, no CSRF token: refused, nothing stored
            assert (await post_message(http, base(), "critic", "Q999 sneaky", owner=False))[0] == 401
            assert (await post_message(http, base(), "critic", "Q999 sneaky", cookie=f"{COOKIE}=forged.x"))[0] == 401
            assert (await post_message(http, base(), "critic", "Q999 sneaky", csrf=None, cookie=cookie))[0] == 403
            assert (await post_message(http, base(), "critic", "Q999 sneaky", csrf="forged", cookie=cookie))[0] == 403
            echo_model.hold()  # every turn stops at the model: mid-answer when the kill comes
            for i in range(COUNT):
                status, body = await post_message(http, base(), ADVISORS[i % len(ADVISORS)], f"Q{i:03d} what now?",
                                                  new_id(), csrf=csrf, cookie=cookie)
                assert status == 202 and body["duplicate"] is False, body  # stored before the 202
            await eventually(lambda: echo_model.in_flight >= len(ADVISORS), "a turn at the model in every lane", 30)
            sabha.proc.kill()  # type: ignore[union-attr]  # kill -9: no shutdown, nothing finished
            await sabha.wait()
            assert not any(_ECHO.match(r) for b in browsers for r in b.replies())  # nothing was answered yet
            echo_model.release()
            await sabha.start()  # the same data dir: the cookie's key and the inbox are there
            for advisor in ADVISORS:
                status, _ = await post_message(http, base(), advisor, f"MARK {advisor}", new_id(), csrf=csrf,
                                               cookie=cookie)
                assert status == 202
            for browser in browsers:
                await browser.wait(lambda b: f"ECHO MARK {b.advisor}" in b.replies(), f"{browser.advisor}'s marker",
                                   timeout=60)
        answers = Counter(m.group(1) for b in browsers for r in b.replies() if (m := _ECHO.match(r)))
        expected = [f"Q{i:03d}" for i in range(COUNT)]
        missing = [q for q in expected if answers[q] == 0]
        assert not missing, where_they_stand(tmp_path / "sessions", missing)
        assert all(answers[q] == 1 for q in expected), answers  # exactly once, each on its page
        for i, browser in enumerate(browsers):
            mine = [f"Q{j:03d}" for j in range(i, COUNT, len(ADVISORS))]
            assert [_ECHO.match(r).group(1) for r in browser.replies() if _ECHO.match(r)] == mine  # type: ignore[union-attr]
            assert browser.questions() == [f"{q} what now?" for q in mine] + [f"MARK {browser.advisor}"]
            assert browser.repeats == [] and browser.drafts == {}  # no row twice, no draft left over
            assert not any("Q999" in text for text in browser.shown())
            assert browser.connections >= 2  # it followed across the restart
    finally:
        for browser in browsers:
            await browser.close()
        echo_model.release()
        await sabha.close()
