"""Issue 38, the web chat as a person reads it, in a real browser (headless chromium through selenium) on a
real ``sabha run`` with the offline model, at 375 px and 1280 px (screenshots in ``test-artifacts/web/``):

- a command's reply keeps its line breaks (``/roles``, ``/help``: one role, one command a line);
- ``/meeting``'s "watch it live" is a link, on this origin, that opens the meeting's page;
- after the meeting the chat shows a decision card (recommendation, the vote, the actions, "Read the
  minutes"), never the whole minutes in a bubble, never a raw ``[ ]``;
- the chat with the chair shows the conversation it shares with the terminal (``sabha ask``) on opening.

Selenium blocks; its calls run in a thread.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from tests.support.browser import REPO, Browser, browser, web_link, write_web_config  # noqa: F401
from tests.support.daemon import SabhaProcess

WIDTHS = (375, 1280)


def _signed_in(b: Browser, link: str, url: str) -> None:
    b.size(1280)
    b.sign_in(link)
    b.driver.get(url)
    b.wait_for("main [data-connected=true]")


def _send(b: Browser, text: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    box = b.driver.find_element(By.ID, "message")
    box.clear()
    box.send_keys(text)
    box.send_keys(Keys.ENTER)


def _shots(b: Browser, name: str) -> None:
    """Screenshots at each width; nothing on the page wider than the window."""
    for width in WIDTHS:
        b.size(width)
        wide = b.driver.execute_script(
            "return [document.documentElement.scrollWidth, Array.from(document.querySelectorAll('body *'))"
            ".filter(function (e) { return e.getBoundingClientRect().right > window.innerWidth + 1; })"
            ".map(function (e) { return e.tagName + '.' + e.className; }).slice(0, 5)]")
        assert wide[0] <= width, (name, width, wide)
        b.shot(f"{name}-{width}")


async def _daemon(tmp_path: Path) -> tuple[SabhaProcess, str]:
    config = write_web_config(tmp_path)
    sabha = SabhaProcess(config, env={})
    await sabha.start()
    return sabha, await asyncio.to_thread(web_link, config)


async def test_command_replies_keep_their_line_breaks(tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    sabha, link = await _daemon(tmp_path)
    try:
        url = f"http://127.0.0.1:{sabha.port}/ui/chat/general"
        await asyncio.to_thread(_signed_in, browser, link, url)
        await asyncio.to_thread(_send, browser, "/roles")
        (roles,) = await asyncio.to_thread(browser.wait_for, ".msg.command .text")
        await asyncio.to_thread(_send, browser, "/help")
        await asyncio.to_thread(browser.wait_for, ".msg.command .text", 2)
        roles_text, help_text = await asyncio.to_thread(browser.texts, ".msg.command .text")
        role_lines = [line for line in roles_text.splitlines() if line.strip()]
        assert len(role_lines) >= 6, roles_text  # a heading and one line per advisor, not one run-on line
        for advisor in ("Research", "Critic", "Finance"):
            assert sum(advisor in line for line in role_lines) >= 1, roles_text
        help_lines = [line for line in help_text.splitlines() if line.strip().startswith("/")]
        assert len(help_lines) >= 8, help_text  # one command a line
        html = await asyncio.to_thread(lambda: roles.get_attribute("innerHTML"))
        assert "<br>" in html and "<script" not in html
        await asyncio.to_thread(_shots, browser, "chat-line-breaks")
    finally:
        await sabha.close()


def _meeting_card(b: Browser, timeout: float = 300.0) -> None:
    """Wait for the meeting's end in the chat: a meeting line after the live link that speaks of the minutes
    (the card's link to them, or the minutes themselves)."""
    deadline = time.monotonic() + timeout
    while not any("minutes" in text.lower() for text in b.texts(".msg.meeting .text")[1:]):
        assert time.monotonic() < deadline, f"the meeting did not end in the chat: {b.texts('.msg .text')}"
        time.sleep(0.2)


async def test_a_meeting_links_its_live_page_and_ends_in_a_decision_card(
    tmp_path: Path, browser: Browser  # noqa: F811
) -> None:
    from selenium.webdriver.common.by import By

    sabha, link = await _daemon(tmp_path)
    try:
        url = f"http://127.0.0.1:{sabha.port}/ui/chat/general"
        await asyncio.to_thread(_signed_in, browser, link, url)
        await asyncio.to_thread(_send, browser, "/meeting should we open a Pune office?")
        (live,) = await asyncio.to_thread(browser.wait_for, ".msg.meeting")
        anchors = await asyncio.to_thread(live.find_elements, By.CSS_SELECTOR, "a")
        assert anchors, f"the live page is not a link: {live.text!r}"
        href = await asyncio.to_thread(anchors[0].get_attribute, "href")
        assert href.startswith(f"http://127.0.0.1:{sabha.port}/ui/meetings/"), href  # this origin
        await asyncio.to_thread(_meeting_card, browser)
        await asyncio.to_thread(_shots, browser, "chat-decision-card")
        cards = await asyncio.to_thread(browser.texts, ".msg.meeting .text")
        card = cards[-1]
        assert len(cards) == 2, cards  # the live link, then one card: no separate minutes
        assert "[ ]" not in "".join(cards) and "[x]" not in "".join(cards)
        assert len(card) < 1500, len(card)  # a card, not the minutes
        assert "Recommendation" in card and "Read the minutes" in card, card
        assert "support" in card or "oppose" in card or "conditional" in card, card  # the vote
        assert "confidence" in card.lower() and "action" in card.lower(), card
        minutes = await asyncio.to_thread(browser.driver.find_element, By.LINK_TEXT, "Read the minutes")
        assert (await asyncio.to_thread(minutes.get_attribute, "href")).startswith(href)
        for command in ("/actions", "/predictions"):  # the meeting's follow-through: one item a line
            await asyncio.to_thread(_send, browser, command)
        await asyncio.to_thread(browser.wait_for, ".msg.command", 3)
        actions, predictions = (await asyncio.to_thread(browser.texts, ".msg.command .text"))[-2:]
        assert len(actions.splitlines()) >= 4, actions  # a heading and the 3 items
        assert len(predictions.splitlines()) >= 2, predictions
        await asyncio.to_thread(_shots, browser, "chat-follow-through")
        meeting_id = href.rsplit("/", 1)[-1]
        (live,) = (await asyncio.to_thread(browser.wait_for, ".msg.meeting"))[:1]
        anchor = (await asyncio.to_thread(live.find_elements, By.CSS_SELECTOR, "a"))[0]
        await asyncio.to_thread(browser.size, 1280)
        await asyncio.to_thread(anchor.click)  # the live link opens the meeting's page
        await asyncio.to_thread(browser.wait_for, "main h1")
        assert await asyncio.to_thread(lambda: browser.driver.current_url) == href
        page = await asyncio.to_thread(lambda: browser.driver.page_source)
        assert meeting_id in page and "Pune" in page
    finally:
        await sabha.close()


async def _ask(config: Path, question: str) -> None:
    """The real ``sabha ask`` on ``config``'s board (the owner's conversation with the chair: ``main``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(REPO))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "ask", "--config", str(config), question, cwd=config.parent, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        _, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()


async def test_the_chat_with_the_chair_shows_the_conversation_it_shares_with_the_terminal(
    tmp_path: Path, browser: Browser  # noqa: F811
) -> None:
    sabha, link = await _daemon(tmp_path)
    try:
        await _ask(sabha.config, "should we raise prices in March?")
        await _ask(sabha.config, "and what about the annual plan?")
        url = f"http://127.0.0.1:{sabha.port}/ui/chat/general"
        await asyncio.to_thread(_signed_in, browser, link, url)
        await asyncio.to_thread(browser.wait_for, ".msg.history", 4, 60)
        texts = await asyncio.to_thread(browser.texts, ".msg.history .text")
        whos = await asyncio.to_thread(browser.texts, ".msg.history .who")
        assert "should we raise prices in March?" in texts[0] and "annual plan" in texts[2], texts  # oldest first
        assert "terminal" in whos[0].lower() and "You" in whos[0], whos  # who said it, and where
        assert whos[1] and "You" not in whos[1], whos  # the chair's answer, under the chair's name
        await asyncio.to_thread(_send, browser, "/roles")  # the conversation goes on below it
        await asyncio.to_thread(browser.wait_for, ".msg.command")
        order = await asyncio.to_thread(browser.driver.execute_script,
                                        "return Array.from(document.querySelectorAll('#log > li'))"
                                        ".map(function (li) { return li.className; })")
        assert order[:4] == ["msg history question", "msg history answer"] * 2, order
        looks = await asyncio.to_thread(browser.driver.execute_script, """
const look = css => { const s = getComputedStyle(document.querySelector(css));
                      const text = getComputedStyle(document.querySelector(css + ' .text'));
                      return [s.backgroundColor, s.borderLeftWidth, text.color]; };
return [look('.msg.history.answer'), look('.msg.command')];""")
        assert looks[0] != looks[1], f"a message written elsewhere looks like the chat's own: {looks}"
        await _ask(sabha.config, "one more from the terminal")  # while the page is open: it shows up below
        await asyncio.to_thread(browser.wait_for, ".msg.history", 6, 60)
        texts = await asyncio.to_thread(browser.texts, "#log > li .text")
        assert texts[-2] == "one more from the terminal", texts
        await asyncio.to_thread(_shots, browser, "chat-history")
    finally:
        await sabha.close()
