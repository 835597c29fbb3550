"""Single-agent mode (seed 003, 2.4): ``board.enabled: false`` is the one-agent setup of the seed
(the chair only, its ``SOUL.md``, no topics per role, no role addressing, meetings off) and
``board.meetings.enabled: false`` turns meetings off alone; through the real CLI and ``sabha run``
with the fake Telegram and Graph APIs."""

from __future__ import annotations

from pathlib import Path

from aiohttp import ClientSession, ClientTimeout

from tests.bot.cli.test_cli import run
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER, eventually
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, VERIFY_TOKEN, post, text_notification

REPO = Path(__file__).resolve().parents[2]
MINE = {"PYTHONPATH": str(REPO)}  # this checkout's code, not an installed one
USER = "15550001234"
MEETINGS_OFF = "Board meetings are off"


def _home(tmp_path: Path, *extra: str) -> Path:
    result = run(["init", str(tmp_path / "proj")], cwd=tmp_path, env=MINE)
    assert result.returncode == 0, result.stderr
    home = tmp_path / "proj"
    config = home / "sabha.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "\n" + "\n".join(extra) + "\n", encoding="utf-8")
    return home


def _board_off(text: str) -> str:
    """``text`` (a sabha.yaml) with ``enabled: false`` under its ``board:`` section."""
    assert "\nboard:\n" in text
    return text.replace("\nboard:\n", "\nboard:\n  enabled: false\n", 1)


def test_board_disabled_in_the_terminal_is_the_chair_alone(tmp_path: Path) -> None:
    home = _home(tmp_path)
    config = home / "sabha.yaml"
    config.write_text(_board_off(config.read_text(encoding="utf-8")), encoding="utf-8")
    checked = run(["config", "check"], cwd=home, env=MINE)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    asked = run(["ask", "@finance hi"], cwd=home, env=MINE)
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.startswith("🧭 General: "), asked.stdout
    plain = run(["ask", "What does the critic think about pricing?"], cwd=home, env=MINE)
    assert plain.stdout.startswith("🧭 General: "), plain.stdout
    chat = run(["chat"], cwd=home,
               stdin="/roles\n/meeting our pricing\nrun a board meeting on our pricing\n/help\n", env=MINE)
    assert chat.returncode == 0, chat.stderr
    assert "single-agent mode" in chat.stdout.lower(), chat.stdout
    assert "/roles" in chat.stdout and "/memory" in chat.stdout, chat.stdout  # /help was answered
    assert "@<role>" not in chat.stdout and "/meeting <topic>" not in chat.stdout, chat.stdout
    assert "General" in chat.stdout and "Finance" not in chat.stdout and "Critic" not in chat.stdout, chat.stdout
    refusals = [line for line in chat.stdout.splitlines() if MEETINGS_OFF in line]
    assert len(refusals) == 2, chat.stdout
    assert "minutes" not in chat.stdout.lower()
    meeting = run(["meeting", "our pricing"], cwd=home, env=MINE)
    assert meeting.returncode == 2 and meeting.stdout == "", meeting.stdout
    assert meeting.stderr.count("\n") == 1 and MEETINGS_OFF in meeting.stderr, meeting.stderr


def test_meetings_disabled_alone_keeps_the_board(tmp_path: Path) -> None:
    home = _home(tmp_path)
    config = home / "sabha.yaml"
    text = config.read_text(encoding="utf-8")
    assert "\nboard:\n" in text
    config.write_text(text.replace("\nboard:\n", "\nboard:\n  meetings:\n    enabled: false\n", 1), encoding="utf-8")
    chat = run(["chat"], cwd=home, stdin="@finance what is our runway?\n/meeting our pricing\n", env=MINE)
    assert chat.returncode == 0, chat.stderr
    lines = chat.stdout.strip().splitlines()
    assert lines[0].startswith("💰 Finance: "), lines
    assert MEETINGS_OFF in chat.stdout and len(lines) == 2, lines


async def test_board_disabled_on_telegram_creates_no_topics_and_the_chair_answers(
        tmp_path: Path, fake: FakeTelegramAPI, echo_model: EchoModel) -> None:
    config = write_config(tmp_path, fake, echo_model, extra=["board:", "  enabled: false"])
    sabha = SabhaProcess(config)
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "@finance what is our runway?")
        await eventually(lambda: fake.sent_to(OWNER), "the DM's answer", timeout=30)
        fake.push_text(OWNER, OWNER, "/meeting our pricing")
        await eventually(lambda: len(fake.sent_to(OWNER)) >= 2, "the /meeting answer", timeout=30)
    finally:
        await sabha.close()
    answer, meeting = fake.sent_to(OWNER)[:2]
    assert "ECHO @finance what is our runway?" in answer.text and "Finance" not in answer.text, answer.text
    (request,) = echo_model.bodies  # one model call: the chair's; none for /meeting
    tools = {t["function"]["name"] for t in request.get("tools", [])}
    assert not tools & {"consult", "convene_meeting"}, tools
    system = str(request["messages"][0]["content"])
    assert "# Your role: General" in system and "(`finance`)" not in system, system
    assert "# Working alone" in system and "# The board" not in system, system
    assert MEETINGS_OFF in meeting.text, meeting.text
    assert fake.calls_to("createForumTopic") == []


async def test_board_disabled_on_whatsapp_the_chair_answers(tmp_path: Path, fake_graph: FakeGraphAPI) -> None:
    home = _home(tmp_path, "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"',
                 "  access_token: ${WHATSAPP_ACCESS_TOKEN}", "  app_secret: ${WHATSAPP_APP_SECRET}",
                 f"  verify_token: {VERIFY_TOKEN}", f"  graph_base_url: {fake_graph.base_url}",
                 f'  allowed_numbers: ["{USER}"]', "server:", "  host: 127.0.0.1", "  port: 0")
    config = home / "sabha.yaml"
    config.write_text(_board_off(config.read_text(encoding="utf-8")), encoding="utf-8")
    env = {"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
    sabha = SabhaProcess(config, env=env)
    try:
        await sabha.start()
        url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
        async with ClientSession(timeout=ClientTimeout(total=10)) as http:
            status, _ = await post(http, url, text_notification(USER, "@finance what is our runway?"))
            assert status == 200
            await eventually(lambda: fake_graph.sent, "the answer", timeout=30)
            status, _ = await post(http, url, text_notification(USER, "/meeting our pricing"))
            assert status == 200
            await eventually(lambda: len(fake_graph.sent) >= 2, "the /meeting answer", timeout=30)
    finally:
        await sabha.close()
    answer, meeting = (s.body for s in fake_graph.sent[:2])
    assert "General" in answer and "Finance" not in answer, answer
    assert MEETINGS_OFF in meeting, meeting
