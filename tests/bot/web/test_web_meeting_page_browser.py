"""The meeting page as a person reads it (issue 38), in a real browser (headless chromium, selenium).

A real daemon in this process on the offline model, with two members scripted on top of it: the Finance
member speaks without ever giving a stance (as a model may), the Critic opposes and logs a disagreement.
Sign in with a link from the real ``sabha web link``, start a meeting from the New meeting form and stay
on its live page. What is checked is what a person sees:

- on a phone (375 x 667) the debate comes first: the first statement is on the first screen, the
  scoreboard and stances after it (live, and once decided);
- severity and strength on the board's own scale (the ``log_disagreement`` tool's 1 to 5);
- a member who spoke without a stance reads as spoken ("no clear stance"), not "has not spoken yet";
- each confidence bar is drawn in its stance's colour (pixels of the bar against the stance's word),
  and names its stance, so colour is not the only cue;
- action items show their real due date in ``/actions``' words, not the date as the model typed it;
- Ratify / Veto / Revisit are one row of real buttons of equal size; Veto asks for its reason in a
  labelled field with a confirm, and vetoes.

Screenshots: ``test-artifacts/web/meeting-page-*`` (375 and 1280 px); ``meeting-page-1280.png`` is the
manual's ``docs/web-meeting.png``.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from board.decisions.ratify import Verdict
from board.room.meeting.events import MeetingEvent
from board.room.meeting.scoreboard import CONSENSUS_SPEC, DISAGREEMENT_SPEC
from board.room.record import due_label
from tests.support.browser import ARTIFACTS, Browser, WebDaemon, browser  # noqa: F401

SILENT, CRITIC = "finance", "critic"
STANCE_LINE = re.compile(r"(?im)^[ \t*_>-]*STANCE[*_]*\s*:.*$")
OPPOSE = 'STANCE: {"position": "oppose", "confidence": 0.7, "assumption": "a pilot this small proves nothing"}'
DISAGREE = ('DISAGREE: {"target_participant_name": "research", "topic": "the size of the pilot", '
            '"reasoning": "too small to tell us anything", "severity": 4}')
PHONE = (375, 667)
WIDER_THAN_PAGE = "return document.documentElement.scrollWidth > window.innerWidth"


class Scripted:
    """The offline model, but Finance never gives a stance and the Critic opposes with a disagreement."""

    name = "offline"

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def complete(self, request: Any) -> Any:
        answer = await self.inner.complete(request)
        if request.metadata.get("purpose") != "meeting":
            return answer
        schema = request.metadata.get("response_schema")
        asks_stance = isinstance(schema, dict) and "position" in schema.get("properties", {})
        role = request.persona.role
        if role == SILENT:
            text = "I would rather not put a number on it." if asks_stance else STANCE_LINE.sub("", answer.text)
            return replace(answer, text=text.strip())
        if role == CRITIC and not asks_stance and STANCE_LINE.search(answer.text):
            return replace(answer, text=f"{STANCE_LINE.sub('', answer.text).strip()}\n{DISAGREE}\n{OPPOSE}")
        return answer


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


def _ended(b: Browser, timeout: float = 60.0) -> None:
    b.wait_for("#region-phase [data-ended=true]", 1, 120)
    deadline = time.monotonic() + timeout  # bounded as Browser.wait_for is: fail with what it shows, never hang
    while (status := b.texts("#live-status")) != ["ended"]:
        if time.monotonic() > deadline:
            raise AssertionError(f"the live status never read 'ended' in {timeout} s (it reads {status!r})")
        time.sleep(0.05)


POSITIONS = """window.scrollTo(0, 0);
const top = css => { const e = document.querySelector(css); return e ? e.getBoundingClientRect().top : null; };
return {statement: top('#statements > li'), scoreboard: top('#h-score'), stances: top('table.stances'),
        screen: window.innerHeight};"""


def _phone(b: Browser) -> None:
    """A phone's viewport: 375 x 667 CSS pixels inside the window."""
    b.size(*PHONE)
    inner = int(b.driver.execute_script("return window.innerHeight"))
    if inner != PHONE[1]:
        outer = b.driver.get_window_size()
        b.driver.set_window_size(outer["width"], outer["height"] + PHONE[1] - inner)


def _debate_first(b: Browser, name: str) -> None:
    """At 375 x 667: the first statement on the first screen, the scoreboard and stances after it."""
    _phone(b)
    assert not b.driver.execute_script(WIDER_THAN_PAGE), f"{name} scrolls sideways on a phone"
    at = b.driver.execute_script(POSITIONS)
    b.driver.save_screenshot(str(ARTIFACTS / f"{name}-375-first-screen.png"))  # what the phone shows first
    b.shot(f"{name}-375")
    assert at["statement"] is not None and at["statement"] + 60 <= at["screen"], \
        f"the first statement is below the first screen on a phone: {at}"
    assert at["scoreboard"] > at["statement"] and at["stances"] > at["statement"], f"the tallies come first: {at}"
    assert not b.driver.execute_script("const a = document.querySelector('details.agenda'); return a && a.open"), \
        "the agenda is open on a phone"
    b.size(1280)
    b.shot(f"{name}-1280")


def _desktop(b: Browser, meeting_id: str) -> None:
    """The decided meeting as a desktop opens it (docs/web-meeting.png is this picture)."""
    b.size(1280)
    b.driver.refresh()
    b.wait_for(f"#ruling-{meeting_id}")
    agenda = b.driver.execute_script("const a = document.querySelector('details.agenda'); return a && a.open")
    assert agenda is not False, "on a wide screen the agenda opens (it comes folded, for a phone)"
    b.shot("meeting-page-1280")


def _scale(b: Browser) -> None:
    top = DISAGREEMENT_SPEC.parameters["properties"]["severity"]["maximum"]
    assert top == CONSENSUS_SPEC.parameters["properties"]["strength"]["maximum"]
    weights = b.texts("#region-scoreboard .score-items small")
    assert weights, "the Critic's disagreement is on the scoreboard"
    for said in weights:
        assert re.fullmatch(rf"\((severity|strength) [1-{top}]/{top}\)", said), f"{said!r}: the scale is 1-{top}"


def _silent_member(b: Browser) -> None:
    said = b.texts(f"#stance-{SILENT}")[0]
    assert "has not spoken yet" not in said, f"{SILENT} spoke (without a stance) but the table says: {said!r}"
    assert "no clear stance" in said, said


#: The most common clearly coloured pixel of a picture (grey, white and black left out), as "r,g,b".
PIXELS = """const [data, done] = arguments;
const img = new Image();
img.onload = () => {
  const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
  const g = c.getContext('2d'); g.drawImage(img, 0, 0);
  const px = g.getImageData(0, 0, c.width, c.height).data; const counts = {};
  for (let i = 0; i < px.length; i += 4) {
    const r = px[i], gr = px[i + 1], bl = px[i + 2];
    if (Math.max(r, gr, bl) - Math.min(r, gr, bl) < 60) continue;
    const k = r + ',' + gr + ',' + bl; counts[k] = (counts[k] || 0) + 1;
  }
  const best = Object.entries(counts).sort((a, b) => b[1] - a[1])[0];
  done(best ? best[0] : null);
};
img.onerror = () => done('unreadable');
img.src = 'data:image/png;base64,' + data;"""


def _rgb(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text)[:3])


def _bars(b: Browser) -> None:
    """Each stance's confidence bar is drawn in that stance's colour and names the stance."""
    from selenium.webdriver.common.by import By

    seen, names = set(), []
    for row in b.driver.find_elements(By.CSS_SELECTOR, "table.stances tbody tr"):
        labels = row.find_elements(By.CSS_SELECTOR, ".stance")
        if not labels or not row.find_elements(By.CSS_SELECTOR, "meter, .bar"):
            continue  # absent, silent, or spoke without a stance: no bar
        position = labels[0].text.strip()
        word = _rgb(str(b.driver.execute_script("return getComputedStyle(arguments[0]).color", labels[0])))
        bar = row.find_element(By.CSS_SELECTOR, "meter, .bar")
        drawn = b.driver.execute_async_script(PIXELS, bar.screenshot_as_base64)
        assert drawn and drawn != "unreadable", f"no colour in the bar of {row.text!r}"
        assert max(abs(x - y) for x, y in zip(_rgb(drawn), word, strict=True)) < 40, \
            f"the {position} bar is drawn in rgb({drawn}), its stance word in rgb{word}"
        names.append((position, " ".join(filter(None, (bar.get_attribute("aria-label"), bar.get_attribute("title"))))))
        seen.add(position)
    for position, name in names:
        assert position in name, f"the bar does not say its stance ({position}): {name!r}"
    assert {"support", "oppose"} <= seen, seen


def _buttons(b: Browser, meeting_id: str) -> list[dict[str, Any]]:
    return list(b.driver.execute_script("""
const row = document.querySelector('#ruling-' + arguments[0] + ' .rule-forms');
return [...row.querySelectorAll('button, summary')].filter(e => e.offsetParent !== null && e.getClientRects().length)
  .map(e => { const r = e.getBoundingClientRect();
              return {tag: e.tagName, text: e.textContent.trim(), top: Math.round(r.top),
                      height: Math.round(r.height)}; });
""", meeting_id))


def _one_row(b: Browser, meeting_id: str) -> None:
    """Ratify, Veto and Revisit: three buttons side by side, the same height."""
    for width in (375, 1280):
        b.size(width)
        shown = _buttons(b, meeting_id)
        words = [c["text"].rstrip("…. ") for c in shown]
        assert words == ["Ratify", "Veto", "Revisit"], shown
        assert [c["tag"] for c in shown] == ["BUTTON"] * 3, f"at {width} px: {shown}"
        assert len({c["top"] for c in shown}) == 1 and len({c["height"] for c in shown}) == 1, f"at {width}: {shown}"
    b.size(1280)


def _veto_step(b: Browser, meeting_id: str, reason: str) -> None:
    """Veto reveals a labelled reason and a confirm; confirming vetoes."""
    from selenium.webdriver.common.by import By

    _phone(b)
    ruling = b.driver.find_element(By.ID, f"ruling-{meeting_id}")
    [veto] = [e for e in ruling.find_elements(By.TAG_NAME, "button") if e.text.startswith("Veto") and e.is_displayed()]
    veto.click()
    field = b.wait_for(f"#veto-{meeting_id}")[0]
    deadline = time.monotonic() + 10
    while not field.is_displayed():
        assert time.monotonic() < deadline, "pressing Veto shows no reason field"
        time.sleep(0.05)
    label = b.driver.find_element(By.CSS_SELECTOR, f"label[for=veto-{meeting_id}]")
    assert label.is_displayed() and "reason" in label.text.lower(), label.text
    b.driver.save_screenshot(str(ARTIFACTS / "meeting-page-veto-step-375.png"))  # the screen, as the phone shows it
    field.send_keys(reason)
    confirm = [e for e in b.driver.find_elements(By.CSS_SELECTOR, f"form[action$='/{meeting_id}/veto'] button")
               if e.is_displayed() and e.get_attribute("type") != "button"]
    assert len(confirm) == 1, [e.text for e in confirm]
    confirm[0].click()
    b.wait_for(f"#ruling-{meeting_id}[data-verdict=vetoed]", 1, 30)
    assert reason in b.texts(f"#ruling-{meeting_id} .verdict")[0]
    b.size(1280)


async def _due_dates(b: Browser, d: WebDaemon, meeting_id: str) -> None:
    rows = await d.board.parts.room.store.actions(meeting_id=meeting_id)
    assert rows and all(r.due_text and r.due_at for r in rows), rows  # the offline chair dates its items
    now, zone = d.board.parts.clock.now(), d.board.parts.reminders.zone
    shown = await asyncio.to_thread(b.texts, "#region-decision .decision ol li")
    assert len(shown) >= len(rows), shown
    for row, said in zip(rows, shown, strict=False):
        assert row.task in said, (row, said)
        assert due_label(row, now, zone) in said, f"{said!r}: not the date /actions gives ({due_label(row, now, zone)})"
        assert f"due {row.due_text}" not in said, said


async def _checked(problems: list[str], check: Any, *args: Any) -> None:
    """Run one check; its failure is noted and the others still run (every point is reported at once)."""
    try:
        if asyncio.iscoroutinefunction(check):
            await check(*args)
        else:
            await asyncio.to_thread(check, *args)
    except Exception as failed:  # noqa: BLE001 - a missing element is a failed check too
        problems.append(f"{check.__name__}: {str(failed).splitlines()[0] if str(failed) else 'failed'}")


async def test_the_meeting_page_reads_well_on_a_phone_and_a_desktop(tmp_path: Path,
                                                                     browser: Browser) -> None:  # noqa: F811
    b = browser
    problems: list[str] = []
    async with WebDaemon(tmp_path) as d:
        assert d.model is not None
        d.model.inner = Scripted(d.model.inner)
        seen: Counter[str] = Counter()

        async def hold_halfway(event: MeetingEvent) -> None:
            """Hold the model once two statements are out: the live page is checked mid-meeting."""
            seen[str(event.kind)] += 1
            if seen["agent_spoke"] >= 2 and not seen["held"]:
                seen["held"] += 1
                assert d.model is not None
                d.model.hold()

        d.board.parts.room.subscribe(hold_halfway)
        await asyncio.to_thread(b.sign_in, await d.link())
        meeting_id = await asyncio.to_thread(_start_meeting, b, d.base, "Should we open a second office in Pune?")
        await asyncio.to_thread(b.wait_for, "#statements > li", 2)
        await _checked(problems, _debate_first, b, "meeting-page-live")
        d.model.release()
        await asyncio.to_thread(_ended, b)
        # what the live stream drew, then the page drawn again by the server
        for drawn in ("streamed", "reloaded"):
            await _checked(problems, _scale, b)
            await _checked(problems, _silent_member, b)
            await _checked(problems, _bars, b)
            await _checked(problems, _due_dates, b, d, meeting_id)
            await _checked(problems, _one_row, b, meeting_id)
            if drawn == "streamed":
                await asyncio.to_thread(b.driver.refresh)
                await asyncio.to_thread(b.wait_for, f"#ruling-{meeting_id}")
        await _checked(problems, _debate_first, b, "meeting-page-decided")
        await asyncio.to_thread(_desktop, b, meeting_id)
        await _checked(problems, _veto_step, b, meeting_id, "we cannot staff it this year")
        await asyncio.to_thread(b.size, 1280)
        await asyncio.to_thread(b.shot, "meeting-page-vetoed-1280")
        assert not problems, "\n".join(problems)
        record = (await d.board.parts.decisions.find(meeting_id)).record
        assert record is not None and record.verdict is Verdict.VETOED and record.ruled_by == "web:owner"
        assert record.reason == "we cannot staff it this year"


NEWEST = """const all = document.querySelectorAll('#statements > li'); const last = all[all.length - 1];
const r = last.getBoundingClientRect(); const pill = document.getElementById('new-below');
return {who: last.querySelector('.who').textContent, top: r.top, bottom: r.bottom, screen: window.innerHeight,
        pill: pill && !pill.hidden && pill.getClientRects().length ? pill.textContent : null};"""


def _newest(b: Browser) -> dict[str, Any]:
    return dict(b.driver.execute_script(NEWEST))


async def test_on_a_phone_the_newest_statement_is_one_tap_away(tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    """Live on a phone, statements arriving below the screen bring up a "New: <who>" button that takes you to
    the newest (as a chat's "new messages" does), and goes once it is seen."""
    b = browser
    async with WebDaemon(tmp_path) as d:
        assert d.model is not None
        await asyncio.to_thread(b.sign_in, await d.link())
        await asyncio.to_thread(_phone, b)
        d.model.hold()  # the page is open, at the top, before anyone speaks
        await asyncio.to_thread(_start_meeting, b, d.base, "Should we sponsor the local meetup?")
        d.model.release()
        await asyncio.to_thread(_ended, b)
        at = await asyncio.to_thread(_newest, b)
        assert at["top"] > at["screen"], f"the newest statement is on the first screen already: {at}"
        assert at["pill"] and at["who"] in at["pill"], f"nothing says a statement came below the screen: {at}"
        await asyncio.to_thread(b.driver.save_screenshot, str(ARTIFACTS / "meeting-page-new-below-375.png"))
        await asyncio.to_thread(b.driver.find_element("css selector", "#new-below").click)
        deadline = time.monotonic() + 10
        # -1: scrolling lands on sub-pixels
        while not (-1 < (at := await asyncio.to_thread(_newest, b))["top"] < at["screen"]):
            assert time.monotonic() < deadline, f"the button did not bring the newest statement into view: {at}"
            await asyncio.sleep(0.05)
        assert at["pill"] is None, at
        await asyncio.to_thread(b.driver.save_screenshot, str(ARTIFACTS / "meeting-page-newest-375.png"))
        await asyncio.to_thread(b.size, 1280)
