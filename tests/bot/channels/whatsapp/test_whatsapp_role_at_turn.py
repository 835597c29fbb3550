"""WhatsApp's sticky role on a real ``sabha run`` (issue 44, ack48): which role answers a message is decided as its
turn begins, in its conversation's order, not while Meta waits for the webhook's acknowledgement; and it is the same
role whenever the turn comes: messages acknowledged while an earlier turn of the conversation ran, then a SIGKILL and
a restart, are each answered by the role they would have had, answered at once."""

from __future__ import annotations

import re
import signal
import sqlite3
from pathlib import Path

import pytest
from aiohttp import ClientSession, ClientTimeout

from tests.bot.channels.whatsapp.test_whatsapp_durability import USERS, write_config
from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, post, text_notification

pytestmark = pytest.mark.xdist_group("bursts")

USER = USERS[0]
#: What the user writes, in order, and the role that answers each (a ``/role`` alone is answered by the command: its
#: line says whom they talk to now). ``@finance`` and ``strategy:`` address a role for that message and stick to it.
SAID = [("Q1 hello", "general"), ("@finance Q2 what is our burn?", "finance"), ("Q3 and next quarter?", "finance"),
        ("/general", None), ("Q4 hello chair", "general"), ("strategy: Q5 where next?", "strategy"),
        ("Q6 and then?", "strategy")]
_LABEL = re.compile(r"^\*\S+ (?P<name>\w+)\*\n")
_QUESTION = re.compile(r"ECHO [^\n]*?\b(Q\d)\b")


def _roles_answering(graph: FakeGraphAPI) -> dict[str, str]:
    """Question marker -> the role whose label heads its answer."""
    found: dict[str, str] = {}
    for sent in graph.sent:
        label, question = _LABEL.match(sent.body), _QUESTION.search(sent.body)
        if label and question:
            found[question.group(1)] = label["name"].lower()
    return found


def _sticky_rows(root: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(root / "sessions" / "sabha.db") as db:
        return [(str(r[0]), str(r[1])) for r in db.execute("SELECT user_key, role FROM whatsapp_users")]


async def test_roles_are_decided_at_each_turn_in_order_not_in_the_acknowledgement_and_survive_a_kill(
        tmp_path: Path, fake_graph: FakeGraphAPI, echo_model: EchoModel) -> None:
    echo_model.latency = 0.0
    echo_model.hold()  # the first turn waits at the model: the rest of the conversation queues behind it
    env = {"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
    sabha = SabhaProcess(write_config(tmp_path, fake_graph, echo_model), env=env)
    try:
        await sabha.start()
        async with ClientSession(timeout=ClientTimeout(total=30)) as http:
            url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
            assert (await post(http, url, text_notification(USER, SAID[0][0])))[0] == 200
            await eventually(lambda: echo_model.in_flight == 1, "the first turn at the model")
            for text, _ in SAID[1:]:
                assert (await post(http, url, text_notification(USER, text)))[0] == 200
            # Acknowledged, stored, not yet answered: no role was decided for them while Meta waited.
            assert _sticky_rows(tmp_path) == [], "a role was decided inside the acknowledgement"
            await sabha.signal(signal.SIGKILL)
        echo_model.release()
        await sabha.start()  # what was stored is answered after the restart, in order
        await eventually(lambda: len(fake_graph.sent) >= len(SAID), "every message answered", timeout=60)
    finally:
        await sabha.close()
    answered = _roles_answering(fake_graph)
    expected = {re.search(r"Q\d", text).group(0): role for text, role in SAID if role}  # type: ignore[union-attr]
    assert answered == expected, [s.body[:60] for s in fake_graph.sent]
    assert sum("talking to" in s.body for s in fake_graph.sent) == 1  # "/general": the command's own line
    assert _sticky_rows(tmp_path) == [(USER, "strategy")]  # stored: the next message after a restart keeps it
