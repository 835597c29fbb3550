"""Tool results cited as evidence, through the real daemon and the real terminal (issue 39).

A real ``sabha run`` on the fake Telegram API with a scripted model (an OpenAI-compatible fake whose answers
depend on what it is asked) and the real ``mcp-server-git`` (PyPI, stdio, through the SDK) on a throwaway
repository, given to research and finance: the owner's ``/meeting`` about the repository; each of the two
members' scripted statement calls ``git__git_log``; research cites ``[git.git_log]`` with the commit message
the server returned, finance uses it uncited (the minutes say so); the minutes the chat receives, ``sabha
meetings show`` and the meeting's web page list each result under Evidence (server.tool, arguments, when,
who); ``sabha cost --by tool`` shows ``git.git_log``. Past ``board.meetings.max_tool_calls`` a call is refused
and the model told.

The offline model with the real ``mcp-server-time`` given to the chair: ``sabha ask "what time is it in
UTC?"`` answers with the time server's result, cited ``[time.get_current_time]``.

On CI a missing server fails these tests (:func:`tests.support.ci.missing_part`).
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from aiohttp import ClientSession

from board.workspace.paths import copy_default_workspace
from bot.web.auth import COOKIE
from tests.support.board import valid_decision
from tests.support.browser import web_link
from tests.support.cli import init_board, run_sabha
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.mcp import git_repo, python_server
from tests.support.telegram import OWNER, TOKEN, eventually

SPECIALISTS = ["research", "content", "finance", "strategy", "critic"]
COMMIT = "Raise the Pro plan to 20 EUR a month"
STANCE = json.dumps({"position": "support", "confidence": 0.7, "assumption": "the repository says what shipped"})
_SCHEMA = "matches this JSON schema:"


class BoardModel(FakeOpenAI):
    """A scripted board: it answers what each request asks (the chair's framing, a stance, the decision,
    the challenger's review, a member's statement); a member offered ``git__git_log`` calls it on ``repo``
    first, then states what the log says, citing ``[git.git_log]``."""

    repo: Path
    read_back: list[str]
    page: str  # the meeting's web page once it ended

    async def next_reply(self) -> Any:
        body = self.requests[-1].body or {}
        messages = body.get("messages") or []
        user = next((str(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
        if _SCHEMA in user:
            schema = json.loads(user.split(_SCHEMA, 1)[1].strip().splitlines()[0])
            return self.text_reply(self._structured(schema))
        if "draft decision" in user:
            return self.text_reply("NO OBJECTION")
        offered = {t["function"]["name"] for t in body.get("tools") or []}
        results = [str(m.get("content")) for m in messages if m.get("role") == "tool"]
        if "git__git_log" in offered and not results:
            return self.tool_calls_reply([("git__git_log", {"repo_path": str(self.repo), "max_count": 1})])
        if results:
            said = re.search(r"Message: ([^\"\\\n]+)", results[-1])
            self.read_back.append(results[-1])
            found = said.group(1).strip() if said else "(nothing)"
            if "tell you, finance?" in user:  # finance uses the log without citing it
                return self.text_reply(f"The price change shipped.\nSTANCE: {STANCE}")
            return self.text_reply(f"The last commit is \u201c{found}\u201d [git.git_log], so the price change "
                                   f"shipped.\nSTANCE: {STANCE}")
        return self.text_reply(f"No objection from my side.\nSTANCE: {STANCE}")

    @staticmethod
    def _structured(schema: dict[str, Any]) -> str:
        props = schema.get("properties", {})
        if "questions" in props:
            return json.dumps({"agenda": "1. What shipped\n2. What it means",
                               "questions": {r: f"What does the repository tell you, {r}?" for r in SPECIALISTS}})
        if "position" in props:
            return STANCE
        return valid_decision(["general", *SPECIALISTS])


def _meeting(root: Path) -> tuple[str, str] | None:
    with contextlib.closing(sqlite3.connect(root / "sessions" / "sabha.db")) as db:
        row = db.execute("SELECT id, minutes FROM meetings WHERE status = 'ended'").fetchone()
    return (str(row[0]), str(row[1])) if row else None


def _minutes_message(fake: FakeTelegramAPI) -> str | None:
    return next((m.text for m in fake.sent_to(OWNER) if "Evidence" in m.text and "Decision" in m.text), None)


def _sabha(root: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(Path(__file__).resolve().parents[2]), TELEGRAM_BOT_TOKEN=TOKEN)
    done = subprocess.run([sys.executable, "-m", "bot.cli", *args, "--config", str(root / "sabha.yaml")],
                          capture_output=True, text=True, env=env, cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


#: The Evidence section of ``minutes.md.j2`` before issue 39: the files only.
FILES_ONLY = """{% if evidence | default([]) -%}
## Evidence
{% for e in evidence -%}
- {{ e.summary }}{% if e.problem %}: could not be read ({{ e.problem }}){% endif %}
{% endfor %}
{% endif -%}
"""


def older_template(root: Path) -> None:
    """The workspace's ``minutes.md.j2`` as a board made before issue 39 has it: no tool results in it."""
    copy_default_workspace(root / "workspace")
    template = root / "workspace" / "templates" / "minutes.md.j2"
    text = template.read_text(encoding="utf-8")
    section = re.search(r"\{% if evidence \| default\(\[\]\) or tool_evidence.*?\{% endif -%\}\n", text, re.DOTALL)
    assert section is not None, "the shipped template's Evidence section changed: adapt this test"
    template.write_text(text[:section.start()] + FILES_ONLY + text[section.end():], encoding="utf-8")


async def hold_meeting(tmp_path: Path, fake: FakeTelegramAPI, *board: str) -> BoardModel:
    """``sabha run`` with git given to research and finance (``board``: more lines of board.meetings); the
    owner's /meeting about the repository, until its minutes reach the owner's chat; the daemon stopped."""
    repo = git_repo(tmp_path / "repo", COMMIT)
    extra = ["board:", "  meetings:", "    max_turns_per_agent: 1", *board, "  agents:",
             "    research: {tools: ['mcp:git']}", "    finance: {tools: ['mcp:git']}",
             "mcp:", "  servers:", "    git:", f"      command: {python_server('mcp-server-git')}",
             f"      args: [--repository, {repo}]"]
    async with BoardModel() as model:
        model.repo, model.read_back = repo, []
        sabha = SabhaProcess(write_config(tmp_path, fake, model, extra=extra, stream=False),  # type: ignore[arg-type]
                             env={"TELEGRAM_BOT_TOKEN": TOKEN})
        try:
            await sabha.start()
            fake.push_text(OWNER, OWNER, f"/meeting What did we ship last in {repo}?")
            await eventually(lambda: _minutes_message(fake), "the minutes in the owner's chat", timeout=180)
            model.page = await meeting_page(sabha, tmp_path)
        finally:
            await sabha.close()
    return model


async def meeting_page(sabha: SabhaProcess, root: Path) -> str:
    """The ended meeting's page on the owner's web pages, signed in with a link from ``sabha web link``."""
    ended = _meeting(root)
    assert ended is not None and sabha.port is not None
    token = web_link(root / "sabha.yaml").split("token=", 1)[1]
    base = f"http://127.0.0.1:{sabha.port}"
    async with ClientSession() as http:
        async with http.post(f"{base}/ui/login", data={"token": token}, allow_redirects=False) as resp:
            assert resp.status == 303, await resp.text()
            cookie = re.search(rf"{COOKIE}=([^;]+)", resp.headers["Set-Cookie"])
        assert cookie is not None
        headers = {"Accept": "text/html", "Cookie": f"{COOKIE}={cookie.group(1)}"}
        async with http.get(f"{base}/ui/meetings/{ended[0]}", headers=headers) as resp:
            assert resp.status == 200
            return await resp.text()


async def test_a_meeting_cites_the_git_servers_log_and_its_minutes_list_it_as_evidence(
        tmp_path: Path, fake: FakeTelegramAPI) -> None:
    model = await hold_meeting(tmp_path, fake)
    repo = model.repo
    assert any(COMMIT in r for r in model.read_back), model.read_back  # the server's own log reached the model
    posted = _minutes_message(fake)
    assert posted is not None
    ended = _meeting(tmp_path)
    assert ended is not None
    meeting_id, stored = ended
    for minutes in (posted, stored, _sabha(tmp_path, "meetings", "show", meeting_id)):
        evidence = minutes.split("Evidence", 1)[1].split("Round 1", 1)[0]
        lines = [ln for ln in evidence.splitlines() if "[git.git_log]" in ln]
        assert len(lines) == 2, minutes  # research's and finance's call, one line each
        assert any(ln.endswith("used by Research (round 1)") for ln in lines), lines  # cited in its statement
        assert any(ln.endswith("used by Finance (round 1); not cited in the statement") for ln in lines), lines
        assert all(str(repo) in ln and '"max_count": 1' in ln and " UTC" in ln for ln in lines), lines
        assert f"\u201c{COMMIT}\u201d [git.git_log]" in minutes  # the statement keeps its citation
    page = html.unescape(re.sub(r"<[^>]+>", "", model.page))  # the web meeting page's minutes, as text
    shown = page.split("Evidence", 1)[1].split("Round 1", 1)[0]
    assert shown.count("[git.git_log]") == 2 and "used by Research (round 1)" in shown, shown
    assert "used by Finance (round 1); not cited in the statement" in shown, shown
    with contextlib.closing(sqlite3.connect(tmp_path / "sessions" / "sabha.db")) as db:
        kept = db.execute("SELECT role, data FROM meeting_events WHERE kind = 'evidence' ORDER BY id").fetchall()
        calls = db.execute("SELECT server, name, role, ok FROM tool_calls ORDER BY id").fetchall()
    assert sorted(r for r, _ in kept) == ["finance", "research"]
    assert [(r, json.loads(d)["label"], json.loads(d)["cited"]) for r, d in sorted(kept)] == [
        ("finance", "git.git_log", False), ("research", "git.git_log", True)]
    assert all(f"Message: {COMMIT}" in json.loads(d)["excerpt"] for _, d in kept), kept  # the result, read back
    assert sorted(calls) == [("git", "git__git_log", "finance", 1), ("git", "git__git_log", "research", 1)]
    assert "best effort" not in stored
    report = _sabha(tmp_path, "cost", "--by", "tool", "--since", "all")
    row = next(ln for ln in report.splitlines() if ln.startswith("git.git_log"))
    assert row.split()[1:4] == ["git", "2", "0"], report  # server, calls, failed
    only = json.loads(_sabha(tmp_path, "cost", "--by", "tool", "--role", "research", "--json"))
    assert [(r["label"], r["server"], r["calls"]) for r in only["rows"]] == [("git.git_log", "git", 1)]


async def test_the_offline_model_answers_what_time_it_is_with_the_time_servers_result(tmp_path: Path) -> None:
    folder, env = await init_board(tmp_path)
    config = folder / "sabha.yaml"
    text = config.read_text(encoding="utf-8")
    board = re.search(r"^board:\n(?:  .*\n)*", text, re.MULTILINE)  # sabha init's board section: the chair's tools
    assert board is not None and not re.search(r"^mcp:", text, re.MULTILINE), text
    text = text[:board.end()] + "  agents:\n    general: {tools: ['mcp:time']}\n" + text[board.end():]
    config.write_text(text + "\n".join([
        "", "mcp:", "  servers:", "    time:", f"      command: {python_server('mcp-server-time')}",
        "      args: [--local-timezone, UTC]", ""]), encoding="utf-8")
    out, err = await run_sabha(folder, env, "ask", "what time is it in UTC?")
    assert "[time.get_current_time]" in out, (out, err)
    assert '"timezone": "UTC"' in out and '"datetime": "' in out, out  # the time server's own result
    assert "offline" in out
    report, _ = await run_sabha(folder, env, "cost", "--by", "tool")
    assert re.search(r"^time\.get_current_time\s+time\s+1\s+0\b", report, re.MULTILINE), report


async def test_past_the_meetings_tool_call_cap_a_call_is_refused_and_the_model_told(
        tmp_path: Path, fake: FakeTelegramAPI) -> None:
    """Also with a workspace's older minutes template, which lists no tool results: they are appended."""
    older_template(tmp_path)
    model = await hold_meeting(tmp_path, fake, "    max_tool_calls: 1")
    assert sum(COMMIT in r for r in model.read_back) == 1, model.read_back  # one call ran
    refused = [r for r in model.read_back if COMMIT not in r]
    assert len(refused) == 1 and "all 1 of its tool calls" in refused[0] and "max_tool_calls" in refused[0]
    ended = _meeting(tmp_path)
    assert ended is not None
    evidence = ended[1].split("## Evidence", 1)[1]  # appended after the decision: the template wrote none
    assert "## Decision" in ended[1].split("## Evidence", 1)[0], ended[1]
    assert evidence.count("[git.git_log]") == 1 and "used by " in evidence, ended[1]  # only the result used
    with contextlib.closing(sqlite3.connect(tmp_path / "sessions" / "sabha.db")) as db:
        calls = db.execute("SELECT server, ok FROM tool_calls ORDER BY ok").fetchall()
    assert calls == [("git", 0), ("git", 1)]  # the refused call is in the ledger too, as a failure
