"""One WhatsApp person is one identity (issue 22, items 3 and 4), on a real ``sabha run`` with the
fake Graph API: a person allowed by phone number who later writes with only their business-scoped
user id (BSUID) is admitted and continues the same conversation; Meta's number and user id change
webhooks keep their history and access (``sabha status`` tells the owner when a listed number
changed); and a state db from before the fix, holding the same person's two split conversations,
is merged on upgrade without losing either transcript.

The model is a fake that recalls: its answer names every ``FACT-<WORD>`` it saw earlier in the
conversation's history, so what a person sees shows which conversation answered them.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession, ClientTimeout, web

from board.app import Board, BoardSettings
from board.envelope import Envelope
from board.roles import RosterSpec
from board.workspace.paths import copy_default_workspace
from bot.app import all_migrations
from bot.channels.whatsapp.access import RATE_LIMITED
from bot.channels.whatsapp.identity import Change, ChangeKind, Sighting, WhatsAppPeople, identity_news
from tests.support.daemon import DAEMON_REPO, SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI, SentText
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, OWNER, VERIFY_TOKEN, contact, message, notification, post

PHONE = "16315551181"  # the person, allowed by their number
BSUID = "US.13491208655302741918"  # the same person's business-scoped user id
_FACT = re.compile(r"\bFACT-[A-Z]+\b")
_IDENTITY_MIGRATIONS = {f"04{n:02d}" for n in range(1, 10)}  # this fix's migrations (0401-0409)


class RecallModel(EchoModel):
    """Answers ``ECHO <question> | recalls: FACT-A FACT-B`` (the facts of the earlier messages it was sent)."""

    name = "RecallModel"

    async def _chat(self, request: web.Request) -> web.Response:
        body: dict[str, Any] = await request.json()
        messages = [m for m in body.get("messages") or [] if m.get("role") in ("user", "assistant")]
        last = str(messages[-1].get("content") if messages else "")
        question = (last.strip().splitlines() or [""])[-1]
        earlier = " ".join(str(m.get("content")) for m in messages[:-1])
        recalled = sorted(set(_FACT.findall(earlier)))
        self.calls += 1
        self.questions.append(question)
        text = f"ECHO {question} | recalls: {' '.join(recalled) or 'nothing'}"
        return web.json_response({
            "id": f"chatcmpl-recall{self.calls}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "echo"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
        })


@pytest.fixture
async def model() -> AsyncIterator[RecallModel]:
    async with RecallModel(latency=0.0) as server:
        yield server


def write_config(root: Path, graph: FakeGraphAPI, model: EchoModel, allowed: list[str],
                 extra: list[str] = ()) -> Path:  # type: ignore[assignment]
    """A workspace and a sabha.yaml with only the WhatsApp channel, on the fakes."""
    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    numbers = ", ".join(f'"{u}"' for u in allowed)
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
             "llm:", "  model: openai:echo", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {model.base_url}",
             "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
             "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
             f"  graph_base_url: {graph.base_url}", f"  allowed_numbers: [{numbers}]", *extra]
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def sabha_cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI on ``config``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(DAEMON_REPO), WHATSAPP_ACCESS_TOKEN="x", WHATSAPP_APP_SECRET=APP_SECRET)
    return subprocess.run([sys.executable, "-m", "bot.cli.main", *args, "--config", str(config)], cwd=config.parent,
                          capture_output=True, text=True, timeout=60, env=env)


class Person:
    """Writes to a running ``sabha run`` as one WhatsApp user and reads the answers."""

    def __init__(self, sabha: SabhaProcess, graph: FakeGraphAPI, http: ClientSession) -> None:
        self.sabha, self.graph, self.http = sabha, graph, http

    async def send(self, body: dict[str, Any]) -> None:
        status, text = await post(self.http, f"http://127.0.0.1:{self.sabha.port}/whatsapp/webhook", body)
        assert status == 200, (status, text)

    async def ask(self, text: str, *, phone: str | None = None, bsuid: str | None = None,
                  timeout: float = 20) -> SentText:
        """Send ``text`` from ``phone`` and/or ``bsuid`` (as Meta writes such a message) and wait for its answer."""
        item = message(phone or bsuid or "", text=text)
        if phone and bsuid:
            item["from_user_id"] = bsuid
        notice = notification([item], contacts=[contact(phone, bsuid=bsuid) if phone else contact(bsuid or "")])
        await self.send(notice)
        answers = [s for s in self.graph.sent if s.context_id == item["id"]]

        def answered() -> bool:
            answers[:] = [s for s in self.graph.sent if s.context_id == item["id"]]
            return bool(answers)

        try:
            await eventually(answered, f"an answer to {text!r}", timeout=timeout)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n--- sabha's log ---\n{self.sabha.log}") from None
        return answers[0]


def _env(graph: FakeGraphAPI) -> dict[str, str]:
    return {"WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}


def _wa_keys(root: Path) -> list[tuple[str, bool]]:
    with sqlite3.connect(root / "sessions" / "sabha.db") as db:
        rows = db.execute("SELECT key, archived_at IS NULL FROM sessions WHERE key LIKE 'board:%:wa-%' "
                          "ORDER BY created_at").fetchall()
    return [(str(k), bool(live)) for k, live in rows]


async def test_a_person_allowed_by_number_writing_with_only_their_user_id_continues_the_same_conversation(
    tmp_path: Path, fake_graph: FakeGraphAPI, model: RecallModel
) -> None:
    sabha = SabhaProcess(write_config(tmp_path, fake_graph, model, [OWNER, PHONE]), env=_env(fake_graph))
    try:
        await sabha.start()
        async with ClientSession(timeout=ClientTimeout(total=10)) as http:
            person = Person(sabha, fake_graph, http)
            # Meta sends the number and the user id together: Sabha learns they are one person.
            first = await person.ask("Remember FACT-PAPAYA please", phone=PHONE, bsuid=BSUID)
            assert first.to == PHONE
            # Later the person hides their number: only the user id arrives. Admitted, same conversation.
            hidden = await person.ask("What do you recall?", bsuid=BSUID)
            assert "recalls: FACT-PAPAYA" in hidden.body, hidden.body
            assert hidden.to == PHONE  # the number is known: replies still go to it
            # /reset from the user id resets the one conversation: asked by number, nothing is recalled.
            reset = await person.ask("/reset", bsuid=BSUID)
            assert "fresh conversation" in reset.body, reset.body
            after = await person.ask("And now?", phone=PHONE)
            assert "recalls: nothing" in after.body, after.body
            # The sticky role is the person's too: switched by number, kept by user id.
            switched = await person.ask("/finance", phone=PHONE)
            assert "Finance" in switched.body, switched.body
            sticky = await person.ask("What about the budget?", bsuid=BSUID)
            assert sticky.body.startswith("*💰 Finance*"), sticky.body
        assert "not in whatsapp.allowed_numbers" not in sabha.log
    finally:
        await sabha.close()
    keys = _wa_keys(tmp_path)
    assert {k for k, _ in keys} == {f"board:general:wa-{PHONE}", f"board:finance:wa-{PHONE}"}, keys
    assert [live for k, live in keys if k == f"board:general:wa-{PHONE}"] == [False, True]  # one /reset


async def test_public_mode_rate_limits_the_person_not_each_of_their_ids(
    tmp_path: Path, fake_graph: FakeGraphAPI, model: RecallModel
) -> None:
    config = write_config(tmp_path, fake_graph, model, [OWNER], ["  access: public", "  public_rate_per_minute: 1"])
    sabha = SabhaProcess(config, env=_env(fake_graph))
    try:
        await sabha.start()
        async with ClientSession(timeout=ClientTimeout(total=10)) as http:
            person = Person(sabha, fake_graph, http)
            first = await person.ask("Remember FACT-FIG", phone=PHONE, bsuid=BSUID)
            assert "ECHO" in first.body
            again = await person.ask("One more, by user id", bsuid=BSUID)  # the same person: over the rate
            assert again.body == RATE_LIMITED, again.body
    finally:
        await sabha.close()
    assert model.calls == 1


def _system(kind: str, fields: dict[str, Any], *, phone: str | None = None) -> dict[str, Any]:
    """A ``messages[]`` system item as Meta writes it (no contacts array)."""
    item: dict[str, Any] = {"id": f"wamid.SYS{time.monotonic_ns()}", "timestamp": "1763840100", "type": "system",
                            "system": {"body": f"User changed ({kind})", "type": kind, **fields}}
    if phone:
        item["from"] = phone
    body = notification([item], contacts=[])
    del body["entry"][0]["changes"][0]["value"]["contacts"]
    return body


def _user_id_update(phone: str, previous: str, current: str) -> dict[str, Any]:
    """The ``user_id_update`` webhook (its own field): a user's BSUID rotated."""
    value = {"messaging_product": "whatsapp",
             "metadata": {"display_phone_number": "15550009999", "phone_number_id": NUMBER_ID},
             "contacts": [{"profile": {"name": "Test User"}, "wa_id": phone}],
             "user_id_update": [{"wa_id": phone, "detail": "User id for Test User has been updated.",
                                 "user_id": {"previous": previous, "current": current},
                                 "timestamp": "1763840200"}]}
    return {"object": "whatsapp_business_account",
            "entry": [{"id": "102290129340398", "changes": [{"value": value, "field": "user_id_update"}]}]}


async def test_number_and_user_id_changes_keep_history_and_access_and_status_tells_the_owner(
    tmp_path: Path, fake_graph: FakeGraphAPI, model: RecallModel
) -> None:
    new_phone, bsuid2, bsuid3, bsuid4 = "16315559999", "US.22222222222222222222", "US.33333333333333333333", \
        "US.44444444444444444444"
    config = write_config(tmp_path, fake_graph, model, [OWNER, PHONE])
    sabha = SabhaProcess(config, env=_env(fake_graph))
    try:
        await sabha.start()
        async with ClientSession(timeout=ClientTimeout(total=10)) as http:
            person = Person(sabha, fake_graph, http)
            await person.ask("Remember FACT-KIWI", phone=PHONE, bsuid=BSUID)
            # The person changed their number (a new number is not in allowed_numbers).
            await person.send(_system("user_changed_number", {"wa_id": new_phone, "user_id": bsuid2,
                                                              "previous_user_id": BSUID}, phone=PHONE))
            moved = await person.ask("Still there?", phone=new_phone)
            assert "recalls: FACT-KIWI" in moved.body, moved.body
            assert moved.to == new_phone
            # Their user id changed (no phone number in this one).
            await person.send(_system("user_changed_user_id", {"user_id": bsuid3, "previous_user_id": bsuid2}))
            renamed = await person.ask("And now?", bsuid=bsuid3)
            assert "recalls: FACT-KIWI" in renamed.body, renamed.body
            # The user id rotated again, reported on the user_id_update field.
            await person.send(_user_id_update(new_phone, bsuid3, bsuid4))
            rotated = await person.ask("And now again?", bsuid=bsuid4)
            assert "recalls: FACT-KIWI" in rotated.body, rotated.body
            assert rotated.to == new_phone
        status = sabha_cli(config, "status")
        assert f"{PHONE} changed to {new_phone}" in status.stdout, status.stdout + status.stderr
        assert "allowed_numbers" in status.stdout
        assert "not in whatsapp.allowed_numbers" not in sabha.log
    finally:
        await sabha.close()
    assert {k for k, _ in _wa_keys(tmp_path)} == {f"board:general:wa-{PHONE}"}


async def _pre_upgrade_state(root: Path) -> dict[str, str]:
    """A state db as the version before this fix left it: the same person's two conversations, one
    under their number (FACT-PAPAYA), one under their user id (FACT-MANGO). Made by the board itself
    with every migration but this fix's; returns key -> session id."""
    copy_default_workspace(root / "workspace")
    migrations = [m for m in all_migrations() if m.name[:4] not in _IDENTITY_MIGRATIONS]
    settings = BoardSettings(workspace=root / "workspace", data_dir=root / "sessions", roster=RosterSpec())
    board = await Board.open(settings, migrations=migrations)
    try:
        for user, fact in ((PHONE, "FACT-PAPAYA"), (BSUID, "FACT-MANGO")):
            await board.handle(Envelope(channel="whatsapp", text=f"Remember {fact}", sender=user, chat_id=user,
                                        message_id=f"wamid.OLD{fact}"))
        refs = await board.parts.sessions.list()
    finally:
        await board.close()
    return {r.key: r.session_id for r in refs}


async def test_split_conversations_of_a_pre_upgrade_db_are_merged_and_neither_is_lost(
    tmp_path: Path, fake_graph: FakeGraphAPI, model: RecallModel
) -> None:
    before = await _pre_upgrade_state(tmp_path)
    assert set(before) == {f"board:general:wa-{PHONE}", f"board:general:wa-{BSUID}"}
    config = write_config(tmp_path, fake_graph, model, [OWNER, PHONE, BSUID])
    sabha = SabhaProcess(config, env=_env(fake_graph))
    try:
        await sabha.start()
        async with ClientSession(timeout=ClientTimeout(total=10)) as http:
            person = Person(sabha, fake_graph, http)
            by_number = await person.ask("What do you recall?", phone=PHONE, bsuid=BSUID)
            assert "recalls: FACT-PAPAYA" in by_number.body, by_number.body
            by_user_id = await person.ask("And you?", bsuid=BSUID)
            assert "recalls: FACT-PAPAYA" in by_user_id.body, by_user_id.body  # one conversation now
            assert "FACT-MANGO" not in by_user_id.body
        await sabha.signal(signal.SIGTERM)
    finally:
        await sabha.close()
    keys = _wa_keys(tmp_path)
    assert {k for k, _ in keys} == {f"board:general:wa-{PHONE}"}, keys
    # The user id's old conversation is archived under the person, never lost, and still readable.
    mango = sabha_cli(config, "sessions", "show", before[f"board:general:wa-{BSUID}"])
    assert mango.returncode == 0, mango.stderr
    assert "Remember FACT-MANGO" in mango.stdout, mango.stdout
    listed = sabha_cli(config, "sessions", "list", "--all").stdout
    assert before[f"board:general:wa-{BSUID}"] in listed and before[f"board:general:wa-{PHONE}"] in listed



# -- the identity store itself (in process, on a real state db) ---------------------------------


@pytest.fixture
async def people(tmp_path: Path) -> AsyncIterator[tuple[WhatsAppPeople, list[tuple[str, str]]]]:
    from board.app import BOARD_MIGRATIONS
    from board.db import StateDB

    merged: list[tuple[str, str]] = []

    async def on_merge(old: str, new: str) -> None:
        merged.append((old, new))

    db = await StateDB.open(tmp_path / "state.db", [*BOARD_MIGRATIONS, *all_migrations()])
    store = WhatsAppPeople(db, on_merge)
    await store.load()
    try:
        yield store, merged
    finally:
        await db.close()


async def test_two_people_kept_apart_are_merged_into_the_one_found_by_number(
    people: tuple[WhatsAppPeople, list[tuple[str, str]]]
) -> None:
    store, merged = people
    hidden = await store.person_for(None, BSUID)  # first seen by user id only
    by_number = await store.person_for(PHONE, None)  # then by number only: two people so far
    assert (hidden, by_number) == (BSUID, PHONE)
    await store.learn([Sighting(PHONE, BSUID)])  # one webhook carries both
    assert (BSUID, PHONE) in merged
    assert store.key_of(BSUID) == store.key_of(PHONE) == PHONE
    assert store.address(PHONE) == PHONE and store.identifiers(PHONE) == {PHONE, BSUID}
    store.people.clear()
    await store.load()  # it is stored
    assert store.key_of(BSUID) == PHONE


async def test_a_number_given_on_after_a_change_is_a_new_person_not_the_old_one_s_history(
    people: tuple[WhatsAppPeople, list[tuple[str, str]]]
) -> None:
    store, merged = people
    await store.learn([Sighting(PHONE, BSUID)])
    await store.learn([Change(ChangeKind.NUMBER_CHANGED, PHONE, "16315559999", BSUID, None)])
    assert store.key_of("16315559999") == PHONE and store.address(PHONE) == "16315559999"
    stranger = await store.person_for(PHONE, "US.55555555555555555555")  # the old number, someone else now
    assert stranger != PHONE and stranger.startswith(PHONE)
    assert store.address(stranger) == PHONE
    assert all(old != PHONE for old, _ in merged)  # nothing of the first person moved to the stranger


async def test_system_webhooks_are_read_in_meta_s_shapes() -> None:
    from bot.channels.whatsapp.inbound import parse_notification

    news = identity_news(parse_notification(json.dumps(_system(
        "user_changed_number", {"wa_id": "16315559999", "user_id": "US.2", "previous_user_id": BSUID},
        phone=PHONE)).encode()))
    assert news == [Change(ChangeKind.NUMBER_CHANGED, PHONE, "16315559999", BSUID, "US.2")]
    news = identity_news(parse_notification(json.dumps(_user_id_update(PHONE, BSUID, "US.3")).encode()))
    assert news == [Change(ChangeKind.USER_ID_CHANGED, PHONE, None, BSUID, "US.3")]


async def test_a_message_redelivered_after_its_sender_was_merged_into_a_person_is_answered_once(
    tmp_path: Path, fake_graph: FakeGraphAPI, model: RecallModel
) -> None:
    """Meta delivers at least once: a user-id-only message whose 200 was lost comes again, after a
    webhook carrying both ids made its sender one person with a number Sabha already knew. The
    person's key changed in between; the message is still the same message, answered once."""
    sabha = SabhaProcess(write_config(tmp_path, fake_graph, model, [OWNER, PHONE, BSUID]), env=_env(fake_graph))
    try:
        await sabha.start()
        async with ClientSession(timeout=ClientTimeout(total=10)) as http:
            person = Person(sabha, fake_graph, http)
            await person.ask("R1 by number", phone=PHONE)  # known by number only
            hidden = message(BSUID, text="R2 by user id only")  # a second person, as far as Sabha knows
            hidden_notice = notification([hidden], contacts=[contact(BSUID)])
            await person.send(hidden_notice)
            await eventually(lambda: any(s.context_id == hidden["id"] for s in fake_graph.sent), "R2's answer")
            await person.ask("R3 both ids: one person", phone=PHONE, bsuid=BSUID)  # the merge
            await person.send(hidden_notice)  # Meta delivers R2 again
            await person.ask("R4 marker", phone=PHONE)
    finally:
        await sabha.close()
    answers = [s for s in fake_graph.sent if s.context_id == hidden["id"]]
    assert len(answers) == 1, [s.body for s in answers]


async def test_owner_only_commands_are_not_answered_in_a_whatsapp_group(
    tmp_path: Path, fake_graph: FakeGraphAPI, model: RecallModel
) -> None:
    """The owner writing in an allowed group: /status would show the board's numbers, spend and
    counters to everyone in the group (item 2's leak again). One line instead."""
    group = "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD"
    config = write_config(tmp_path, fake_graph, model, [OWNER], [f'  allowed_groups: ["{group}"]'])
    sabha = SabhaProcess(config, env=_env(fake_graph))
    try:
        await sabha.start()
        async with ClientSession(timeout=ClientTimeout(total=10)) as http:
            person = Person(sabha, fake_graph, http)
            item = message(OWNER, text="/status", group_id=group)
            await person.send(notification([item], contacts=[contact(OWNER)]))
            await eventually(lambda: any(s.context_id == item["id"] for s in fake_graph.sent), "an answer")
            direct = await person.ask("/status", phone=OWNER)  # in the owner's own chat: the full status
    finally:
        await sabha.close()
    in_group = [s for s in fake_graph.sent if s.context_id == item["id"]]
    assert len(in_group) == 1 and "owner only" in in_group[0].body, [s.body for s in in_group]
    assert NUMBER_ID not in in_group[0].body
    assert NUMBER_ID in direct.body, direct.body


async def test_a_user_id_in_from_without_from_user_id_is_that_person_answered_by_user_id(
    tmp_path: Path, fake_graph: FakeGraphAPI, model: RecallModel
) -> None:
    """A payload naming the sender's BSUID in ``from`` alone (no ``from_user_id``, no contact) is
    the person with that user id: one conversation, answered by ``recipient``, not a new '?' person
    each time whose reply is addressed as a group."""
    sabha = SabhaProcess(write_config(tmp_path, fake_graph, model, [OWNER, BSUID]), env=_env(fake_graph))
    try:
        await sabha.start()
        async with ClientSession(timeout=ClientTimeout(total=10)) as http:
            person = Person(sabha, fake_graph, http)
            answers = []
            for text in ("Remember FACT-LIME", "What do you recall?"):
                item = {"id": f"wamid.FROM{time.monotonic_ns()}", "timestamp": "1763840000", "type": "text",
                        "from": BSUID, "text": {"body": text}}
                body = notification([item], contacts=[])
                del body["entry"][0]["changes"][0]["value"]["contacts"]
                await person.send(body)
                await eventually(lambda i=item: any(s.context_id == i["id"] for s in fake_graph.sent),
                                 f"the answer to {text!r}")
                answers.extend(s for s in fake_graph.sent if s.context_id == item["id"])
    finally:
        await sabha.close()
    assert [(a.recipient, a.payload.get("recipient_type")) for a in answers] == [(BSUID, "individual")] * 2, \
        [a.payload for a in answers]
    assert "recalls: FACT-LIME" in answers[1].body, answers[1].body


async def test_messages_queued_under_an_id_when_it_is_merged_continue_the_person_s_conversation(
    tmp_path: Path, fake_graph: FakeGraphAPI
) -> None:
    """A user-id-only message still waiting in its lane when a webhook pairs that id with a number
    Sabha knew is answered in the merged person's conversation, not in a new split one."""
    async with RecallModel(latency=1.5) as slow:
        config = write_config(tmp_path, fake_graph, slow, [OWNER, PHONE, BSUID])
        sabha = SabhaProcess(config, env=_env(fake_graph))
        try:
            await sabha.start()
            async with ClientSession(timeout=ClientTimeout(total=10)) as http:
                person = Person(sabha, fake_graph, http)
                await person.ask("Remember FACT-PEAR", phone=PHONE)
                busy = message(BSUID, text="Q1 by user id")  # answering takes 1.5 s ...
                queued = message(BSUID, text="Q2 what do you recall?")  # ... so this one waits in the lane
                await person.send(notification([busy, queued], contacts=[contact(BSUID), contact(BSUID)]))
                await person.ask("Q3 both ids: one person", phone=PHONE, bsuid=BSUID, timeout=30)
                await eventually(lambda: any(s.context_id == queued["id"] for s in fake_graph.sent),
                                 "the queued message's answer", timeout=30)
        finally:
            await sabha.close()
    answer = next(s for s in fake_graph.sent if s.context_id == queued["id"])
    assert "FACT-PEAR" in answer.body, answer.body  # the person's conversation, merged
    assert answer.to == PHONE, answer.payload
    assert not [k for k, _ in _wa_keys(tmp_path) if k.endswith(f"wa-{BSUID}")], _wa_keys(tmp_path)
