"""The terminal speaks as itself (issue 23): what a new user sees in a real ``sabha chat`` on a
pseudo-terminal (pexpect) and in the real CLI as a subprocess.

System output (/help, /roles, /status, /souls, errors) is Sabha's, not an advisor's; /help fits
the terminal; long answers wrap at word boundaries; a meeting prints its statements once and then
its minutes rendered for a terminal; the offline notice is said once per chat; ``sessions show``,
``actions``, ``meetings list`` and ``config check`` say things the CLI way.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from wcwidth import wcswidth

from board.app import Board
from board.envelope import Envelope
from board.llm.offline import OFFLINE_NOTICE
from tests.bot.cli.test_chat_tty import CTRL_D, PROMPT, chat_env, finish, screen

COLUMNS = 160
SABHA = [sys.executable, "-m", "bot.cli.main"]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "board"
    code = pexpect.run(f"{sys.executable} -m bot.cli.main init {folder}", env=chat_env(tmp_path), timeout=60,
                       withexitstatus=True)[1]
    assert code == 0
    return folder


def spawn_narrow(home: Path, tmp_path: Path, *args: str) -> pexpect.spawn:
    """``sabha <args>`` on a terminal 160 columns wide (as the issue tried it)."""
    child = pexpect.spawn(sys.executable, ["-m", "bot.cli.main", *args], cwd=str(home), env=chat_env(tmp_path),
                          encoding="utf-8", timeout=60, dimensions=(50, COLUMNS))
    import io

    child.logfile_read = io.StringIO()
    return child


def cli(args: list[str], home: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SABHA, *args], cwd=home, env=chat_env(tmp_path), capture_output=True, text=True,
                          timeout=120)


def say(child: pexpect.spawn, text: str, answer: str) -> None:
    """Type ``text``, wait for ``answer`` (keys typed while an answer is awaited are dropped), then the prompt."""
    child.send(text + "\r")
    child.expect(answer)
    child.expect(PROMPT)


def too_wide(child: pexpect.spawn) -> list[str]:
    """Lines of what ``child`` printed wider than the terminal. A carriage return or a cursor movement
    starts a line again (the prompt and the waiting line are drawn over, and erased with spaces);
    colours do not."""
    raw = re.sub(r"\x1b\[[0-9;?]*m|\x1b[()][0-9A-Za-z]", "", child.logfile_read.getvalue())
    raw = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "\n", raw)
    return [line.rstrip() for line in re.split(r"[\r\n]", raw) if wcswidth(line.rstrip()) > COLUMNS]


# -- system output in Sabha's own voice; /help for the terminal; readable /souls ----------------


def test_system_output_is_sabhas_not_an_advisors(home: Path, tmp_path: Path) -> None:
    child = spawn_narrow(home, tmp_path, "chat", "--role", "critic")
    child.expect(PROMPT)
    for line, answer in (("/roles", "The board:"), ("/help", "Talk to the board"), ("/status", "terminal chat"),
                         ("/souls", "SOUL.md"), ("/nosuch", "Unknown command")):
        say(child, line, answer)
    child.send(CTRL_D)
    child.expect("Goodbye.")
    output = screen(child)
    assert finish(child) == 0
    assert "The board:" in output and "Unknown command /nosuch" in output and "terminal chat" in output
    for said in ("The board:", "Talk to the board", "Unknown command", "Sabha ", "general"):
        assert f"Critic: {said}" not in output, output  # the critic does not speak for the system
        assert f"General: {said}" not in output, output
    assert "this topic" not in output  # the terminal has no topics
    assert "--role" in output  # ... it has --role, and /help says so
    assert "/quit" in output
    assert not re.search(r"\bv[0-9a-f]{12}\b", output), output  # not `general: vdfcaa0aad47b`
    assert re.search(r"general: 🧭 General, SOUL\.md, version [0-9a-f]{12}", output), output


async def test_help_fits_each_channel(board: Board) -> None:
    """The board is channel-agnostic: a channel that said nothing gets the chair's wording (no topics);
    each channel that describes itself gets its own first rows."""
    from board.commands.about import TOPIC_ADDRESSING, Addressing

    def envelope(channel: str) -> Envelope:
        return Envelope(channel=channel, text="/help", sender="1", chat_id="c", is_owner=True)

    plain = (await board.handle(envelope("somewhere"))).text
    assert "this topic" not in plain and "the chair (general) answers" in plain
    board.parts.commands.describe_channel("telegram", TOPIC_ADDRESSING)
    board.parts.commands.describe_channel("console", Addressing((("<message>", "the role you started with answers"),)))
    assert "this topic's role" in (await board.handle(envelope("telegram"))).text
    console = (await board.handle(envelope("console"))).text
    assert "the role you started with answers" in console and "this topic" not in console
    assert "/roles" in console and "/meeting" in console  # the commands follow on every channel


# -- wrapping; the offline notice once ---------------------------------------------------------


def test_answers_wrap_at_word_boundaries_and_the_offline_notice_is_said_once(home: Path, tmp_path: Path) -> None:
    child = spawn_narrow(home, tmp_path, "chat")
    child.expect(PROMPT)
    for line, answer in (("hello board, what should we do about pricing in Europe next year?", "General:"),
                         ("and then?", "General:"), ("@finance what is our runway?", "Finance:")):
        say(child, line, answer)
    child.send(CTRL_D)
    child.expect("Goodbye.")
    output = screen(child)
    assert finish(child) == 0
    assert not too_wide(child), too_wide(child)
    answers = [json.loads(line)["text"] for path in sorted((home / "sessions").glob("*.jsonl"))
               for line in path.read_text(encoding="utf-8").splitlines()[1:]
               if json.loads(line).get("role") == "assistant"]
    words = set(output.split())
    cut = [w for a in answers for w in a.split() if w not in words]
    assert not cut, cut  # every word of every answer is on screen whole
    assert " ".join(output.split()).count(OFFLINE_NOTICE) == 1, output  # wrapped over lines, said once
    assert len(answers) == 3 and all("offline model" in a for a in answers)  # still labelled


def test_ask_wraps_at_word_boundaries_on_a_terminal(home: Path, tmp_path: Path) -> None:
    child = spawn_narrow(home, tmp_path, "ask", "--role", "critic", "Should we launch in Europe next month?")
    child.expect(pexpect.EOF)
    output = screen(child)
    child.close()
    assert child.exitstatus == 0, output
    assert output.startswith("🦉 Critic: ") and "pre-mortem" in output
    assert not too_wide(child), too_wide(child)
    assert len(output.strip().splitlines()) > 1  # the answer is longer than a line: it was wrapped, not cut


def test_piped_chat_says_the_offline_notice_once_and_ask_once_per_run(home: Path, tmp_path: Path) -> None:
    piped = subprocess.run([*SABHA, "chat"], cwd=home, env=chat_env(tmp_path), capture_output=True, text=True,
                           timeout=120, input="hello\nand then?\n@finance runway?\n")
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.count(OFFLINE_NOTICE) == 1, piped.stdout
    assert piped.stdout.count("offline model") == 3
    for _ in range(2):
        asked = cli(["ask", "hello again"], home, tmp_path)
        assert asked.returncode == 0 and asked.stdout.count(OFFLINE_NOTICE) == 1, asked.stdout


# -- a meeting in the terminal -------------------------------------------------------------------


def test_meeting_minutes_are_rendered_once_after_the_statements(home: Path, tmp_path: Path) -> None:
    child = spawn_narrow(home, tmp_path, "meeting", "Should we expand to Europe?")
    child.expect(pexpect.EOF, timeout=120)
    output = screen(child)
    child.close()
    assert child.exitstatus == 0, output
    assert "**" not in output and "\n## " not in output and "\n# " not in output, output  # no raw Markdown
    assert "said once here" not in output
    assert len(re.findall(r"\[round \d\] 💰 Finance", output)) == 3, output  # finance's three statements, not six
    assert output.count("offline model: no LLM was called") == 1
    assert "Recommendation" in output and "Action items" in output and "Dissent" in output
    assert not too_wide(child), too_wide(child)
    assert len(output.encode()) < 15_000, len(output.encode())  # 19.8 KB when the minutes repeated everything
    meeting_id = re.search(r"m-\d{8}-\d{6}-[0-9a-f]{4}", output)
    assert meeting_id
    shown = spawn_narrow(home, tmp_path, "meetings", "show", meeting_id.group(0))
    shown.expect(pexpect.EOF)
    minutes = screen(shown)
    shown.close()
    assert "Round 1" in minutes and "I think in numbers" in minutes  # shown later, the minutes are whole ...
    assert "**" not in minutes and "\n## " not in minutes  # ... and rendered


# -- the CLI commands ------------------------------------------------------------------------------


@pytest.fixture
def met(home: Path, tmp_path: Path) -> Path:
    """A board that held one offline meeting."""
    assert cli(["meeting", "Should we expand to Europe?"], home, tmp_path).returncode == 0
    return home


def test_actions_and_meetings_list_speak_the_cli(met: Path, tmp_path: Path) -> None:
    actions = cli(["actions"], met, tmp_path)
    assert actions.returncode == 0
    assert "/done" not in actions.stdout and "sabha actions done" in actions.stdout, actions.stdout
    listed = cli(["meetings", "list"], met, tmp_path).stdout.splitlines()
    header = listed[0].split()
    assert header[:4] == ["ID", "STARTED", "ENDED", "OUTCOME"], listed
    ended = listed[1][listed[0].index("ENDED"):listed[0].index("OUTCOME")].strip()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", ended), listed
    assert "completed" in listed[1][listed[0].index("OUTCOME"):]


def test_sessions_show_after_a_reset_and_a_meeting_record(met: Path, tmp_path: Path) -> None:
    shown = cli(["sessions", "show", "critic"], met, tmp_path).stdout
    meeting = re.search(r"m-\d{8}-\d{6}-[0-9a-f]{4}", shown)
    assert meeting and shown.count(meeting.group(0)) == 1, shown  # the meeting and its title once, not twice
    assert cli(["sessions", "reset", "critic"], met, tmp_path).returncode == 0
    after = cli(["sessions", "show", "critic"], met, tmp_path)
    assert after.returncode == 0
    lines = after.stdout.strip().splitlines()
    assert len(lines) > 1 and "no messages yet" in after.stdout, after.stdout
    archived = re.search(r"sabha sessions show ([^`\s]+)", after.stdout)
    assert archived, after.stdout
    old = cli(["sessions", "show", archived.group(1)], met, tmp_path)
    assert old.returncode == 0 and "Should we expand to Europe?" in old.stdout


def test_config_check_gives_its_verdict_first(home: Path, tmp_path: Path) -> None:
    check = cli(["config", "check"], home, tmp_path)
    assert check.returncode == 0, check.stderr
    lines = check.stdout.strip().splitlines()
    assert lines[0].startswith("config OK"), lines[:3]
    assert len(lines) <= 15, check.stdout
    full = cli(["config", "check", "--verbose"], home, tmp_path)
    assert full.returncode == 0 and len(full.stdout.splitlines()) > 40
    assert full.stdout.splitlines()[0].startswith("config OK")
