"""The owner's pages in a real browser (headless chromium through selenium).

One browser for the module. A real daemon in this process on the offline model behind a gate
(:class:`tests.support.browser.GatedModel`): sign in with a link from the real ``sabha web link``,
start a meeting from the New meeting form, watch statements and the scoreboard arrive while the
meeting is held open halfway, reload and see nothing twice, let it finish and see the decision.
Every page is photographed at 375 px and 1280 px into ``test-artifacts/web/``.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

from board.envelope import Envelope
from board.room.meeting.events import MeetingEvent
from tests.support.browser import Browser, WebDaemon, browser  # noqa: F401

WIDTHS = (375, 1280)


def _seqs(b: Browser) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.get_attribute("data-seq") or "" for e in b.driver.find_elements(By.CSS_SELECTOR, "#statements > li")]


UNLABELLED = """return [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')]
  .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim())
  .map(e => e.outerHTML)"""
WIDER_THAN_PAGE = "return document.documentElement.scrollWidth > window.innerWidth"


def _photograph(b: Browser, url: str, name: str) -> None:
    """Both widths; every control labelled; nothing wider than a phone's screen."""
    b.driver.get(url)
    b.wait_for("main h1")
    assert b.driver.execute_script(UNLABELLED) == [], name
    for width in WIDTHS:
        b.size(width)
        assert not b.driver.execute_script(WIDER_THAN_PAGE), f"{name} scrolls sideways at {width} px"
        b.shot(f"{name}-{width}")
    b.size(1280)


def _dark(b: Browser, on: bool) -> None:
    b.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-color-scheme", "value": "dark" if on else "light"}]})


def _keyboard(b: Browser) -> None:
    """The first Tab reaches "Skip to content", and Enter on it moves focus to the page's content."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    ActionChains(b.driver).send_keys(Keys.TAB).perform()
    assert b.driver.switch_to.active_element.text == "Skip to content"
    ActionChains(b.driver).send_keys(Keys.ENTER).perform()
    assert b.driver.execute_script("return document.activeElement.id") == "main"


def _start_meeting(b: Browser, base: str, topic: str) -> str:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    b.driver.get(base + "/ui/meetings/new")
    b.wait_for("#new-meeting")
    b.shot("new-meeting-filled-1280")
    b.driver.find_element(By.ID, "topic").send_keys(topic)
    rounds = b.driver.find_element(By.ID, "rounds")
    rounds.clear()
    rounds.send_keys("2")
    Select(b.driver.find_element(By.ID, "mode")).select_by_value("parallel")
    b.driver.find_element(By.ID, "start").click()
    b.wait_for("#meeting")
    return str(b.driver.current_url)


def _no_repeats(b: Browser) -> list[str]:
    seqs = _seqs(b)
    assert len(seqs) == len(set(seqs)), f"a statement shown twice: {seqs}"
    return seqs


async def test_a_meeting_live_in_the_browser(tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    b = browser
    priced = ["llm:", "  prices:", "    offline: {input: 3, output: 15}"]  # so the cost page has bars to draw
    async with WebDaemon(tmp_path, extra=priced) as d:
        seen: Counter[str] = Counter()

        async def hold_halfway(event: MeetingEvent) -> None:
            """Stop the model once two statements and a scoreboard entry are out: the meeting cannot end."""
            seen[str(event.kind)] += 1
            if seen["agent_spoke"] >= 2 and seen["disagreement"] + seen["consensus"] >= 1 and not seen["held"]:
                seen["held"] += 1  # once: after the test releases it, the meeting runs to its end
                assert d.model is not None
                d.model.hold()

        d.board.parts.room.subscribe(hold_halfway)
        await d.board.handle(Envelope(channel="console", text="What should we **focus** on? <script>x()</script>",
                                      sender="owner", is_owner=True))
        link = await d.link()
        await asyncio.to_thread(b.sign_in, link)

        url = await asyncio.to_thread(_start_meeting, b, d.base, "Should we open an office in Lisbon next year?")
        meeting_id = url.rsplit("/", 1)[1]
        await asyncio.to_thread(b.wait_for, "#statements > li", 2)
        await asyncio.to_thread(b.wait_for, "#region-scoreboard .score-items li", 1)
        # ... and the meeting has not ended: it waits at the model
        assert meeting_id in d.board.parts.room.running()
        assert seen["ended"] == 0 and seen["decision"] == 0
        tallies = await asyncio.to_thread(b.texts, "#region-scoreboard .n")
        assert sum(int(t) for t in tallies) >= 1
        assert not await asyncio.to_thread(b.texts, "#region-decision .decision")
        assert (await asyncio.to_thread(b.texts, "#live-status")) == ["live"]
        for width in WIDTHS:
            await asyncio.to_thread(b.size, width)
            await asyncio.to_thread(b.shot, f"meeting-live-{width}")
        await asyncio.to_thread(b.size, 1280)
        await asyncio.to_thread(_dark, b, True)
        await asyncio.to_thread(b.shot, "meeting-live-dark-1280")
        await asyncio.to_thread(_dark, b, False)
        await asyncio.to_thread(b.size, 1280)

        before = await asyncio.to_thread(_no_repeats, b)
        await asyncio.to_thread(b.driver.refresh)  # reload mid-meeting: what was said once, then follow
        await asyncio.to_thread(b.wait_for, "#statements > li", len(before))
        assert await asyncio.to_thread(_no_repeats, b) == before

        assert d.model is not None
        d.model.release()
        await asyncio.to_thread(b.wait_for, "#region-decision .decision", 1, 60)
        await asyncio.to_thread(b.wait_for, "#region-phase [data-ended=true]", 1, 30)
        shown = await asyncio.to_thread(_no_repeats, b)
        details = await d.board.parts.room.store.details(meeting_id)
        objections = seen["objection"]
        assert len(shown) == len(details["statements"]) + objections  # every statement, each once
        assert (await asyncio.to_thread(b.texts, "#live-status")) == ["ended"]
        for width in WIDTHS:
            await asyncio.to_thread(b.size, width)
            await asyncio.to_thread(b.shot, f"meeting-decided-{width}")
        await asyncio.to_thread(b.size, 1280)

        await _other_pages(b, d)


async def _other_pages(b: Browser, d: WebDaemon) -> None:
    from selenium.webdriver.common.by import By

    for name, path in (("board", "/ui/"), ("meetings", "/ui/meetings"), ("decisions", "/ui/decisions"),
                       ("cost", "/ui/cost"), ("sessions", "/ui/sessions"), ("new-meeting", "/ui/meetings/new")):
        await asyncio.to_thread(_photograph, b, d.base + path, name)
    await asyncio.to_thread(_keyboard, b)
    # a conversation: Markdown rendered, the model's and the person's raw HTML shown as text
    [ref] = [r for r in await d.board.parts.sessions.list() if r.key == "main"]
    await asyncio.to_thread(_photograph, b, f"{d.base}/ui/sessions/{ref.session_id}", "session")
    page: Any = b.driver.page_source
    assert "<strong>focus</strong>" in page and "<script>x()" not in page and "&lt;script&gt;x()" in page
    # the decision's action items can be closed here
    await asyncio.to_thread(b.driver.get, d.base + "/ui/decisions")
    rows = await asyncio.to_thread(b.wait_for, "#actions ~ .table-wrap tbody tr", 3)
    first = rows[0].find_element(By.TAG_NAME, "button")
    label = first.get_attribute("aria-label")
    await asyncio.to_thread(first.click)
    await asyncio.to_thread(b.wait_for, "#h-done")
    assert label not in b.driver.page_source
    assert len(await d.board.parts.room.store.actions()) == len(rows) - 1
    # signed out, the pages are closed again
    await asyncio.to_thread(b.driver.find_element(By.CSS_SELECTOR, ".logout button").click)
    await asyncio.to_thread(b.wait_for, "pre code")  # the sign-in page ("run sabha web link")
    await asyncio.to_thread(b.driver.get, d.base + "/ui/meetings")
    await asyncio.to_thread(b.wait_for, "main h1")
    assert "sabha web link" in b.driver.page_source and "/ui/login" in b.driver.current_url
    await asyncio.to_thread(_photograph, b, d.base + "/ui/login", "login")
