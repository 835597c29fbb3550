"""WhatsApp: a reply that may have arrived is confirmed by Meta's status webhook, else sent once more, marked
(issue: item 1). A real ``sabha run`` on the fake Graph API gets questions from 8 users; the fake holds the
reply sends (their requests written, unanswered) and Sabha is SIGKILLed. Then either the fake posts them and,
as Meta does, a ``statuses[]`` webhook carrying each message's ``biz_opaque_callback_data`` (the reply's key)
reaches the restarted Sabha, which must not send them again; or the fake drops them and no status ever comes,
and after ``inbox.confirm_within_s`` Sabha must send them once more, marked as possibly repeated."""

from __future__ import annotations

import asyncio
import re
import signal
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession, ClientTimeout, web

from tests.bot.channels.whatsapp.test_whatsapp_durability import write_config as durability_config
from tests.support.daemon import SabhaProcess, markers
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.kill import MARK, Hold, settled, wait_for
from tests.support.whatsapp import APP_SECRET, notification, post, status, text_notification

pytestmark = pytest.mark.xdist_group("bursts")

USERS = [f"1555000{n:04d}" for n in range(1, 9)]
BURST = 24
CONFIRM_S = 12  # long enough for the statuses, posted right after the restart, on a loaded machine
_ECHO = re.compile(r"ECHO [^\n]*?\b(Q\d{3})\b")
_carried_on: set[asyncio.Future[web.Response]] = set()


@dataclass
class HoldingGraphAPI(FakeGraphAPI):
    """The fake Graph API whose message sends (not read receipts) can be held, then posted or dropped."""

    hold: Hold | None = None

    async def _messages(self, request: web.Request) -> web.Response:
        hold = self.hold
        payload = await request.json()
        if hold is None or payload.get("status") == "read":
            return await super()._messages(request)
        # shielded: the fake's server cancels a handler whose client went away (SIGKILL); Meta would go on
        task = asyncio.ensure_future(self._held(request, hold))
        _carried_on.add(task)
        task.add_done_callback(_carried_on.discard)
        return await asyncio.shield(task)

    async def _held(self, request: web.Request, hold: Hold) -> web.Response:
        hold.waiting += 1
        try:
            await hold.opened.wait()
        finally:
            hold.waiting -= 1
        if not hold.post:  # Meta never got it whole: the connection closes unanswered
            if request.transport is not None:
                request.transport.close()
            return web.Response(status=500)
        return await FakeGraphAPI._messages(self, request)

    def release(self, *, post: bool) -> None:
        hold, self.hold = self.hold, None
        if hold is not None:
            hold.post = post
            hold.opened.set()


@pytest.fixture
async def graph() -> AsyncIterator[HoldingGraphAPI]:
    async with HoldingGraphAPI() as server:
        yield server


def write_config(root: Path, graph: FakeGraphAPI, model: EchoModel) -> Path:
    """test_whatsapp_durability's WhatsApp-only config, confirmations due after :data:`CONFIRM_S`."""
    return durability_config(root, graph, model, ["inbox:", f"  confirm_within_s: {CONFIRM_S}"])


def copies(graph: FakeGraphAPI) -> tuple[Counter[str], Counter[str]]:
    """(plain, marked) answers per question."""
    plain: Counter[str] = Counter()
    marked: Counter[str] = Counter()
    for sent in graph.sent:
        for m in _ECHO.findall(sent.body):
            (marked if MARK.split(":")[0] in sent.body else plain)[m] += 1
    return plain, marked


async def _post_all(url: str, bodies: list[dict[str, Any]]) -> None:
    async with ClientSession(timeout=ClientTimeout(total=30)) as http:
        for body in bodies:
            code, _ = await post(http, url, body)
            assert code == 200


async def test_a_reply_that_may_have_arrived_is_confirmed_by_its_status_or_sent_once_more_marked(
        tmp_path: Path, graph: HoldingGraphAPI) -> None:
    env = {"WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
    report = []
    async with EchoModel(latency=0.2) as model:
        sabha = SabhaProcess(write_config(tmp_path, graph, model), env=env)
        db = tmp_path / "sessions" / "sabha.db"
        try:
            await sabha.start()
            for round_, posted in enumerate((True, False)):
                first = round_ * 100
                wanted = markers(BURST, first)
                graph.hold = Hold()
                url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
                await _post_all(url, [text_notification(USERS[i % len(USERS)], f"Q{i:03d} what do you think?")
                                      for i in range(first, first + BURST)])
                await wait_for(lambda: graph.hold is not None and graph.hold.waiting >= 3, "3 replies on the wire")
                await sabha.signal(signal.SIGKILL)
                held = graph.hold.waiting if graph.hold is not None else 0  # the requests that reached Meta whole
                graph.release(post=posted)
                await sabha.start()
                if posted:  # Meta tells the restarted Sabha what it sent (its callback data echoed)
                    statuses = [{**status(s.wamid, "sent", s.user),
                                 "biz_opaque_callback_data": s.payload["biz_opaque_callback_data"]}
                                for s in graph.sent if "biz_opaque_callback_data" in s.payload]
                    assert statuses, "the replies were sent without biz_opaque_callback_data"
                    await _post_all(f"http://127.0.0.1:{sabha.port}/whatsapp/webhook",
                                    [notification(statuses=statuses)])
                await wait_for(lambda w=wanted: settled(db, w), "every question answered or given up")  # type: ignore[misc]
                closing = [text_notification(u, f"Q{900 + round_ * 10 + n:03d} last one") for n, u in enumerate(USERS)]
                await _post_all(f"http://127.0.0.1:{sabha.port}/whatsapp/webhook", closing)
                await wait_for(lambda r=round_: all(copies(graph)[0][f"Q{900 + r * 10 + n:03d}"]  # type: ignore[misc]
                                                    for n in range(len(USERS))), "the closing questions answered")
                plain, marked = copies(graph)
                lost = [m for m in wanted if not plain[m] and not marked[m]]
                twice = [m for m in wanted if plain[m] + marked[m] > 1]
                confirmed = sum(1 for line in sabha.lines if "was confirmed by the service" in line)
                report.append(f"  {'posted' if posted else 'dropped':>8}  {len(lost):>4}  {len(twice):>5}  "
                              f"{sum(marked[m] for m in wanted):>6}  {confirmed:>9}")
                assert (lost, twice) == ([], []), (lost, twice)
                if posted:
                    # every reply that reached Meta is confirmed by its status and never sent again (no twice above);
                    # a reply whose request had started to leave but never reached the fake gets no status, so it is
                    # sent once more, marked: the window the README names (seen once on CI: 4 confirmed, 1 marked)
                    assert confirmed >= held >= 3, (confirmed, held)
                    assert not any(marked[m] and plain[m] for m in wanted)
                else:
                    assert sum(marked[m] for m in wanted) >= 3
                await asyncio.sleep(0)
        finally:
            await sabha.close()
            print("\nwhatsapp, SIGKILL with replies on the wire, restart (confirm_within_s "
                  f"{CONFIRM_S}):\n    sends  lost  twice  marked  confirmed")
            print("\n".join(report))
