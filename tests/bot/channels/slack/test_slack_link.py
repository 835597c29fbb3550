"""A person linked across Slack and Telegram on one real ``sabha run`` (both fakes, the fake OpenAI server as the
model): ``/link`` on Telegram gives a one-time code, ``/board link CODE`` in a Slack DM with the app (Slack keeps
``/link`` for itself: the board's commands go through ``/board``) makes the two accounts one person; a fact told
in Slack is recalled in Telegram."""

from __future__ import annotations

import json
from pathlib import Path

from board.workspace.paths import copy_default_workspace
from tests.support.daemon import SabhaProcess
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.slack_api import event_callback, message_event
from tests.support.fakes.slack_socket import FakeSlack, SlackFormPoster, slash_command
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.people import MODEL, code_in
from tests.support.slack import FRIEND as SLACK_FRIEND
from tests.support.slack import FRIEND_DM, NAMES, next_ts, slack_env, slack_poster
from tests.support.slack import OWNER as SLACK_OWNER
from tests.support.telegram import FAST, FORUM, FRIEND, OWNER, TOKEN, eventually


def both_config(root: Path, telegram: FakeTelegramAPI, slack: FakeSlack, llm: FakeOpenAI) -> Path:
    copy_default_workspace(root / "workspace")
    rate = ", ".join(f"{k}: {v}" for k, v in FAST.items())
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
             "llm:", f"  model: {MODEL}", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {llm.base_url}", "      stream: false",
             "telegram:", "  token: ${TELEGRAM_BOT_TOKEN}", f"  api_base_url: {telegram.base_url}",
             f"  group_id: {FORUM}", f"  allowed_user_ids: [{OWNER}, {FRIEND}]", f"  rate_limit: {{{rate}}}",
             "slack:", "  bot_token: ${SLACK_BOT_TOKEN}", "  signing_secret: ${SLACK_SIGNING_SECRET}",
             f"  api_base_url: {slack.base_url}", f"  allowed_user_ids: [{SLACK_OWNER}, {SLACK_FRIEND}]",
             "  stream: false"]
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def dm_texts(slack: FakeSlack) -> list[str]:
    return [m.text for m in slack.messages if m.channel == FRIEND_DM]


async def tg(telegram: FakeTelegramAPI, text: str) -> str:
    before = len(telegram.sent_to(FRIEND))
    telegram.push_text(FRIEND, FRIEND, text)
    await eventually(lambda: len(telegram.sent_to(FRIEND)) > before, f"an answer to {text!r} on telegram")
    return "\n".join(m.text for m in telegram.sent_to(FRIEND)[before:])


async def test_a_fact_told_in_slack_is_recalled_in_telegram(tmp_path: Path, fake: FakeTelegramAPI,
                                                            fake_openai: FakeOpenAI) -> None:
    async with FakeSlack(users=NAMES) as slack:
        sabha = SabhaProcess(both_config(tmp_path, fake, slack, fake_openai),
                             env={"TELEGRAM_BOT_TOKEN": TOKEN, **slack_env()})
        try:
            await sabha.start()
            code = code_in(await tg(fake, "/link"))
            async with SlackFormPoster(f"http://127.0.0.1:{sabha.port}/slack/events") as forms:
                status, _ = await forms.post(slash_command(SLACK_FRIEND, FRIEND_DM, f"link {code}"))
                assert status == 200
            await eventually(lambda: any("inked" in t for t in dm_texts(slack)), "the link's answer in the DM")
            linked = next(t for t in dm_texts(slack) if "inked" in t)
            assert "telegram" in linked.lower(), linked

            fake_openai.script_tool_call("remember", {"key": "city", "value": "Pune"})
            fake_openai.script_text("Noted: Pune.")
            async with slack_poster(sabha) as poster:
                told = event_callback(message_event(FRIEND_DM, SLACK_FRIEND, "I moved to Pune last month, keep that "
                                                    "in mind.", next_ts(), channel_type="im"))
                assert await poster.deliver(told)
            await eventually(lambda: any("Noted: Pune." in t for t in dm_texts(slack)), "the answer in Slack")
            await tg(fake, "Where do I live these days?")
            bodies = [json.dumps(r.body, ensure_ascii=False) for r in fake_openai.requests if r.body]
            prompt = [b for b in bodies if "Where do I live these days?" in b][-1]
            assert 'city: \\"Pune\\"' in prompt, prompt  # the memory block of the Telegram turn
            assert "on slack" in prompt and "I moved to Pune last month" in prompt, prompt
        finally:
            await sabha.close()
