"""The Track record page after ``sabha demo`` (issue 38 review): the page said the scores were made up only
as "Model: demo" at the foot of each card; it now says so above the cards, in /stats's words. The demo's
meeting pages said "has not spoken yet" five times for meetings nobody held; they say "demo history: no
statements". The real ``sabha demo`` writes the history, the real daemon serves the pages, Chromium reads
them at 375 and 1280 px (``test-artifacts/web/track-demo-*``, ``meeting-demo-*``)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from tests.support.browser import Browser, WebDaemon, browser  # noqa: F401
from tests.support.cli import REPO

WIDTHS = (375, 1280)
WIDER_THAN_PAGE = "return document.documentElement.scrollWidth > window.innerWidth"


async def _sabha_demo(config: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.cli", "--config", str(config), "demo",
                                                env=env, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    return out.decode()


def _shots(b: Browser, name: str) -> None:
    for width in WIDTHS:
        b.size(width)
        assert not b.driver.execute_script(WIDER_THAN_PAGE), f"{name} scrolls sideways at {width} px"
        b.shot(f"{name}-{width}")
    b.size(1280)


def _above_the_cards(b: Browser) -> bool:
    return bool(b.driver.execute_script(
        "const n = document.querySelector('#demo-note'), c = document.querySelector('ul.cards.track');"
        "return !!n && !!c && !!(n.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING);"))


async def test_the_track_record_says_the_demo_scores_are_made_up(tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    b = browser
    async with WebDaemon(tmp_path) as d:
        added = await _sabha_demo(d.config)
        assert "added a demo history" in added, added
        await asyncio.to_thread(b.sign_in, await d.link())
        await asyncio.to_thread(b.driver.get, d.base + "/ui/track")
        await asyncio.to_thread(b.wait_for, "#track-research[data-scored=true]")
        note = await asyncio.to_thread(b.texts, "#demo-note")
        assert note and "made-up [demo] history" in note[0] and "sabha demo --remove" in note[0], note
        assert await asyncio.to_thread(_above_the_cards, b)
        await asyncio.to_thread(_shots, b, "track-demo")
        await asyncio.to_thread(b.driver.get, d.base + "/ui/meetings/demo-1")
        await asyncio.to_thread(b.wait_for, "#meeting")
        stances = " ".join(await asyncio.to_thread(b.texts, "table.stances"))
        assert "has not spoken yet" not in stances and "demo history: no statements" in stances, stances
        await asyncio.to_thread(_shots, b, "meeting-demo")


async def test_without_the_demo_the_track_record_has_no_demo_note(tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    b = browser
    async with WebDaemon(tmp_path) as d:
        await asyncio.to_thread(b.sign_in, await d.link())
        await asyncio.to_thread(b.driver.get, d.base + "/ui/track")
        await asyncio.to_thread(b.wait_for, "h1")
        assert not await asyncio.to_thread(b.texts, "#demo-note")
