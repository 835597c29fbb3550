"""The defects a reviewer found in the issue-38 web pages, each reproduced through a real daemon
(:class:`tests.support.browser.WebDaemon`, the real ``sabha web link``) and a plain aiohttp client: an error page
quoting the URL rendered it as Markdown (a link to another site on the owner's page); a chat stream opened
before sign-out went on streaming after it; the Track record's refusals re-rendered at the POST's address; the
Conversations page lost an old but active conversation and joined a message's lines; the meeting page came
with its agenda open (the debate below it on a phone without script). The crafted URL's error page is also
opened in Chromium at 375 and 1280 px (``test-artifacts/web/error-crafted-url-*.png``).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout

from tests.support.browser import Browser, WebDaemon, browser  # noqa: F401
from tests.support.web_decisions import csrf_of, sign_in

EVIL_PATHS = ("/ui/meetings/%5Bx%5D(%2F%2Fevil.example)", "/ui/meetings/%5Bx%5D(https:evil.example)",
              "/ui/meetings/%3Chttps:%2F%2Fevil.example%3E", "/ui/meetings/%5Bx%5D(%2F%2Fevil.example)/events",
              "/ui/decisions/%5Bx%5D(%2F%2Fevil.example)/ratify")


async def test_an_error_page_quoting_the_url_renders_no_link(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        csrf = csrf_of(await (await http.get(d.base + "/ui/meetings", headers=jar)).text())
        for path in EVIL_PATHS:
            method = http.post if path.endswith("/ratify") else http.get
            async with method(d.base + path, headers=jar, data={"csrf": csrf}, allow_redirects=False) as resp:
                body = await resp.text()
                assert resp.status == 404, (path, resp.status, body[:300])
            problem = re.search(r'<p class="problem" role="alert">(.*?)</p>', body, re.S)
            assert problem is not None, body[:500]
            assert "<a " not in problem.group(1) and "evil.example" in problem.group(1), (path, problem.group(1))
        async with http.post(d.base + "/ui/meetings", allow_redirects=False,
                             headers={"Accept": "text/html"}) as resp:  # a fixed text keeps its code
            body = await resp.text()
            assert resp.status == 401 and "<code>sabha web link</code>" in body, body[:800]


async def test_a_chat_stream_ends_when_its_owner_signs_out(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        csrf = csrf_of(await (await http.get(d.base + "/ui/meetings", headers=jar)).text())
        async with http.get(f"{d.base}/ui/chat/general/events", headers={"Cookie": jar["Cookie"]},
                            timeout=ClientTimeout(total=60)) as stream:
            assert stream.status == 200
            await stream.content.readline()  # the stream is open
            async with http.post(d.base + "/ui/logout", data={"csrf": csrf}, headers=jar,
                                 allow_redirects=False) as resp:
                assert resp.status == 303
            rest = await stream.content.read()  # until the server ends it (the client's 60 s bound fails it)
        assert b"event: history" not in rest, rest[:300]


async def test_every_outcome_of_resolving_a_prediction_redirects_to_the_track_record(tmp_path: Path) -> None:
    """A refusal re-rendered the page at the POST's address: a reload sent the form again."""
    from board.decisions.predictions.store import PredictionStore
    from tests.support.web_decisions import hold_meeting

    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        await hold_meeting(http, d, jar, "Should we open a Pune office?")
        first = (await PredictionStore(d.board.parts.db).query(status="all"))[0]
        csrf = csrf_of(await (await http.get(d.base + "/ui/track", headers=jar)).text())
        url = f"{d.base}/ui/track/predictions/{first.id}"
        for outcome, said in (("maybe", "Yes, No or Can"), ("no", "Recorded"), ("yes", "already resolved")):
            async with http.post(url, data={"outcome": outcome, "csrf": csrf}, headers=jar,
                                 allow_redirects=False) as resp:
                assert resp.status == 303, (outcome, resp.status)
                where = resp.headers["Location"]
                assert where.startswith("/ui/track?note="), where
            async with http.get(d.base + where, headers=jar) as resp:
                assert resp.status == 200 and said in await resp.text(), outcome


async def test_conversations_list_the_latest_active_and_keep_a_messages_lines(tmp_path: Path) -> None:
    """The list took the 500 newest *created* sessions (an old but active ``main`` dropped off) and read each one's
    end on every visit; a conversation's page joined the lines of a message into one paragraph."""
    from board.envelope import Envelope

    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        await d.board.handle(Envelope(text="first words", channel="console", sender="root", is_owner=True))
        sessions = d.board.parts.sessions
        for n in range(501):  # newer conversations, created after main and quiet since
            await sessions.open(f"board:research:wa-{n}", "research")
        await d.board.handle(Envelope(text="line one\nline two", channel="console", sender="root", is_owner=True))
        main = await sessions.current("main")
        assert main is not None
        async with http.get(d.base + "/ui/sessions", headers=jar) as resp:
            listing = await resp.text()
        assert f"/ui/sessions/{main.session_id}" in listing, "the active main conversation is not listed"
        async with http.get(d.base + f"/ui/sessions/{main.session_id}", headers=jar) as resp:
            body = await resp.text()
        assert "line one<br />\nline two" in body, body[body.find("line one") - 200:][:400]


async def test_the_agenda_comes_folded_without_script(tmp_path: Path) -> None:
    """Statements first on a phone depended on live.js: the page came with the agenda open."""
    from tests.support.web_decisions import hold_meeting

    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        meeting_id = await hold_meeting(http, d, jar, "Should we open a Pune office?")
        async with http.get(f"{d.base}/ui/meetings/{meeting_id}", headers=jar) as resp:
            body = await resp.text()
        agenda = re.search(r"<details class=\"agenda\"[^>]*>", body)
        assert agenda is not None, body[:2000]
        assert "open" not in agenda.group(0), agenda.group(0)


async def test_the_error_page_for_a_crafted_url_in_a_browser(tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    b = browser
    async with WebDaemon(tmp_path) as d:
        await asyncio.to_thread(b.sign_in, await d.link())

        def look() -> tuple[list[str], str]:
            b.driver.get(d.base + EVIL_PATHS[0])
            b.wait_for("main h1")
            links = [str(a.get_attribute("href")) for a in b.driver.find_elements(By.CSS_SELECTOR, "main a")]
            for width in (375, 1280):
                b.size(width)
                b.shot(f"error-crafted-url-{width}")
            return links, str(b.driver.find_element(By.CSS_SELECTOR, "main .problem").text)

        links, said = await asyncio.to_thread(look)
        assert not any("evil" in link for link in links), links
        assert "[x](//evil.example)" in said, said  # shown as it was typed, as text
