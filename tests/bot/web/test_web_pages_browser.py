"""Issue 38, the owner's other pages in a real browser (headless chromium through selenium), each at
375 px and 1280 px with screenshots in ``test-artifacts/web/``.

A real daemon in this process on the offline model (:class:`tests.support.browser.WebDaemon`),
signed in with a link from the real ``sabha web link``:

- Conversations read as a person reads them: the advisor's name and emoji, where the talk is
  (terminal, web chat, Telegram, WhatsApp and the person), its last activity as a date and a one-line
  preview; an archived one is an earlier session; messages are labelled by who spoke ("You", the
  person's name, the advisor), never ``root`` / ``assistant``.
- A meeting in a conversation reads as text (its question, its decision, a link to its page), not JSON.
- The Cost page of the offline model says why there is nothing to draw, and draws no empty chart.
- The Track record page lists the predictions with their dates and resolves one (a form with its
  CSRF token): the page then shows it resolved and the score.
- No Markdown syntax shown as text: the used-link page names the command, without backticks.

And, without a browser, the resolve form's guard: its CSRF token, odd numbers, a second press.

Selenium blocks; its calls run in a thread so the daemon (in this process) keeps serving.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aiohttp import ClientSession

from board.decisions.predictions.store import PredictionStore
from board.envelope import Envelope
from tests.support.browser import Browser, WebDaemon, browser  # noqa: F401
from tests.support.web_decisions import hold_meeting, sign_in

WIDTHS = (375, 1280)
WIDER_THAN_PAGE = "return document.documentElement.scrollWidth > window.innerWidth"
ONE_RESOLVED = ["board:", "  meetings:", "    min_resolved_predictions: 1"]


def _shots(b: Browser, name: str) -> None:
    """``name-375`` and ``name-1280``; nothing wider than the screen."""
    for width in WIDTHS:
        b.size(width)
        assert not b.driver.execute_script(WIDER_THAN_PAGE), f"{name} scrolls sideways at {width} px"
        b.shot(f"{name}-{width}")
    b.size(1280)


def _open(b: Browser, url: str) -> str:
    """Load ``url``; the text of its main part."""
    from selenium.webdriver.common.by import By

    b.driver.get(url)
    b.wait_for("main h1")
    return str(b.driver.find_element(By.TAG_NAME, "main").text)


async def _say(d: WebDaemon, text: str, **envelope: Any) -> None:
    await d.board.handle(Envelope(text=text, **envelope))


async def test_conversations_name_the_advisor_the_place_the_time_and_who_spoke(
        tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    b = browser
    async with WebDaemon(tmp_path) as d:
        await _say(d, "An old question about pricing", channel="console", sender="root", is_owner=True)
        await _say(d, "/reset", channel="console", sender="root", is_owner=True)
        await _say(d, "Which market first, Pune or Lisbon?", channel="console", sender="root", is_owner=True)
        await _say(d, "What could go wrong with a Lisbon office?", channel="console", sender="root", is_owner=True,
                   role_hint="critic")
        await _say(d, "Can we afford two offices?", channel="whatsapp", sender="15550001", sender_name="Priya",
                   chat_id="15550001", role_hint="finance")
        await _say(d, "And from the web?", channel="web", sender="owner", is_owner=True, chat_id="general",
                   role_hint="general")
        await _say(d, "Is the topic working?", channel="telegram", sender="42", sender_name="Asha", is_owner=True,
                   chat_id="-1001", thread_id=7, is_group=True, role_hint="strategy")
        await asyncio.to_thread(b.sign_in, await d.link())
        text = await asyncio.to_thread(_open, b, d.base + "/ui/sessions")
        await asyncio.to_thread(_shots, b, "conversations")
        labels = d.board.parts.souls.profiles()
        critic = next(p.label for p in labels if p.role == "critic")
        for internal in ("board:critic", "main (archived)", "board:finance"):
            assert internal not in text, f"{internal!r} on the Conversations page:\n{text}"
        assert critic in text, text  # the advisor's name and emoji
        assert "Terminal" in text and "WhatsApp" in text and "Priya" in text, text  # where, and with whom
        assert "Web chat · Terminal" in text and "Telegram topic" in text, text
        assert "What could go wrong with a Lisbon office?"[:30] in text or "Critic" in text, text
        assert "Earlier session" in text, text  # the archived one
        year = str(d.board.parts.clock.now().year)
        assert year in text, text  # last activity as a date
        rows = await asyncio.to_thread(b.texts, ".conversations li .preview")
        assert rows and all(r.strip() for r in rows), rows  # a one-line preview of each
        # a conversation: "You" and the advisor's name, never root / assistant
        [ref] = [r for r in await d.board.parts.sessions.list() if r.key == "board:critic"]
        await asyncio.to_thread(_open, b, f"{d.base}/ui/sessions/{ref.session_id}")
        await asyncio.to_thread(_shots, b, "conversation")
        who = await asyncio.to_thread(b.texts, ".transcript .meta .who")
        assert who and not {"root", "assistant", "user"} & set(who), who
        assert "You" in who and critic in who, who
        title = await asyncio.to_thread(b.texts, "main h1")
        assert "board:" not in title[0], title
        [wa] = [r for r in await d.board.parts.sessions.list() if r.key.startswith("board:finance:wa-")]
        await asyncio.to_thread(_open, b, f"{d.base}/ui/sessions/{wa.session_id}")
        who = await asyncio.to_thread(b.texts, ".transcript .meta .who")
        assert "Priya" in who, who


async def test_a_meeting_in_a_conversation_reads_as_its_question_decision_and_link(
        tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    b = browser
    async with WebDaemon(tmp_path) as d:
        async with ClientSession() as http:
            meeting_id = await hold_meeting(http, d, await sign_in(http, d), "Should we open a Pune office?")
        await asyncio.to_thread(b.sign_in, await d.link())
        [ref] = [r for r in await d.board.parts.sessions.list() if r.key == "main"]
        await asyncio.to_thread(_open, b, f"{d.base}/ui/sessions/{ref.session_id}")
        [card] = await asyncio.to_thread(b.wait_for, ".transcript .meeting")
        await asyncio.to_thread(_shots, b, "conversation-meeting")
        shown = str(card.text)
        assert "\\n" not in shown and '{"' not in shown and '"meeting_id"' not in shown, shown
        assert "Should we open a Pune office?" in shown, shown
        row = await d.board.parts.room.store.get(meeting_id)
        assert row is not None
        recommendation = str((row.decision or {}).get("recommendation") or "")
        assert recommendation[:40] in shown, (recommendation, shown)
        from selenium.webdriver.common.by import By

        link = card.find_element(By.CSS_SELECTOR, f"a[href$='/ui/meetings/{meeting_id}']")
        await asyncio.to_thread(link.click)
        await asyncio.to_thread(b.wait_for, "#meeting")


async def test_the_cost_page_of_the_offline_model_says_no_spend_yet_without_an_empty_chart(
        tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    b = browser
    async with WebDaemon(tmp_path) as d:
        await _say(d, "Which market first?", channel="console", sender="root", is_owner=True)
        await asyncio.to_thread(b.sign_in, await d.link())
        text = await asyncio.to_thread(_open, b, d.base + "/ui/cost")
        await asyncio.to_thread(_shots, b, "cost-offline")
        assert "No spend yet: the offline model is free." in text, text
        assert "price" in text.lower(), text  # how spend will appear
        assert not await asyncio.to_thread(b.texts, "svg.chart"), "an empty chart is drawn"


async def test_the_track_record_lists_predictions_and_resolves_one_on_the_page(
        tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    b = browser
    async with WebDaemon(tmp_path, extra=ONE_RESOLVED) as d:
        async with ClientSession() as http:
            await hold_meeting(http, d, await sign_in(http, d), "Should we open a Pune office?")
        store = PredictionStore(d.board.parts.db)
        made = await store.query(status="all")
        assert made, "the offline meeting made no prediction"
        await asyncio.to_thread(b.sign_in, await d.link())
        await asyncio.to_thread(_open, b, d.base + "/ui/track")
        items = await asyncio.to_thread(b.wait_for, "#predictions li.prediction", len(made))
        await asyncio.to_thread(_shots, b, "track-open")
        first = made[0]
        assert first.resolve_by in items[0].text, items[0].text  # its due date
        assert not await asyncio.to_thread(b.texts, ".brier .n")  # nothing scored yet
        form = b.driver.find_element(By.CSS_SELECTOR, f"#prediction-{first.id} form")
        assert form.find_element(By.NAME, "csrf").get_attribute("value")
        await asyncio.to_thread(form.find_element(By.CSS_SELECTOR, "button[value=yes]").click)
        await asyncio.to_thread(b.wait_for, f"#prediction-{first.id}[data-outcome=yes]")
        await asyncio.to_thread(_shots, b, "track-resolved")
        resolved = await store.get(first.id)
        assert resolved is not None and resolved.outcome is not None and resolved.outcome.value == "yes"
        assert not b.driver.find_elements(By.CSS_SELECTOR, f"#prediction-{first.id} form")  # no second press
        scores = await asyncio.to_thread(b.texts, f"#track-{first.role} .brier .n")
        assert scores and float(scores[0]) >= 0, scores  # the score figures updated
        note = await asyncio.to_thread(b.texts, "#note")
        assert any("came true" in n for n in note), note


async def test_no_page_shows_markdown_backticks(tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    b = browser
    async with WebDaemon(tmp_path) as d:
        link = await d.link()
        await asyncio.to_thread(b.sign_in, link)
        from selenium.webdriver.common.by import By

        await asyncio.to_thread(b.driver.find_element(By.CSS_SELECTOR, ".logout button").click)
        await asyncio.to_thread(b.wait_for, "main h1")
        await asyncio.to_thread(b.driver.get, link)  # the used link, pressed again
        await asyncio.to_thread(b.driver.find_element(By.ID, "sign-in").click)
        await asyncio.to_thread(b.wait_for, ".problem")
        await asyncio.to_thread(_shots, b, "login-used-link")
        text = str(b.driver.find_element(By.TAG_NAME, "main").text)
        assert "used already" in text, text
        assert "`" not in text, text
        assert await asyncio.to_thread(b.texts, ".problem code") == ["sabha web link"]
        # a page's refusal (signed out, a page asked for) too
        text = await asyncio.to_thread(_open, b, d.base + "/ui/track")
        await asyncio.to_thread(_shots, b, "signed-out")
        assert "`" not in text, text
        # and every page of this part, after a meeting and a talk in Markdown
        await _say(d, "Is `pricing` **really** the issue?", channel="console", sender="root", is_owner=True)
        async with ClientSession() as http:
            await hold_meeting(http, d, await sign_in(http, d), "Should we raise prices by 10%?")
        await asyncio.to_thread(b.sign_in, await d.link())
        refs = await d.board.parts.sessions.list(include_archived=True)
        for path in ("/ui/", "/ui/sessions", "/ui/track", "/ui/cost", "/ui/sessions/nosuch",
                     *(f"/ui/sessions/{r.session_id}" for r in refs)):
            text = await asyncio.to_thread(_open, b, d.base + path)
            for syntax in ("`", "**", "\\n"):
                assert syntax not in text, f"{syntax!r} on {path}:\n{text}"


async def test_resolving_on_the_page_needs_its_csrf_token_and_happens_once(tmp_path: Path) -> None:
    from tests.support.web_decisions import csrf_of

    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = await sign_in(http, d)
        await hold_meeting(http, d, jar, "Should we open a Pune office?")
        store = PredictionStore(d.board.parts.db)
        first = (await store.query(status="all"))[0]
        async with http.get(d.base + "/ui/track", headers=jar) as resp:
            csrf = csrf_of(await resp.text())
        url = f"{d.base}/ui/track/predictions/{first.id}"
        async with http.post(url, data={"outcome": "yes"}, headers=jar, allow_redirects=False) as resp:
            assert resp.status == 403  # no CSRF token: refused, nothing changed
        assert (await store.get(first.id)).is_open  # type: ignore[union-attr]
        for n in ("%C2%B2", "9" * 30, "99999"):
            async with http.post(f"{d.base}/ui/track/predictions/{n}", data={"outcome": "yes", "csrf": csrf},
                                 headers=jar, allow_redirects=False) as resp:
                assert resp.status == 404, (n, resp.status)
        async with http.post(url, data={"outcome": "maybe", "csrf": csrf}, headers=jar) as resp:  # redirected
            assert resp.status == 200 and "Yes, No or Can" in await resp.text()
        async with http.post(url, data={"outcome": "no", "csrf": csrf}, headers=jar, allow_redirects=False) as resp:
            assert resp.status == 303, await resp.text()
        async with http.post(url, data={"outcome": "yes", "csrf": csrf}, headers=jar) as resp:
            assert resp.status == 200 and "already resolved" in await resp.text()  # a second press changes nothing
        row = await store.get(first.id)
        assert row is not None and row.outcome is not None and row.outcome.value == "no"
        assert row.resolved_by == "owner (web)"
        work = await d.board.parts.db.fetchone("SELECT status FROM scheduled_work WHERE key = ?",
                                               (f"resolution:prediction:{first.id}",))
        assert work is not None and work["status"] == "cancelled"  # its resolution request will not go out
