"""Consent on WhatsApp through a real ``sabha run`` (the fake Graph API, the scripted model, the npm filesystem
server given to the chair): the owner's question comes with interactive reply buttons Allow once / Always allow
tool / Deny; a member's tap is refused and nothing is written; the owner's tap, in the very chat where the
advisor waits (the turn holds that chat's lane), runs the write once and the answer follows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout

from board.workspace.paths import copy_default_workspace
from tests.support.daemon import SabhaProcess
from tests.support.fakes.graph_api import FakeGraphAPI, SentText
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.mcp import npm_server
from tests.support.telegram import eventually
from tests.support.whatsapp import (
    APP_SECRET,
    FRIEND,
    NUMBER_ID,
    OWNER,
    VERIFY_TOKEN,
    message,
    notification,
    post,
    text_notification,
)


def whatsapp_config(root: Path, graph: FakeGraphAPI, model: FakeOpenAI, files: Path) -> Path:
    copy_default_workspace(root / "workspace")
    files.mkdir(parents=True, exist_ok=True)
    config = root / "sabha.yaml"
    config.write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
        "llm:", "  model: openai:gpt-test", "  retry: {retries: 0}", "  providers:", "    openai:",
        "      api_key: test-key", f"      base_url: {model.base_url}", "      stream: false",
        "board:", "  slow_notice_s: 0", "  agents:", "    general:", '      tools: ["mcp:fs"]',
        "mcp:", "  servers:", "    fs:", f"      command: {npm_server('mcp-server-filesystem')}",
        f"      args: [{files}]",
        "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
        "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
        f"  graph_base_url: {graph.base_url}", f"  api_version: {graph.version}",
        f'  allowed_numbers: ["{OWNER}", "{FRIEND}"]']) + "\n", encoding="utf-8")
    return config


async def test_the_owners_tap_runs_the_write_a_members_changes_nothing(
        tmp_path: Path, fake_graph: FakeGraphAPI, fake_openai: FakeOpenAI) -> None:
    files = tmp_path / "files"
    config = whatsapp_config(tmp_path, fake_graph, fake_openai, files)
    fake_openai.script_tool_call("fs__write_file", {"path": str(files / "w.txt"), "content": "from WhatsApp"})
    fake_openai.script_text("Written [fs.write_file].")
    sabha = SabhaProcess(config, env={"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET})
    hook = ""

    async def send(http: ClientSession, body: dict[str, object]) -> None:
        status, _ = await post(http, hook, body)
        assert status == 200

    async def said(fragment: str) -> list[SentText]:
        await eventually(lambda: any(fragment in s.body for s in fake_graph.sent), repr(fragment), timeout=180)
        return [s for s in fake_graph.sent if fragment in s.body]

    try:
        await sabha.start()
        await sabha.wait_for_log(r"mcp server fs ready")
        hook = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
        async with ClientSession(timeout=ClientTimeout(total=20)) as http:
            await send(http, text_notification(OWNER, "Please write the file"))
            [question] = await said("wants to run fs.write_file")
            assert question.user == OWNER
            assert question.buttons == (("Allow once", "/allow 1"), ("Always allow tool", "/allow 1 always"),
                                        ("Deny", "/deny 1"))

            def tap(user: str, title: str, command: str) -> dict[str, object]:
                return notification([message(user, "interactive", interactive={
                    "type": "button_reply", "button_reply": {"id": command, "title": title}},
                    context={"from": "15550009999", "id": question.wamid})])

            await send(http, tap(FRIEND, "Allow once", "/allow 1"))
            await said("/allow is for the board's owner only")
            assert not (files / "w.txt").exists()
            await send(http, tap(OWNER, "Allow once", "/allow 1"))
            await said("Allowed once: fs.write_file (#1)")
            [answer] = await said("Written [fs.write_file].")
            assert answer.user == OWNER
    finally:
        await sabha.close()
    assert (files / "w.txt").read_text() == "from WhatsApp"
    with sqlite3.connect(tmp_path / "sessions" / "sabha.db") as db:
        rows = db.execute("SELECT answer, answered_by, finished_at IS NOT NULL FROM tool_approvals").fetchall()
    assert rows == [("allowed_once", f"whatsapp:{OWNER}", 1)]
