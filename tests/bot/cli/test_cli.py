"""The sabha command as a newcomer runs it: real processes, piped stdin, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SABHA = [sys.executable, "-m", "bot.cli.main"]


@pytest.fixture(autouse=True)
def _private_personal_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The personal board (used when no sabha.yaml is found) of these tests is theirs, not the machine's."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


def run(args: list[str], cwd: Path, stdin: str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"}
    full_env.update(env or {})
    return subprocess.run(SABHA + args, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=60,
                          env=full_env)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    result = run(["init", str(tmp_path / "proj")], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "proj"


def test_init_writes_config_and_workspace(home: Path) -> None:
    assert (home / "sabha.yaml").is_file()
    for rel in ("SOUL.md", "AGENTS.md", "USER.md", "board/finance.soul.md", "templates/static.md.j2",
                "rosters/sabha/cto.soul.md", "rosters/roundtable/summarizer.soul.md"):
        assert (home / "workspace" / rel).is_file(), rel


def test_piped_chat_answers_each_line_then_exits(home: Path) -> None:
    result = run(["chat"], cwd=home, stdin="hello board\n@finance what is our runway?\n/roles\n")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("🧭 General: ") and "offline model" in lines[0]
    assert lines[1].startswith("💰 Finance: ") and "runway" in lines[1]
    assert "🦉 Critic (@critic" in result.stdout
    headers = [json.loads(p.read_text(encoding="utf-8").splitlines()[0]) for p in (home / "sessions").glob("*.jsonl")]
    assert sorted(h["key"] for h in headers) == ["board:finance", "main"]
    assert all(h["type"] == "session" for h in headers)


def test_ask_critic_in_its_voice(home: Path) -> None:
    result = run(["ask", "--role", "critic", "Should we launch in Europe next month?"], cwd=home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("🦉 Critic: ")
    assert "pre-mortem" in result.stdout
    assert result.stdout.count("\n") == 1


def test_ask_unknown_role_is_a_clear_error(home: Path) -> None:
    result = run(["ask", "--role", "wizard", "hi"], cwd=home)
    assert result.returncode == 2
    assert "no role 'wizard'" in result.stderr and "finance" in result.stderr
    assert "Traceback" not in result.stderr


def test_sessions_list_show_reset(home: Path) -> None:
    run(["ask", "--role", "finance", "first question"], cwd=home)
    run(["ask", "--role", "finance", "second question"], cwd=home)
    listed = run(["sessions", "list"], cwd=home)
    assert "board:finance" in listed.stdout
    shown = run(["sessions", "show", "board:finance", "--last", "2"], cwd=home)
    assert shown.returncode == 0
    body = shown.stdout.splitlines()[1:]
    assert len(body) == 2 and "second question" in body[0] and body[1].startswith("[")
    reset = run(["sessions", "reset", "board:finance"], cwd=home)
    assert "archived" in reset.stdout
    assert "second question" not in run(["sessions", "show", "board:finance"], cwd=home).stdout
    assert "board:finance" in run(["sessions", "list", "--all"], cwd=home).stdout
    missing = run(["sessions", "show", "board:nobody"], cwd=home)
    assert missing.returncode == 2 and "no session" in missing.stderr


def test_souls_lists_versions_and_errors(home: Path) -> None:
    (home / "workspace" / "board" / "critic.soul.md").write_bytes(b"\xff\xfe")
    result = run(["souls"], cwd=home)
    assert "finance" in result.stdout and "board/finance.soul.md" in result.stdout
    assert "not UTF-8" in result.stdout
    assert "now: the shipped default" in result.stdout  # the critic falls back to the shipped soul


@pytest.mark.parametrize("cmd", [[], ["init"], ["chat"], ["ask"], ["souls"], ["sessions"], ["sessions", "show"],
                                 ["meeting"], ["meetings"], ["meetings", "show"], ["roundtable"],
                                 ["config"], ["config", "check"]])
def test_help_on_every_command(cmd: list[str], tmp_path: Path) -> None:
    result = run([*cmd, "--help"], cwd=tmp_path)
    assert result.returncode == 0 and "usage: sabha" in result.stdout


def test_version(tmp_path: Path) -> None:
    assert run(["--version"], cwd=tmp_path).stdout.startswith("sabha 0.")


def test_first_run_without_config_makes_the_personal_board(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    result = run(["ask", "hi"], cwd=tmp_path / "elsewhere")
    assert result.returncode == 0, result.stderr
    personal = tmp_path / "xdg" / "sabha"
    assert (personal / "sabha.yaml").is_file() and (personal / "workspace" / "SOUL.md").is_file()
    assert f"made your personal board at {personal}" in result.stderr
    assert list((tmp_path / "elsewhere").iterdir()) == []  # nothing in the folder it ran in


def test_meeting_offline_prints_statements_and_minutes(home: Path) -> None:
    result = run(["meeting", "Should we expand to Europe?"], cwd=home)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # stdout is a pipe here: the statements go to stderr, stdout gets only the minutes (issue 38)
    assert "[round 1] 💰 Finance:" in result.stderr and "[round 3] 🦉 Critic:" in result.stderr
    assert "[round 1]" not in out
    assert "# Board meeting: Should we expand to Europe?" in out
    assert "Ended because: completed" in out and "**Action items:**" in out
    listed = run(["meetings", "list"], cwd=home)
    assert listed.stdout.split()[:8] == ["ID", "STARTED", "ENDED", "OUTCOME", "DECISION", "COST", "ROSTER", "TOPIC"]
    meeting_id = listed.stdout.splitlines()[1].split()[0]
    assert "completed" in listed.stdout and "proposed" in listed.stdout and "Should we expand" in listed.stdout
    shown = run(["meetings", "show", meeting_id[:12], "--json"], cwd=home)
    data = json.loads(shown.stdout)
    assert data["stop_reason"] == "completed" and len(data["statements"]) == 15
    assert 3 <= len(data["decision"]["action_items"]) <= 5


def test_meeting_from_chat_prints_the_minutes(home: Path) -> None:
    result = run(["chat"], cwd=home, stdin="/meeting pricing for 2027\n")
    assert result.returncode == 0, result.stderr
    assert "Convening the board on \u201cpricing for 2027\u201d" in result.stdout
    assert "# Board meeting: pricing for 2027" in result.stdout


def test_roundtable_json_in_and_out(home: Path) -> None:
    request = {"prompt": "How can we reach AI startup CTOs who just raised funding?",
               "context": "GitHub targeting worked", "learnings": ["Developer messaging converts 2x"], "max_rounds": 2}
    result = run(["roundtable"], cwd=home, stdin=json.dumps(request))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) >= {"transcript", "summary"}
    assert "--- Round 2 ---" in data["transcript"]
    assert "ARTIST:" in data["transcript"] and "BUSINESS:" in data["transcript"] and "TECH:" in data["transcript"]
    assert 3 <= len(data["summary"]) <= 5 and all(isinstance(t, str) and t for t in data["summary"])
    path = home / "rt.json"
    path.write_text(json.dumps({"prompt": "x", "max_rounds": 1}), encoding="utf-8")
    assert json.loads(run(["roundtable", str(path)], cwd=home).stdout)["summary"]


def test_roundtable_bad_input_is_a_json_error(home: Path) -> None:
    result = run(["roundtable"], cwd=home, stdin='{"context": "no prompt"}')
    assert result.returncode == 2
    error = json.loads(result.stdout)
    assert error["error"] == "input does not match the roundtable schema"
    assert any("prompt" in d for d in error["details"])
    broken = run(["roundtable"], cwd=home, stdin="{nope")
    assert broken.returncode == 2 and json.loads(broken.stdout)["error"] == "input is not valid JSON"


def test_sessions_reset_of_a_bad_key_is_a_clear_error(home: Path) -> None:
    for key in ("foo", "board:nobody"):
        result = run(["sessions", "reset", key], cwd=home)
        assert result.returncode == 2, (key, result.stderr)
        assert "Traceback" not in result.stderr and "sessions list" in result.stderr
    assert "board:nobody" not in run(["sessions", "list", "--all"], cwd=home).stdout


def test_undecodable_input_bytes_do_not_crash_chat(home: Path) -> None:
    env = {**os.environ, "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8:surrogateescape"}
    result = subprocess.run([*SABHA, "chat"], cwd=home, input=b"bad \xff\xfe bytes\nafter\n", capture_output=True,
                            timeout=60, env=env)
    assert result.returncode == 0, result.stderr.decode()
    out = result.stdout.decode("utf-8")
    assert out.count("🧭 General: ") == 2 and '"after"' in out


def test_chat_goes_on_after_a_failed_message(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    import io

    from board.app import Board
    from bot.cli.main import main

    original = Board.handle

    async def flaky(self: Board, envelope, **given):  # type: ignore[no-untyped-def]
        if envelope.text == "boom":
            raise OSError("disk full")
        return await original(self, envelope, **given)

    monkeypatch.setattr(Board, "handle", flaky)
    monkeypatch.chdir(home)
    monkeypatch.setattr("sys.stdin", io.StringIO("boom\nstill here?\n"))
    assert main(["chat"]) == 0
    captured = capsys.readouterr()
    assert "could not be answered" in captured.err and "disk full" in caplog.text
    assert "Traceback" not in captured.err
    assert captured.out.startswith("🧭 General: ") and '"still here?"' in captured.out


def test_output_into_a_closed_pipe_is_quiet(home: Path) -> None:
    run(["ask", "-"], cwd=home, stdin="x" * 200_000)  # a transcript bigger than a pipe's buffer
    env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"}
    proc = subprocess.Popen([*SABHA, "sessions", "show", "main"], cwd=home, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()  # like `| head -c 10`
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_a_role_named_in_a_plain_sentence_answers(home: Path) -> None:
    """Seed 003: "a message mentioning a role goes to that agent", without @ or --role."""
    mine = {"PYTHONPATH": str(Path(__file__).resolve().parents[3])}  # this checkout's code, not an installed one
    asked = run(["ask", "What does the critic think about pricing?"], cwd=home, env=mine)
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.startswith("🦉 Critic: ")
    why = run(["ask", "--why", "What does the critic think about pricing?"], cwd=home, env=mine)
    assert "route: critic (addressed in plain words: critic: 'critic' asked for an opinion" in why.stderr, why.stderr
    chat = run(["chat"], cwd=home,
               stdin="Que pense le critique de notre prix ?\nOur research shows users churn.\n/help\n",
               env=mine)
    assert chat.returncode == 0, chat.stderr
    lines = chat.stdout.strip().splitlines()
    assert lines[0].startswith("🦉 Critic: ") and lines[1].startswith("🧭 General: "), lines
    assert "a sentence naming a role  that role, e.g. what does the critic think of this?" in chat.stdout


def test_several_roles_named_in_a_sentence_answer_in_order(home: Path) -> None:
    """The first role named answers first, then each other one, as with ``@finance @critic``."""
    mine = {"PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    result = run(["ask", "Ask the CFO and the critic whether to hire now."], cwd=home, env=mine)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("💰 Finance: ")
    assert "\n\n🦉 Critic: " in result.stdout
