"""The operations page (issue 44) in a real browser (headless chromium through selenium) at 375 px and 1280 px,
screenshots ``ops-375`` and ``ops-1280`` in ``test-artifacts/web/``: a real daemon in this process on the offline
model (:class:`tests.support.browser.WebDaemon`), signed in with a link from the real ``sabha web link``, over a
state seeded with known figures (:mod:`tests.support.ops_seed`). The page shows each part with its figures, nothing
scrolls sideways at either width, and the nav of every page leads to it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.support.browser import Browser, WebDaemon, browser  # noqa: F401
from tests.support.ops_seed import MODEL, seed

WIDER_THAN_PAGE = "return document.documentElement.scrollWidth > window.innerWidth"
PARTS = ("latency-hour", "latency-day", "errors", "guardrails", "prompt", "queue", "replicas", "scheduled")


def _look(b: Browser, base: str) -> dict[int, str]:
    """The page at each width (the text of its main part); nothing wider than the screen; the screenshots."""
    from selenium.webdriver.common.by import By

    b.driver.get(base + "/ui/cost")
    b.wait_for("main h1")
    b.driver.find_element(By.CSS_SELECTOR, "nav a[href='/ui/ops']").click()
    b.wait_for("#latency-hour")
    seen = {}
    for width in (375, 1280):
        b.size(width)
        assert not b.driver.execute_script(WIDER_THAN_PAGE), f"the operations page scrolls sideways at {width} px"
        b.shot(f"ops-{width}")
        seen[width] = str(b.driver.find_element(By.TAG_NAME, "main").text)
    return seen


async def test_the_operations_page_reads_well_at_375_and_1280_px(tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    b = browser
    async with WebDaemon(tmp_path) as d:
        await seed(d.board.parts.db, d.board.parts.ledger)
        await asyncio.to_thread(b.sign_in, await d.link())
        seen = await asyncio.to_thread(_look, b, d.base)
        for part in PARTS:
            assert await asyncio.to_thread(b.texts, f"#{part}"), part
        for width, text in seen.items():
            assert "Time to answer · Last hour" in text and "Guardrail feed" in text, (width, text)
            assert MODEL in text and "1.9 s" in text and "75%" in text, (width, text)
            assert "429 slow down" in text and "1 overdue" in text, (width, text)
