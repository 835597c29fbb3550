"""WhatsApp: a reply sent in several messages is confirmed by Meta's status of its last part only (review of the
delivery work, finding 1). A real ``sabha run`` on the fake Graph API answers a question whose answer is over
4096 characters (two messages); the fake posts part 1 and drops part 2's connection unanswered (nothing posted),
so the row waits for Meta's confirmation. Meta's 'read' status of part 1 then arrives: it must not count as the
reply's, and after ``inbox.confirm_within_s`` the reply goes once more, marked, so part 2 reaches the user.

The same after a SIGKILL: a reply in three messages, Sabha killed once Meta answered part 1 and while part 2's
request is held (Meta posts it after the kill); the restarted Sabha hears Meta's status of part 1 only. After
``inbox.confirm_within_s`` only what was not confirmed goes once more: part 2 marked, part 3 plainly; part 1 never
again (before, the marked resend repeated every part). And killed while part 1's request was on the wire (its
answer lost): Meta's status of part 1 is then what says it arrived, and the marked copy starts at part 2."""

from __future__ import annotations

import signal
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from tests.bot.channels.whatsapp.test_whatsapp_confirm import USERS, HoldingGraphAPI, _post_all, write_config
from tests.bot.channels.whatsapp.test_whatsapp_durability import write_config as durability_config
from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.kill import MARK, Hold, settled, wait_for
from tests.support.whatsapp import APP_SECRET, notification, status, text_notification

TAIL = "omega-tail"  # the last words of the long answer: only its second part carries them


@dataclass
class DroppingGraphAPI(FakeGraphAPI):
    """The fake Graph API that drops the connection of the first message carrying :data:`TAIL`, unanswered and
    not posted (Meta never got it whole)."""

    dropped: int = 0

    async def _messages(self, request: web.Request) -> web.Response:
        body = await request.text()
        if TAIL in body and self.dropped == 0 and MARK.split(":")[0] not in body:
            self.dropped += 1
            if request.transport is not None:
                request.transport.close()
            return web.Response(status=500)
        return await super()._messages(request)


def row_status(db: Path, question: str) -> str | None:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
        for envelope, state in conn.execute("SELECT envelope, status FROM inbound_messages"):
            if question in (envelope or ""):
                return str(state)
    return None


async def test_the_status_of_part_one_does_not_confirm_a_reply_whose_part_two_never_arrived(tmp_path: Path) -> None:
    user = USERS[0]
    async with DroppingGraphAPI() as graph, EchoModel(latency=0.05) as model:
        env = {"WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
        sabha = SabhaProcess(write_config(tmp_path, graph, model), env=env)
        db = tmp_path / "sessions" / "sabha.db"
        try:
            await sabha.start()
            url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
            long_question = "Q700 " + "lorem ipsum dolor " * 300 + TAIL  # one line: echoed whole, > 4096
            await _post_all(url, [text_notification(user, long_question)])
            await wait_for(lambda: graph.dropped == 1 and row_status(db, "Q700") == "unconfirmed",
                           "part 1 posted, part 2 dropped, the reply waiting for Meta's confirmation")
            [part1] = [s for s in graph.sent if "Q700" in s.body]
            assert TAIL not in part1.body
            # Meta reports part 1 read (its callback data echoed): part 2 is still missing
            read = {**status(part1.wamid, "read", user),
                    "biz_opaque_callback_data": part1.payload["biz_opaque_callback_data"]}
            await _post_all(url, [notification(statuses=[read])])
            await wait_for(lambda: row_status(db, "Q700") not in ("replied", "sending", "unconfirmed"),
                           "the long question answered or given up")
            await _post_all(url, [text_notification(user, "Q701 last one")])  # a marker: everything before is out
            await wait_for(lambda: any("Q701" in s.body for s in graph.sent), "the marker answered")
            tails = [s.body for s in graph.sent if TAIL in s.body]
            assert tails, f"part 2 never reached the user (row {row_status(db, 'Q700')}); nobody was told"
            # sent once more, marked (the mark may be a message of its own: the answer is split at paragraphs)
            assert sum(1 for s in graph.sent if MARK.split(":")[0] in s.body) == 1
        finally:
            await sabha.close()


FIRST, SECOND, THIRD = "PARTONE", "PARTTWO", "PARTTHREE"
_FILLER = "lorem ipsum dolor "
#: One line (echoed whole) of about 9,600 characters: three messages, FIRST in the first, SECOND in the middle of
#: the second, THIRD in the last.
LONG_QUESTION = f"Q710 {FIRST} " + _FILLER * 330 + f"{SECOND} " + _FILLER * 200 + THIRD


@dataclass
class PartHoldingGraphAPI(HoldingGraphAPI):
    """The holding fake Graph API that holds only the first message carrying :attr:`needle` (the rest passes)."""

    needle: str = SECOND
    held: int = 0

    async def _messages(self, request: web.Request) -> web.Response:
        payload = await request.json()
        body = str((payload.get("text") or {}).get("body") or "")
        if self.hold is not None and self.needle in body and not self.held:
            self.held += 1
            return await super()._messages(request)
        return await FakeGraphAPI._messages(self, request)


def echoed(graph: FakeGraphAPI, needle: str) -> tuple[list[str], list[str]]:
    """The messages sent carrying ``needle``: (plain, marked as possibly repeated)."""
    bodies = [s.body for s in graph.sent if needle in s.body]
    return [b for b in bodies if MARK.split(":")[0] not in b], [b for b in bodies if MARK.split(":")[0] in b]


async def killed_while_held(tmp_path: Path, graph: PartHoldingGraphAPI, confirmed: str) -> None:
    """A real ``sabha run`` asked :data:`LONG_QUESTION`, SIGKILLed while the part carrying ``graph.needle`` is held
    (Meta posts it after the kill); the restarted Sabha hears Meta's status of the part carrying ``confirmed``
    only, and answers until the question is settled and a marker after it is answered."""
    user = USERS[1]
    async with EchoModel(latency=0.05) as model:
        env = {"WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
        sabha = SabhaProcess(durability_config(tmp_path, graph, model, ["inbox:", "  confirm_within_s: 3"]), env=env)
        db = tmp_path / "sessions" / "sabha.db"
        try:
            await sabha.start()
            graph.hold = Hold()
            await _post_all(f"http://127.0.0.1:{sabha.port}/whatsapp/webhook", [text_notification(user, LONG_QUESTION)])
            await wait_for(lambda: graph.hold is not None and graph.hold.waiting == 1,
                           f"the part carrying {graph.needle} held on the wire")
            await sabha.signal(signal.SIGKILL)
            graph.release(post=True)  # Meta got it whole: it is posted after the kill
            await wait_for(lambda: echoed(graph, graph.needle)[0], f"the part carrying {graph.needle} posted")
            await sabha.start()
            url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
            [part] = [s for s in graph.sent if confirmed in s.body]
            read = {**status(part.wamid, "read", user),  # Meta's status of that part only (no other comes)
                    "biz_opaque_callback_data": part.payload["biz_opaque_callback_data"]}
            await _post_all(url, [notification(statuses=[read])])
            await wait_for(lambda: settled(db, ["Q710"]), "the long question answered or given up")
            await _post_all(url, [text_notification(user, "Q711 last one")])
            await wait_for(lambda: echoed(graph, "Q711")[0], "the marker answered: nothing else is coming")
        finally:
            await sabha.close()


async def test_killed_while_part_two_is_on_the_wire_only_the_parts_not_confirmed_go_again(tmp_path: Path) -> None:
    async with PartHoldingGraphAPI(needle=SECOND) as graph:
        await killed_while_held(tmp_path, graph, confirmed=FIRST)
    firsts, seconds, thirds = echoed(graph, FIRST), echoed(graph, SECOND), echoed(graph, THIRD)
    assert (len(firsts[0]), len(firsts[1])) == (1, 0), f"part 1 (confirmed) was sent again: {len(firsts[1])} marked"
    assert len(seconds[0]) == 1 and len(seconds[1]) <= 1, seconds  # part 2 once, plus one marked copy at most
    assert (len(thirds[0]) + len(thirds[1])) == 1, thirds  # part 3 (never sent before the kill) once


async def test_the_status_of_a_part_whose_answer_was_lost_in_a_kill_keeps_it_from_being_sent_again(
        tmp_path: Path) -> None:
    """Killed while part 1's request was on the wire (Meta posted it; its answer never came back): only Meta's
    status of part 1 says it arrived. The marked copy then starts at part 2 (which never left: once, marked)."""
    async with PartHoldingGraphAPI(needle=FIRST) as graph:
        await killed_while_held(tmp_path, graph, confirmed=FIRST)
    firsts, seconds, thirds = echoed(graph, FIRST), echoed(graph, SECOND), echoed(graph, THIRD)
    assert (len(firsts[0]), len(firsts[1])) == (1, 0), \
        f"part 1 (confirmed by its status) went again: {len(firsts[0])} plain, {len(firsts[1])} marked"
    assert len(seconds[0]) + len(seconds[1]) == 1, seconds  # part 2 once (marked: the copy starts there)
    assert (len(thirds[0]) + len(thirds[1])) == 1, thirds
