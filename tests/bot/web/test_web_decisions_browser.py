"""Ratify a decision from the live meeting page in a real browser (headless chromium, selenium).

A real daemon in this process on the offline model: sign in with a link from the real ``sabha web
link``, start a meeting from the New meeting form and stay on its live page; the decision arrives
through the stream with its state (proposed) and the Ratify / Veto / Revisit forms, whose CSRF field
the page fills in; press Ratify there and see the state change to ratified by the owner, recorded in
the board. Then the decisions page: an action item snoozed with its form, a due date refused; and the
track record once two predictions are resolved. The pages are photographed at 375 px and 1280 px
(``test-artifacts/web/decision-*``, ``track-record-*``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from board.decisions.predictions.store import PredictionStore
from board.decisions.ratify import Verdict
from board.decisions.reminders import reminder_key
from board.envelope import Envelope
from board.routing.router import Route
from tests.support.browser import Browser, WebDaemon, browser  # noqa: F401

WIDTHS = (375, 1280)
WIDER_THAN_PAGE = "return document.documentElement.scrollWidth > window.innerWidth"


def _start_meeting(b: Browser, base: str, topic: str) -> str:
    from selenium.webdriver.common.by import By

    b.driver.get(base + "/ui/meetings/new")
    b.wait_for("#new-meeting")
    b.driver.find_element(By.ID, "topic").send_keys(topic)
    rounds = b.driver.find_element(By.ID, "rounds")
    rounds.clear()
    rounds.send_keys("1")
    b.driver.find_element(By.ID, "start").click()
    b.wait_for("#meeting")
    return str(b.driver.current_url).rsplit("/", 1)[1]


def _shots(b: Browser, name: str) -> None:
    for width in WIDTHS:
        b.size(width)
        assert not b.driver.execute_script(WIDER_THAN_PAGE), f"{name} scrolls sideways at {width} px"
        b.shot(f"{name}-{width}")
    b.size(1280)


def _ended(b: Browser, timeout: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while b.texts("#live-status") != ["ended"]:
        assert time.monotonic() < deadline, b.texts("#live-status")
        time.sleep(0.05)


def _type_due(b: Browser, item: int, text: str) -> None:
    from selenium.webdriver.common.by import By

    field = b.driver.find_element(By.ID, f"due-{item}")
    field.clear()
    field.send_keys(text)
    b.driver.find_element(By.CSS_SELECTOR, f"#a-{item} form[action$=due] button").click()


def _press(b: Browser, css: str) -> None:
    from selenium.webdriver.common.by import By

    b.driver.find_element(By.CSS_SELECTOR, css).click()


async def test_ratify_from_the_live_meeting_page(tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    b = browser
    async with WebDaemon(tmp_path, extra=["board:", "  meetings:", "    min_resolved_predictions: 1"]) as d:
        await asyncio.to_thread(b.sign_in, await d.link())
        d.model.hold()  # the page is open and live before the meeting can decide anything
        meeting_id = await asyncio.to_thread(_start_meeting, b, d.base, "Should we launch the mobile app in spring?")
        assert (await asyncio.to_thread(b.driver.find_element, "css selector", "#meeting")).get_attribute(
            "data-live") == "true"
        assert not await asyncio.to_thread(b.texts, "#region-decision .ruling")
        d.model.release()
        # the decision arrives through the stream, with its state and the forms (no reload)
        await asyncio.to_thread(b.wait_for, f"#ruling-{meeting_id}[data-verdict=proposed] .rule-ratify button", 1, 60)
        await asyncio.to_thread(_ended, b)  # the region is not re-rendered under the press
        csrf = await asyncio.to_thread(b.driver.execute_script,
                                       "return document.querySelector('.rule-ratify input[name=csrf]').value")
        assert csrf  # the fragment came without the token; the page put its own in
        await asyncio.to_thread(_shots, b, "decision-proposed")
        await asyncio.to_thread(_press, b, f"#ruling-{meeting_id} .rule-ratify button")
        await asyncio.to_thread(b.wait_for, f"#ruling-{meeting_id}[data-verdict=ratified]", 1, 30)
        said = await asyncio.to_thread(b.texts, "#note")
        assert said and f"Decision {meeting_id}" in said[0] and "ratified by the owner (web)" in said[0]
        state = (await asyncio.to_thread(b.texts, f"#ruling-{meeting_id} .verdict"))[0]
        assert "ratified" in state and "by the owner (web)" in state and "UTC" in state
        assert not await asyncio.to_thread(b.texts, f"#ruling-{meeting_id} .rule-ratify")
        await asyncio.to_thread(_shots, b, "decision-ratified")
        record = (await d.board.parts.decisions.find(meeting_id)).record
        assert record is not None and record.verdict is Verdict.RATIFIED and record.ruled_by == "web:owner"

        # the decisions page: the same state; an action item snoozed from its row
        await asyncio.to_thread(b.driver.get, d.base + "/ui/decisions")
        await asyncio.to_thread(b.wait_for, f"#d-{meeting_id} [data-verdict=ratified]")
        item = (await d.board.parts.room.store.actions(meeting_id=meeting_id))[0]
        before = await d.board.parts.schedule.get(reminder_key(item.id))
        await asyncio.to_thread(_press, b, f"#a-{item.id} form[action$=snooze] button")
        await asyncio.to_thread(b.wait_for, "#note")
        assert f"Snoozed #{item.id}" in (await asyncio.to_thread(b.texts, "#note"))[0]
        after = await d.board.parts.schedule.get(reminder_key(item.id))
        assert before is not None and after is not None and after.due_at > before.due_at
        await asyncio.to_thread(_shots, b, "decision-actions")
        # a due date the board cannot read: its words on the page, what was typed kept, nothing changed
        await asyncio.to_thread(_type_due, b, item.id, "soonish")
        await asyncio.to_thread(b.wait_for, "#note[role=alert]")
        assert "soonish" in (await asyncio.to_thread(b.texts, "#note"))[0]
        field = await asyncio.to_thread(b.driver.find_element, "css selector", f"#due-{item.id}")
        assert field.get_attribute("value") == "soonish"
        assert await d.board.parts.schedule.get(reminder_key(item.id)) == after
        await asyncio.to_thread(_shots, b, "decision-due-refused")

        # the track record: an advisor's resolved predictions scored, the others "too few"
        rows = await PredictionStore(d.board.parts.db).query(status="all")
        assert rows  # the offline members predict
        for row, said in zip(rows[:2], ("yes", "no"), strict=False):
            envelope = Envelope(channel="console", text=f"/resolve {row.id} {said}", sender="owner",
                                chat_id="console", is_owner=True)
            await d.board.parts.commands.run_command(envelope, Route(kind="command", role="general",
                                                                     text=f"{row.id} {said}",
                                                      session_key="t", command="resolve"))
        await asyncio.to_thread(b.driver.get, d.base + "/ui/track")
        await asyncio.to_thread(b.wait_for, "#track-" + rows[0].role + "[data-scored=true] table.reliability")
        await asyncio.to_thread(_shots, b, "track-record")
