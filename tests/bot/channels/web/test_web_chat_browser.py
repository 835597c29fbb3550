"""Issue 28, the web chat in a real browser (headless chromium through selenium): log in through a
``sabha web link``, chat with the critic on a real ``sabha run`` whose model streams slowly, and
see the answer stream in (several distinct partial texts before the final one); reload mid-answer
and see the answer so far, then the rest, and the answer once (counted after a marker question's answer is
shown: anything still to come for the reloaded answer would be on the page by then). Screenshots at 375 px and 1280 px
go to ``test-artifacts/web/``.

Selenium blocks; its calls run in a thread so the fake model (served by this test's event loop)
keeps streaming meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tests.support.browser import Browser, browser, web_link  # noqa: F401
from tests.support.daemon import SabhaProcess
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.web_chat import write_chat_config

ANSWER = ("Pricing is a promise about value, so start from the outcome your customer buys, then test three "
          "price points with ten real conversations before you print a number anywhere.")
SECOND = ("Churn is the question behind that one: ask the last five customers who left what they expected, "
          "and what they got instead, before you change anything at all.")
MARKER = "Marker answer: the conversation goes on after the reload."


def ask(b: Browser, text: str) -> None:
    """Type ``text`` in the message box and press Enter (the keyboard path)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    box = b.driver.find_element(By.ID, "message")
    box.clear()
    box.send_keys(text)
    box.send_keys(Keys.ENTER)


def watch(b: Browser, final: str, timeout: float = 120.0) -> list[str]:
    """Sample the page until ``final`` is shown as an answer: the distinct draft texts seen before."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            answers = [e.text for e in b.driver.find_elements(By.CSS_SELECTOR, ".msg.answer .text")]
            if final in answers:
                return seen
            for draft in b.driver.find_elements(By.CSS_SELECTOR, ".msg.draft:not(.waiting) .text"):
                text = draft.text
                if text and (not seen or seen[-1] != text):
                    seen.append(text)
        except StaleElementReferenceException:
            pass  # the draft was replaced while being read
        time.sleep(0.03)
    raise AssertionError(f"{final!r} was not shown in {timeout} s; drafts seen: {seen}\n{b.driver.page_source[:3000]}")


def connected(b: Browser) -> None:
    b.wait_for("main [data-connected=true]")


def answers(b: Browser, text: str) -> int:
    return b.texts(".msg.answer .text").count(text)


async def test_chat_with_the_critic_streams_in_and_a_reload_mid_answer_shows_it_once(
    tmp_path: Path, fake_openai: FakeOpenAI, browser: Browser  # noqa: F811
) -> None:
    fake_openai.script_text(ANSWER, chunk_delay=0.12)
    fake_openai.script_text(SECOND, chunk_delay=0.12)
    fake_openai.script_text(MARKER)
    config = write_chat_config(tmp_path, fake_openai, stream=True)
    sabha = SabhaProcess(config, env={})
    try:
        await sabha.start()
        link = await asyncio.to_thread(web_link, config)
        await asyncio.to_thread(browser.size, 1280)
        await asyncio.to_thread(browser.sign_in, link)
        await asyncio.to_thread(browser.driver.get, f"http://127.0.0.1:{sabha.port}/ui/chat/critic")
        await asyncio.to_thread(connected, browser)
        await asyncio.to_thread(ask, browser, "how do I price my product?")
        partial = await asyncio.to_thread(watch, browser, ANSWER)
        assert all(ANSWER.startswith(p) for p in partial), partial  # each a beginning of the answer
        assert len([p for p in partial if p != ANSWER]) >= 3, partial  # several partial texts before the final one
        assert await asyncio.to_thread(answers, browser, ANSWER) == 1
        assert not await asyncio.to_thread(browser.texts, ".msg.draft")  # the answer took the draft's place

        await asyncio.to_thread(ask, browser, "and churn?")
        await asyncio.to_thread(browser.wait_for, ".msg.draft:not(.waiting)")  # mid-answer
        await asyncio.to_thread(browser.driver.refresh)  # a reload: the answer so far, then the rest
        await asyncio.to_thread(connected, browser)
        after = await asyncio.to_thread(watch, browser, SECOND)
        assert after and all(SECOND.startswith(p) for p in after), after
        await asyncio.to_thread(ask, browser, "marker?")  # then count, once its answer is shown
        await asyncio.to_thread(watch, browser, MARKER)
        await asyncio.to_thread(browser.shot, "chat-1280")
        assert await asyncio.to_thread(answers, browser, SECOND) == 1  # never twice
        assert await asyncio.to_thread(answers, browser, ANSWER) == 1
        assert await asyncio.to_thread(answers, browser, MARKER) == 1
        assert await asyncio.to_thread(browser.texts, ".msg.question .text") == ["how do I price my product?",
                                                                                 "and churn?", "marker?"]
        await asyncio.to_thread(browser.size, 375)
        await asyncio.to_thread(browser.shot, "chat-375")
        width = await asyncio.to_thread(browser.driver.execute_script,
                                        "return document.documentElement.scrollWidth")
        assert width <= 375  # nothing wider than a phone
    finally:
        await sabha.close()
