"""The chair's ``roundtable`` tool through a real ``sabha run``: the owner writes to the board on the fake Telegram
Bot API; the chair (general) is a scripted model behind the fake OpenAI API that calls ``roundtable``; the
roundtable roster's souls speak on the offline model. The roundtable is held to its end in the chair's turn, its
summary and tasks come back to the chair as the tool's result (quoted data), the chair's answer reaches the owner,
and the tasks are action items with owners in ``/actions``; every debater's call is in the ledger under the
roundtable's id."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER

QUESTION = "We are stuck on reaching AI startup CTOs"
ANSWER = "The roundtable came back: lead with a demo; the tasks are in /actions."


def rows(root: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(root / "sessions" / "sabha.db", timeout=30)) as db:
        return list(db.execute(sql, params).fetchall())


def on_the_offline_model(workspace: Path) -> None:
    """The roundtable roster's souls speak on the offline model (front matter ``model: offline``)."""
    for soul in (workspace / "rosters" / "roundtable").glob("*.soul.md"):
        text = soul.read_text(encoding="utf-8")
        assert text.startswith("---\n")
        soul.write_text("---\nmodel: offline\n" + text[4:], encoding="utf-8")


async def test_the_chair_calls_a_roundtable_in_a_real_daemon(tmp_path: Path, fake: FakeTelegramAPI,
                                                             fake_openai: FakeOpenAI) -> None:
    config = write_config(tmp_path, fake, fake_openai, stream=False)  # type: ignore[arg-type]
    on_the_offline_model(tmp_path / "workspace")
    fake_openai.script_tool_call("roundtable", {"question": QUESTION})
    fake_openai.script_text(ANSWER)
    sabha = SabhaProcess(config)
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, QUESTION)
        await fake.wait_until(lambda: any(ANSWER in m.text for m in fake.sent_messages), "the chair's answer",
                              timeout=300)
        # the tool's result, as the chair got it: the summary and the tasks with their action items, quoted
        [after] = [r.json for r in fake_openai.requests if any(m.get("role") == "tool" for m in r.json["messages"])]
        result = json.loads(next(m["content"] for m in after["messages"] if m.get("role") == "tool"))
        assert result["ok"], result
        roundtable = result["result"]["roundtable"]
        tasks = result["result"]["tasks"]
        assert 3 <= len(tasks) <= 5 and json.loads(result["result"]["summary"])
        stored = rows(tmp_path, "SELECT id, task, owner FROM action_items WHERE meeting_id = ? ORDER BY position",
                      roundtable)
        assert [(t["action_item"], json.loads(t["task"]), json.loads(t["owner"])) for t in tasks] == stored
        assert rows(tmp_path, "SELECT roster, chair, status FROM meetings WHERE id = ?", roundtable) == [
            ("roundtable", "summarizer", "ended")]
        roles = {str(r[0]) for r in rows(tmp_path, "SELECT role FROM llm_calls WHERE meeting_id = ?", roundtable)}
        assert {"artist", "business", "tech", "summarizer"} <= roles
        # the debate was quiet: no meeting topic or statement at Telegram
        assert not [t for t in fake.created_topics if t["name"].startswith("🏛")]
        # /actions lists the roundtable's tasks with who owes each
        fake.push_text(OWNER, OWNER, "/actions")
        await fake.wait_until(lambda: any(f"#{stored[0][0]} " in m.text for m in fake.sent_messages), "/actions",
                              timeout=120)
        listed = next(m.text for m in reversed(fake.sent_messages) if f"#{stored[0][0]} " in m.text)
        for number, task, _owner in stored:
            [line] = [line for line in listed.splitlines() if line.startswith(f"#{number} ")]
            assert str(task)[:30] in line and "owes it" in line
    finally:
        await sabha.close()
