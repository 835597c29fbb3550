"""WhatsApp's catch-up after a restart (issue 40: "meetings survive a restart"), through a real ``sabha run`` on
the fake Graph API, signed webhooks and a board model whose round 2 the test holds.

The owner calls a meeting in their WhatsApp chat; round 1 is sent there as one message (and recorded as sent);
Sabha is killed with SIGKILL while round 2 is being asked, and started again. The resumed meeting goes on in the
same chat: round 1 is not sent again, round 2 comes once with every member's statement, then the decision and the
minutes, each once.
"""

from __future__ import annotations

import signal
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout

from board.workspace.paths import copy_default_workspace
from tests.support.daemon import SabhaProcess
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.meeting_table import SPECIALISTS, TableModel, db_rows, llm_lines
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, VERIFY_TOKEN, post, text_notification
from tests.support.whatsapp import OWNER as WA_OWNER

TOPIC = "Should we open a Pune office?"


def _config(root: Path, model: TableModel, graph: FakeGraphAPI) -> Path:
    copy_default_workspace(root / "workspace")
    config = root / "sabha.yaml"
    config.write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
        *llm_lines(model), "board:", "  meetings:", "    agent_timeout_s: 600", "    max_duration_s: 3600",
        "    max_turns_per_agent: 2",
        "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
        "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
        f"  graph_base_url: {graph.base_url}", f"  api_version: {graph.version}",
        f'  allowed_numbers: ["{WA_OWNER}"]']) + "\n", encoding="utf-8")
    return config


def _bodies(graph: FakeGraphAPI, head: str) -> list[str]:
    return [s.body for s in graph.sent if s.to == WA_OWNER and s.body.startswith(head)]


def _round_1_sent(root: Path) -> bool:
    return bool(db_rows(root, "SELECT 1 FROM meeting_posts WHERE channel = 'whatsapp' AND item = 'round:1:0' "
                              "AND status = 'sent'"))


async def test_a_meeting_killed_during_round_2_goes_on_in_the_whatsapp_chat_with_nothing_sent_twice(
        tmp_path: Path, fake_graph: FakeGraphAPI) -> None:
    async with TableModel() as model:
        model.hold(2)
        config = _config(tmp_path, model, fake_graph)
        env = {"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
        first, second = SabhaProcess(config, env=env), SabhaProcess(config, env=env)
        try:
            await first.start()
            async with ClientSession(timeout=ClientTimeout(total=60)) as http:
                status, _ = await post(http, f"http://127.0.0.1:{first.port}/whatsapp/webhook",
                                       text_notification(WA_OWNER, f"/meeting {TOPIC}"))
            assert status == 200
            await model.reach(2)
            await eventually(lambda: _round_1_sent(tmp_path), "round 1 sent on WhatsApp and recorded", timeout=120)
            [(meeting_id,)] = db_rows(tmp_path, "SELECT id FROM meetings WHERE status = 'running'")
            assert await first.signal(signal.SIGKILL) == -signal.SIGKILL
            model.release(2)
            await second.start()
            await second.wait_for_log(rf"meeting {meeting_id}: resumed at round 2")
            await eventually(lambda: _bodies(fake_graph, "*Minutes*"), "the minutes on WhatsApp", timeout=240)
        finally:
            await first.close()
            await second.close()
    assert db_rows(tmp_path, "SELECT status, stop_reason FROM meetings WHERE id = ?", meeting_id) == [
        ("ended", "completed")]
    rounds = _bodies(fake_graph, "*Round ")
    assert [b.split("*", 2)[1] for b in rounds] == ["Round 1", "Round 2"], rounds  # each round once, in order
    said = db_rows(tmp_path, "SELECT round, role, text FROM meeting_statements WHERE meeting_id = ? ORDER BY id",
                   meeting_id)
    assert len(said) == 2 * len(SPECIALISTS)
    for round_no, _role, text in said:  # every statement in its round's message
        assert text.split("\n")[0][:60] in rounds[int(round_no) - 1], (round_no, text)
    assert len(_bodies(fake_graph, "*Board decision*")) == 1 and len(_bodies(fake_graph, "*Minutes*")) == 1
