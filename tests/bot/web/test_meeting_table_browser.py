"""The owner at the table on the live meeting page (issue 40), in a real browser against a real ``sabha run``.

A real ``sabha run`` process (web pages only, no channel) on a slow fake model that sits meetings
(:class:`tests.support.fakes.seat_model.SeatModel`: its round-1 and round-2 statements wait at the model until the
test lets them go, so "during round 1" holds however slow the machine is). The owner signs in with a link from the
real ``sabha web link``, starts a three-round meeting from the New meeting form and stays on its live page:

- while round 1 is being spoken the page says who is speaking; the owner types a contribution in the page's box
  and sends it (the page's CSRF token, its own message id); the page says it was sent;
- every member's round-2 request at the model quotes it as the owner's;
- the page shows it in the sequence: after round 1's statements, before round 2's;
- Wrap up pressed during round 2: the meeting ends after round 2 with its decision (no round 3 is asked), the
  page reads "ended (wrapped)" and the box is gone.

Screenshots: ``test-artifacts/web/meeting-table-live-1280.png`` and ``-375`` (round 2, the box and buttons),
``meeting-table-1280.png`` (ended).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.support.browser import Browser, browser, web_link  # noqa: F401
from tests.support.daemon import SabhaProcess
from tests.support.fakes.seat_model import SeatModel
from tests.support.seat import write_seat_config

T = TypeVar("T")
SPECIALISTS = 5  # the default board roster's members besides the chair
SAID = "Our biggest customer just told me they will churn if we move the office."
WAIT_S = 120.0  # a bound only a hung daemon or page reaches


@pytest.fixture
async def seated(tmp_path: Path) -> AsyncIterator[tuple[SabhaProcess, SeatModel]]:
    """The model on the fake (rounds 1 and 2 held) and a real ``sabha run`` on it; both ended afterwards."""
    async with SeatModel(latency=0.2) as model:
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


async def until(what: str, check: Callable[[], bool], timeout: float = WAIT_S) -> None:
    """Wait until ``check()`` holds (a bound only a hung daemon reaches)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not so after {timeout} s")
        await asyncio.sleep(0.05)


async def off(fn: Callable[..., T], *args: Any) -> T:
    """Selenium blocks: drive it from a thread, so the fake model in this loop keeps answering."""
    return await asyncio.to_thread(fn, *args)


def _start_meeting(b: Browser, base: str, topic: str) -> str:
    from selenium.webdriver.common.by import By

    b.driver.get(base + "/ui/meetings/new")
    b.wait_for("#new-meeting")
    b.driver.find_element(By.ID, "topic").send_keys(topic)
    rounds = b.driver.find_element(By.ID, "rounds")
    rounds.clear()
    rounds.send_keys("3")
    b.driver.find_element(By.ID, "start").click()
    b.wait_for("#meeting")
    return str(b.driver.current_url).rsplit("/", 1)[1].split("?")[0]


def _type_and_send(b: Browser) -> str:
    """Type the contribution in the box with the keyboard and send it with Ctrl+Enter; the status line."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    box = b.driver.find_element(By.ID, "say-text")
    box.click()
    box.send_keys(SAID)
    box.send_keys(Keys.CONTROL, Keys.ENTER)
    deadline = time.monotonic() + WAIT_S
    while not (said := b.texts("#table-status")[0]):
        assert time.monotonic() < deadline, "the page never said whether the contribution was sent"
        time.sleep(0.05)
    assert b.driver.find_element(By.ID, "say-text").get_attribute("value") == "", "the box is emptied once sent"
    return said


def _sequence(b: Browser) -> list[tuple[str, str]]:
    """(kind, text) of each item of the meeting's sequence, in order."""
    return [(str(kind), str(text)) for kind, text in b.driver.execute_script(
        "return [...document.querySelectorAll('#statements > li')].map(e => [e.dataset.kind, e.textContent]);")]


def _ended(b: Browser) -> str:
    b.wait_for("#region-phase [data-ended=true]", 1, WAIT_S)
    return b.texts("#region-phase")[0]


async def test_the_owner_speaks_from_the_live_page_and_wraps_up(seated: tuple[SabhaProcess, SeatModel],
                                                                 browser: Browser) -> None:  # noqa: F811
    daemon, model = seated
    base = f"http://127.0.0.1:{daemon.port}"
    await off(browser.sign_in, await off(web_link, daemon.config))
    meeting_id = await off(_start_meeting, browser, base, "Should we open a Pune office?")

    # round 1 is being spoken (every member's statement waits at the model): the page says who
    await until("every member is asked for round 1", lambda: model.waiting == SPECIALISTS)
    await off(browser.wait_for, "#table #say-text")
    phase = await off(lambda: browser.texts("#region-phase")[0])
    assert "speaking" in phase, phase
    said = await off(_type_and_send, browser)
    assert said.startswith("Sent"), said
    model.release(1)

    # round 2: every member's request quotes the owner
    await until("every member is asked for round 2", lambda: len(model.asked(2)) == SPECIALISTS)
    for asked in model.asked(2):
        quoted = asked.text.split("the owner says", 1)
        assert len(quoted) == 2 and SAID in quoted[1], \
            f"{asked.role}'s round-2 request does not quote the owner:\n{asked.text}"
    assert {a.role for a in model.asked(2)} == {a.role for a in model.asked(1)}

    # the page shows it after round 1's statements; Wrap up while round 2 is spoken
    await off(browser.wait_for, "#statements li.contribution")
    await off(browser.shot, "meeting-table-live-1280")
    await off(browser.size, 375)
    await off(browser.shot, "meeting-table-live-375")
    await off(browser.size, 1280)
    await off(browser.driver.find_element("id", "control-wrap").click)
    await until("the page says it wraps up", lambda: browser.texts("#table-status")[0].startswith("Wrapping"))
    model.release(2)
    phase = await off(_ended, browser)
    assert "wrapped" in phase, phase
    assert model.asked(3) == [], "a round 3 was asked after Wrap up"

    sequence = await off(_sequence, browser)
    kinds = [kind for kind, _ in sequence]
    first = kinds.index("contribution")
    assert kinds[:first] == ["statement"] * SPECIALISTS, sequence
    assert SAID in sequence[first][1] and "via web" in sequence[first][1], sequence[first]
    assert kinds[first + 1:].count("statement") == SPECIALISTS, sequence
    assert "control" in kinds[first + 1:], "the wrap up is in the sequence"
    assert await off(browser.texts, "#h-decision") == ["Decision"]
    assert not await off(lambda: browser.driver.find_element("id", "table").is_displayed()), \
        "the box stays after the meeting ended"
    await off(browser.size, 1280)
    await off(browser.shot, "meeting-table-1280")
    assert meeting_id in await off(lambda: browser.driver.current_url)
