"""Odd input from outside, through a real ``sabha run`` on the fakes (issue 22, items 5, 10, 11,
15 and 20): WhatsApp groups, a lone surrogate in a signed batch, a deeply nested Telegram
webhook body, polls / unsupported / errored messages and edits, redelivered ``failed``
statuses, and read receipts for messages only the polite line answers.

Every test proves "nothing more" with a marker message sent afterwards and answered (no
fixed sleeps): whatever the daemon was going to do with the odd input, it did before the
marker's answer went out, since one sender's messages are answered in order."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession, ClientTimeout

from board.workspace.paths import copy_default_workspace
from tests.support.daemon import WEBHOOK_SECRET, SabhaProcess
from tests.support.daemon import write_config as write_telegram_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER as TG_OWNER
from tests.support.telegram import TOKEN, eventually
from tests.support.whatsapp import (
    APP_SECRET,
    DISPLAY_NUMBER,
    FRIEND,
    MEDIA,
    NUMBER_ID,
    OWNER,
    VERIFY_TOKEN,
    contact,
    message,
    new_wamid,
    notification,
    post,
    status,
    text_notification,
)

GROUP = "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD"  # Meta's example group id
OTHER_GROUP = "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOTo5OTk5OTk5OTk5OTk5OTk5OTkZD"
EDIT_LINE = "edit"  # the edit notice names what happened
POLITE = "only read text"


def write_wa_config(root: Path, graph: FakeGraphAPI, model: EchoModel, extra: list[str] | None = None,
                    *, price: bool = False) -> Path:
    """A workspace and a sabha.yaml with only the WhatsApp channel (owner and friend allowed);
    ``price``: the echo model costs money, so spend is counted."""
    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
             "llm:", "  model: openai:echo", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {model.base_url}",
             *(["  prices:", "    openai:echo: {input: 1000, output: 2000}"] if price else []),
             "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
             "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
             f"  graph_base_url: {graph.base_url}", f'  allowed_numbers: ["{OWNER}", "{FRIEND}"]',
             *(extra or [])]
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class WhatsAppRun:
    """A running ``sabha run`` with WhatsApp on the fake Graph API, and a client to post to it."""

    def __init__(self, sabha: SabhaProcess, graph: FakeGraphAPI, model: EchoModel, http: ClientSession) -> None:
        self.sabha, self.graph, self.model, self.http = sabha, graph, model, http

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sabha.port}/whatsapp/webhook"

    async def post(self, body: dict[str, Any] | bytes) -> int:
        code, _ = await post(self.http, self.url, body)
        return code

    async def marker(self, user: str, text: str) -> None:
        """Send ``text`` from ``user`` and wait for its answer (everything sent before it is done)."""
        assert await self.post(text_notification(user, text)) == 200
        await eventually(lambda: any(text in s.body for s in self.graph.sent), f"the answer to {text!r}", timeout=30)


@pytest.fixture
async def whatsapp(tmp_path: Path, fake_graph: FakeGraphAPI, echo_model: EchoModel
                   ) -> AsyncIterator[Any]:
    """``await whatsapp(extra_config_lines)``: a started WhatsAppRun (stopped afterwards)."""
    runs: list[SabhaProcess] = []
    http = ClientSession(timeout=ClientTimeout(total=30))

    async def start(extra: list[str] | None = None, *, price: bool = False) -> WhatsAppRun:
        env = {"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
        sabha = SabhaProcess(write_wa_config(tmp_path, fake_graph, echo_model, extra, price=price), env=env)
        runs.append(sabha)
        await sabha.start()
        return WhatsAppRun(sabha, fake_graph, echo_model, http)

    try:
        yield start
    finally:
        for sabha in runs:
            await sabha.close()
        await http.close()


def group_message(user: str, group: str, text: str, wamid: str | None = None) -> dict[str, Any]:
    """A text written in a WhatsApp group (Meta's group messages webhook: ``group_id`` on the message)."""
    return notification([message(user, text=text, wamid=wamid, group_id=group)])


# -- 5: groups ---------------------------------------------------------------------------------


async def test_a_group_message_is_ignored_unless_its_group_is_allowed_then_answered_in_the_group(
    whatsapp: Any,
) -> None:
    run: WhatsAppRun = await whatsapp([f'  allowed_groups: ["{GROUP}"]'])
    ignored = [new_wamid(), new_wamid()]
    for wamid in ignored:  # twice: logged once
        assert await run.post(group_message(OWNER, OTHER_GROUP, "G1 what do the others think?", wamid)) == 200
    asked = new_wamid()
    assert await run.post(group_message(FRIEND, GROUP, "G2 shall we launch?", asked)) == 200
    await eventually(lambda: any("G2" in s.body for s in run.graph.sent), "the answer in the group", timeout=30)
    await run.marker(OWNER, "M1 marker")
    in_group = [s for s in run.graph.sent if "G2" in s.body]
    assert len(in_group) == 1
    assert (in_group[0].payload.get("recipient_type"), in_group[0].to) == ("group", GROUP)
    assert in_group[0].context_id == asked
    assert not any("G1" in s.body for s in run.graph.sent), "a message in a group that is not allowed was answered"
    assert not any("G1" in q for q in run.model.questions), "a message in a group that is not allowed cost a model call"
    assert sum(OTHER_GROUP in line and "allowed_groups" in line for line in run.sabha.lines) == 1, run.sabha.log


async def test_without_allowed_groups_a_group_message_gets_no_private_answer_and_no_model_call(
    whatsapp: Any,
) -> None:
    run: WhatsAppRun = await whatsapp()
    assert await run.post(group_message(OWNER, GROUP, "G3 anyone?")) == 200
    await run.marker(OWNER, "M2 marker")
    assert not any("G3" in s.body for s in run.graph.sent), [s.body for s in run.graph.sent]
    assert not any("G3" in q for q in run.model.questions)


async def test_in_public_mode_what_strangers_spend_in_an_allowed_group_counts_against_the_daily_cap(
    whatsapp: Any,
) -> None:
    run: WhatsAppRun = await whatsapp([f'  allowed_groups: ["{GROUP}"]', "  access: public",
                                       "  public_daily_usd: 10"], price=True)
    stranger = "15550006666"
    assert await run.post(group_message(stranger, GROUP, "G4 first question")) == 200
    await eventually(lambda: any("G4" in s.body for s in run.graph.sent), "the first answer", timeout=30)

    def refused() -> bool:
        return any("limit for public questions" in s.body for s in run.graph.sent)

    for _ in range(40):  # the spend is re-read at most once a second: keep asking (paced) until refused
        assert await run.post(group_message(stranger, GROUP, "G5 another question")) == 200
        if refused():
            break
        await asyncio.sleep(0.25)
    await eventually(refused, "the daily cap's refusal (spend in a WhatsApp group must count against "
                     "whatsapp.public_daily_usd)", timeout=5)


# -- 10: one bad item does not sink the batch ---------------------------------------------------


async def test_a_lone_surrogate_in_a_contact_name_and_a_broken_item_do_not_lose_the_good_message(
    whatsapp: Any,
) -> None:
    run: WhatsAppRun = await whatsapp()
    good, odd, broken = new_wamid(), new_wamid(), new_wamid()
    body = notification([message(OWNER, text="S1 the good one", wamid=good),
                         message(FRIEND, text="S2 from a strange name", wamid=odd),
                         {"id": broken, "from": OWNER, "timestamp": "1763840000"}],  # no type: not a message
                        contacts=[contact(OWNER, "Owner"), contact(FRIEND, "NAME_HERE")])
    raw = json.dumps(body).replace("NAME_HERE", "Ann \\ud800 Lee").encode()
    assert b"\\ud800" in raw
    for _ in range(3):  # Meta delivers again; every delivery is accepted, answered once
        assert await run.post(raw) == 200
    deep = b'{"object": "whatsapp_business_account", "entry": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert await run.post(deep) == 400  # read again leniently, it is still refused cleanly
    await run.marker(OWNER, "M3 marker")
    await eventually(lambda: any("S2" in s.body for s in run.graph.sent), "the answer to S2", timeout=30)
    assert [s.context_id for s in run.graph.sent if "S1" in s.body] == [good]
    assert [s.context_id for s in run.graph.sent if "S2" in s.body] == [odd]
    assert any(broken in line and "skipped" in line for line in run.sabha.lines), run.sabha.log
    assert "Traceback" not in run.sabha.log


# -- 15: polls, unsupported and errored messages, edits -------------------------------------------


def unsupported(user: str, kind: str, wamid: str) -> dict[str, Any]:
    """A message type Cloud API does not support (Meta's unsupported messages webhook reference)."""
    return message(user, "unsupported", wamid=wamid, unsupported={"type": kind},
                   errors=[{"code": 131051, "title": "Message type unknown", "message": "Message type unknown",
                            "error_data": {"details": "Message type is currently not supported."}}])


async def test_polls_unsupported_errored_and_edited_messages_are_answered_and_reactions_are_not(
    whatsapp: Any,
) -> None:
    run: WhatsAppRun = await whatsapp()
    poll, old, interactive, edit, original = (new_wamid() for _ in range(5))
    errored = notification([{"context": {"from": DISPLAY_NUMBER, "id": "wamid.gvwegfretge=="}, "from": OWNER,
                             "id": interactive, "timestamp": "1700505494", "type": "interactive"}],
                           errors=[{"code": 131000, "title": "Something went wrong", "message": "Something went wrong",
                                    "error_data": {"details": "Unsupported webhook payload"}}])
    edited = message(OWNER, "edit", wamid=edit, edit={"original_message_id": original, "message": {
        "type": "text", "text": {"body": "E1 the corrected question"}}})
    reaction = message(OWNER, "reaction", reaction={"message_id": "wamid.OUT1", "emoji": "\U0001f44d"})
    for body in (notification([unsupported(OWNER, "poll_creation", poll)]),
                 notification([message(OWNER, "unsupported", wamid=old, errors=[{
                     "code": 131051, "title": "Message type unknown", "message": "Message type unknown",
                     "error_data": {"details": "Message type is currently not supported."}}])]),
                 errored, notification([edited]), notification([reaction])):
        assert await run.post(body) == 200
    await run.marker(OWNER, "M4 marker")
    replies = {s.context_id: s.body for s in run.graph.sent}
    for wamid in (poll, old, interactive):
        assert wamid in replies and POLITE in replies[wamid], (wamid, replies)
    assert original in replies and EDIT_LINE in replies[original].lower(), replies
    assert not any("E1" in q for q in run.model.questions), "an edit went to the model"
    assert len(run.graph.sent) == 5, [s.body for s in run.graph.sent]  # 3 polite lines, the edit notice, M4
    assert run.model.calls == 1


# -- 20: statuses logged once; the polite line marks the message read ---------------------------------


async def test_a_redelivered_failed_status_is_logged_once_and_media_answered_politely_is_marked_read(
    whatsapp: Any,
) -> None:
    run: WhatsAppRun = await whatsapp()
    await run.marker(OWNER, "M5 first")
    ours = next(s.wamid for s in run.graph.sent if "M5" in s.body)
    strange = "wamid.NEVERSENTBYSABHA000000000000"
    failed = notification(statuses=[status(ours, "failed", OWNER, error=131026, title="Message undeliverable"),
                                    status(strange, "failed", OWNER, error=131026, title="Message undeliverable")])
    for _ in range(3):  # Meta delivers at least once
        assert await run.post(failed) == 200
    image = new_wamid()
    assert await run.post(notification([message(FRIEND, "image", wamid=image, **MEDIA["image"])])) == 200
    await eventually(lambda: any(s.context_id == image for s in run.graph.sent), "the polite line", timeout=30)
    await run.marker(OWNER, "M6 marker")
    errors = [line for line in run.sabha.lines if " ERROR " in line or "ERROR" in line.split(":", 1)[0]]
    about_ours = [line for line in run.sabha.lines if ours in line and "failed" in line]
    assert len(about_ours) == 1, about_ours
    assert not any(strange in line for line in errors), errors
    assert sum(strange in line for line in run.sabha.lines) == 1, run.sabha.log
    assert image in [r.get("message_id") for r in run.graph.reads], run.graph.reads


# -- 11 and 15 on Telegram: a nested webhook body, and edits ------------------------------------------


@pytest.fixture
async def telegram_run(tmp_path: Path, fake: FakeTelegramAPI, echo_model: EchoModel) -> AsyncIterator[SabhaProcess]:
    """A ``sabha run`` with Telegram in webhook mode on the fake Bot API (setWebhook called)."""
    config = write_telegram_config(tmp_path, fake, echo_model, mode="webhook",
                                   extra=["  webhook_url: https://sabha.example.org/telegram/webhook"])
    # write_config puts extra lines at the end of the telegram section
    sabha = SabhaProcess(config, env={"TELEGRAM_BOT_TOKEN": TOKEN})
    try:
        await sabha.start()
        yield sabha
    finally:
        await sabha.close()


async def test_a_deeply_nested_telegram_webhook_body_is_400_without_a_traceback_and_edits_are_answered(
    telegram_run: SabhaProcess, fake: FakeTelegramAPI
) -> None:
    url = f"http://127.0.0.1:{telegram_run.port}/telegram/webhook"
    headers = {"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET, "Content-Type": "application/json"}
    deep = b'{"update_id": 7, "message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    async with ClientSession() as http:
        async with http.post(url, data=deep, headers=headers) as resp:
            assert resp.status == 400, await resp.text()
        first = fake.build_text_update(TG_OWNER, TG_OWNER, "T1 the first question")
        assert (await fake.deliver_webhook(url, first, WEBHOOK_SECRET))[0] == 200
        await fake.wait_for_messages(1, timeout=30)
        edited = dict(first["message"], text="T2 the first question, corrected", edit_date=first["message"]["date"] + 5)
        assert (await fake.deliver_webhook(url, {"edited_message": edited}, WEBHOOK_SECRET))[0] == 200
        marker = fake.build_text_update(TG_OWNER, TG_OWNER, "T3 marker")
        assert (await fake.deliver_webhook(url, marker, WEBHOOK_SECRET))[0] == 200
        await eventually(lambda: any("T3" in m.text for m in fake.sent_to(TG_OWNER)), "the marker's answer",
                         timeout=30)
    texts = [m.text for m in fake.sent_to(TG_OWNER)]
    assert len(texts) == 3 and EDIT_LINE in texts[1].lower() and "T2" not in " ".join(texts), texts
    assert "Traceback" not in telegram_run.log and "RecursionError" not in telegram_run.log, telegram_run.log
    hooks = fake.calls_to("setWebhook")
    assert hooks and "edited_message" in str(hooks[-1].get("allowed_updates")), hooks
