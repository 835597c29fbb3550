"""Helpers for the kill-at-any-moment tests: a fake Bot API that can hold a method's requests (so a kill
lands while replies wait in Sabha's send queue, or while their requests are on the wire), a burst from many
private chats, where the stored replies stand, and a count of answers that tells marked copies apart."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.intake.courier import ChannelTexts
from tests.support.daemon import markers
from tests.support.fakes.telegram_api import ApiError, FakeTelegramAPI, JSONDict
from tests.support.telegram import FRIEND, OWNER

#: The line heading an answer sent once more after a restart (the copy is marked as possibly repeated).
MARK = ChannelTexts().possibly_repeated
_ECHO = re.compile(r"ECHO [^\n]*?\b(Q\d{3})\b")


@dataclass
class Hold:
    """Requests of one method wait here until released; ``post`` says whether the fake then carries them out
    (Telegram got them) or drops them (the request never made it whole)."""

    opened: asyncio.Event = field(default_factory=asyncio.Event)
    waiting: int = 0
    post: bool = True
    #: only requests whose ``text`` carries this are held (None: every request of the method)
    containing: str | None = None


class HoldingTelegramAPI(FakeTelegramAPI):
    """The fake Bot API, with :meth:`hold` / :meth:`release` per method. A held request gets its answer's
    headers at once and then a space (JSON white space) every :data:`TRICKLE_S` until it is released, so the
    client's read timeout never ends it: its connection stays taken however long the test holds it."""

    TRICKLE_S = 1.0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.holds: dict[str, Hold] = {}

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["method"].lower()
        hold = self.holds.get(name)
        if hold is None:
            return await super()._handle(request)
        params = await self._read_params(request)  # the body is read once and kept: the fake reads it again
        if hold.containing is not None and hold.containing not in str(params.get("text") or ""):
            return await super()._handle(request)
        self.calls.append((request.match_info["method"], params))
        hold.waiting += 1
        self._pulse()
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        try:
            await response.prepare(request)
            while not hold.opened.is_set():
                await response.write(b" ")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(hold.opened.wait(), self.TRICKLE_S)
        except ConnectionError:  # the client died meanwhile (SIGKILL): whether Telegram got it is decided at release
            await hold.opened.wait()
        finally:
            hold.waiting -= 1
        if not hold.post:  # dropped: the connection closes without an answer (a live client cannot tell)
            if request.transport is not None:
                request.transport.close()
            self._pulse()
            return response
        try:
            body: JSONDict = {"ok": True, "result": await self._methods[name](params)}
        except ApiError as err:
            body = err.envelope()
        with contextlib.suppress(ConnectionError):
            await response.write(json.dumps(body).encode())
            await response.write_eof()
        self._pulse()
        return response

    def hold(self, method: str, *, containing: str | None = None) -> Hold:
        """From now on requests of ``method`` wait (counted in the returned hold's ``waiting``); with ``containing``
        only those whose text carries it (the others pass)."""
        return self.holds.setdefault(method.lower(), Hold(containing=containing))

    def release(self, method: str, *, post: bool = True) -> None:
        """Let the held requests of ``method`` go: carried out (``post``) or dropped; later ones pass."""
        hold = self.holds.pop(method.lower(), None)
        if hold is not None:
            hold.post = post
            hold.opened.set()

    def waiting(self, method: str) -> int:
        """Requests of ``method`` held right now."""
        hold = self.holds.get(method.lower())
        return 0 if hold is None else hold.waiting


def private_chats(count: int, first_user: int = 2001) -> list[int]:
    """``count`` private chats (a chat's id is its user's)."""
    return list(range(first_user, first_user + count))


def allow_users(config: Path, users: list[int]) -> None:
    """Let ``users`` talk to the board too (the config :func:`tests.support.daemon.write_config` wrote)."""
    text = config.read_text(encoding="utf-8")
    old = f"allowed_user_ids: [{OWNER}, {FRIEND}]"
    assert old in text
    config.write_text(text.replace(old, f"allowed_user_ids: [{', '.join(map(str, [OWNER, FRIEND, *users]))}]"),
                      encoding="utf-8")


def typing_at_once(config: Path) -> None:
    """Typing shown as each turn starts (``telegram.typing_after_s: 0``; by default only once an answer takes a
    second): the "send queue" moment holds the typing requests to fill the connection pool with them."""
    text = config.read_text(encoding="utf-8")
    found = re.search(r"^  mode: (polling|webhook)$", text, flags=re.MULTILINE)
    assert found is not None, text
    config.write_text(text[:found.end()] + "\n  typing_after_s: 0" + text[found.end():], encoding="utf-8")


def chat_updates(telegram: FakeTelegramAPI, chats: list[int], count: int, first: int) -> list[JSONDict]:
    """``count`` questions ``Q<first>``... spread round robin over the private ``chats``."""
    return [telegram.build_text_update(chats[i % len(chats)], chats[i % len(chats)], f"Q{i:03d} what do you think?",
                                       is_forum=False, chat_type="private") for i in range(first, first + count)]


@dataclass(frozen=True)
class Copies:
    """How often one question was answered: copies as sent first, and copies marked as possibly repeated."""

    plain: int = 0
    marked: int = 0


def copies(telegram: FakeTelegramAPI) -> dict[str, Copies]:
    """Per question marker, the answers Telegram received (plain and marked)."""
    plain: Counter[str] = Counter()
    marked: Counter[str] = Counter()
    for sent in telegram.sent_messages:
        for marker in _ECHO.findall(sent.text):
            (marked if MARK.split(":")[0] in sent.text else plain)[marker] += 1
    return {m: Copies(plain[m], marked[m]) for m in set(plain) | set(marked)}


def answered_count(telegram: FakeTelegramAPI, wanted: list[str]) -> int:
    """How many of ``wanted`` have at least one answer."""
    seen = copies(telegram)
    return sum(1 for m in wanted if m in seen)


async def wait_for(predicate: Any, what: str, timeout: float = 90.0) -> None:
    """Wait until ``predicate()`` holds (checked every 20 ms)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


def stored_unsent(db: Path, telegram: FakeTelegramAPI, wanted: list[str]) -> int:
    """Replies the daemon has stored (``replied`` or ``sending``) for questions of ``wanted`` that Telegram has
    not received: replies waiting in Sabha's send queue."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
        rows = conn.execute("SELECT envelope FROM inbound_messages WHERE status IN ('replied', 'sending')").fetchall()
    seen = copies(telegram)
    waiting = 0
    for (envelope,) in rows:
        found = re.search(r"\b(Q\d{3})\b", envelope or "")
        if found and found.group(1) in wanted and found.group(1) not in seen:
            waiting += 1
    return waiting


def settled(db: Path, wanted: list[str]) -> bool:
    """Every question of ``wanted`` is stored and its row final (answered, or given up): nothing more will be
    sent for it."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
        rows = conn.execute("SELECT envelope, status FROM inbound_messages").fetchall()
    waiting = ("received", "replied", "sending", "unconfirmed")
    final = {found.group(1): status not in waiting for envelope, status in rows
             if (found := re.search(r"\b(Q\d{3})\b", envelope or "")) and found.group(1) in wanted}
    return len(final) == len(wanted) and all(final.values())


@dataclass(frozen=True)
class Verdict:
    """A burst, counted at the fake: questions never answered, answered twice without a mark, answers sent as
    marked copies only, and second copies (a plain one and a marked one)."""

    lost: list[str]
    unmarked_twice: list[str]
    marked_only: int
    marked_second: int


def verdict(telegram: FakeTelegramAPI, count: int, first: int) -> Verdict:
    """How the burst of ``count`` questions from ``first`` was answered."""
    seen = copies(telegram)
    mine = [seen.get(m, Copies()) for m in markers(count, first)]
    names = markers(count, first)
    return Verdict(lost=[m for m, c in zip(names, mine, strict=True) if c.plain + c.marked == 0],
                   unmarked_twice=[m for m, c in zip(names, mine, strict=True) if c.plain > 1],
                   marked_only=sum(1 for c in mine if c.marked and not c.plain),
                   marked_second=sum(1 for c in mine if c.marked and c.plain))
