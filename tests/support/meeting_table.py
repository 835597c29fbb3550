"""A scripted board behind the OpenAI-compatible fake, for the owner-at-the-table tests through a real
``sabha run``: rounds the test holds (a message written "during round N" is then written during round N),
a finance member that answers by name when a request asks it to, and reads of the daemon's state db.

:class:`TableModel` answers what each request asks: the chair's framing (a question per member, "What do you
say, <role>?"), a stance, the decision, the challenger's review, a member's statement of round N (held while
:meth:`TableModel.hold` holds round N), and anything else (a chat turn) with :data:`CHAT_ANSWER`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from tests.support.board import valid_decision
from tests.support.fakes.openai_api import FakeOpenAI

__all__ = ["ANSWER", "CHAT_ANSWER", "SPECIALISTS", "TableModel", "db_rows", "llm_lines"]

SPECIALISTS = ["research", "content", "finance", "strategy", "critic"]
STANCE = json.dumps({"position": "conditional", "confidence": 0.6, "assumption": "the numbers hold up"})
#: finance's statement when a request tells it someone addressed it by name
ANSWER = "The owner asked me to redo it with 20% churn: the runway is nine months, not fourteen."
CHAT_ANSWER = "The chair answers you as usual."
_SCHEMA = "matches this JSON schema:"
_ROUND = re.compile(r"Round (\d+) of at most (\d+)")
_ASKED = re.compile(r"What do you say, (\w+)\?")


def llm_lines(model: FakeOpenAI) -> list[str]:
    """The ``llm:`` section for a daemon on ``model`` (slow held rounds: generous timeouts)."""
    return ["llm:", "  model: openai:board", "  timeout_s: 600", "  retry: {retries: 0}", "  providers:",
            "    openai:", "      api_key: test-key", f"      base_url: {model.base_url}", "      stream: false"]


def _user(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    return next((str(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")


class TableModel(FakeOpenAI):
    """See the module docstring. ``statements[n]``: (role, the request's text) of each round-n statement."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.held: dict[int, asyncio.Event] = {}
        self.reached: dict[int, asyncio.Event] = {}
        self.statements: dict[int, list[tuple[str, str]]] = {}
        self.chats: list[str] = []

    def hold(self, round_no: int) -> None:
        """Round ``round_no``'s statements wait until :meth:`release`."""
        self.held[round_no] = asyncio.Event()
        self.reached[round_no] = asyncio.Event()

    def release(self, round_no: int) -> None:
        """Let round ``round_no``'s statements be answered."""
        self.held[round_no].set()

    async def reach(self, round_no: int, timeout: float = 240.0) -> None:
        """Until every member's statement of round ``round_no`` was asked (a bound for what never comes)."""
        await asyncio.wait_for(self.reached[round_no].wait(), timeout)

    def asked(self, round_no: int) -> dict[str, str]:
        """role -> what it was asked in round ``round_no``."""
        return dict(self.statements.get(round_no, []))

    async def next_reply(self) -> Any:
        user = _user(self.requests[-1].body or {})  # read before any wait: requests[-1] is this request now
        if _SCHEMA in user:
            schema = json.loads(user.split(_SCHEMA, 1)[1].strip().splitlines()[0])
            props = schema.get("properties", {})
            if "questions" in props:
                return self.text_reply(json.dumps({"agenda": "1. Demand\n2. Cost",
                                                   "questions": {r: f"What do you say, {r}?" for r in SPECIALISTS}}))
            if "position" in props:
                return self.text_reply(STANCE)
            return self.text_reply(valid_decision(["general", *SPECIALISTS]))
        if "draft decision" in user:
            return self.text_reply("NO OBJECTION")
        found, role = _ROUND.search(user), _ASKED.search(user)
        if found is None or role is None:
            self.chats.append(user)
            return self.text_reply(CHAT_ANSWER)
        number = int(found.group(1))
        self.statements.setdefault(number, []).append((role.group(1), user))
        if number in self.held:
            if len(self.statements[number]) >= len(SPECIALISTS):
                self.reached[number].set()
            await self.held[number].wait()
        if role.group(1) == "finance" and "addressed you by name" in user:
            return self.text_reply(f"{ANSWER}\nSTANCE: {STANCE}")
        return self.text_reply(f"{role.group(1)} in round {number}: nothing new.\nSTANCE: {STANCE}")


def db_rows(root: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """Rows of the daemon's state db under ``root`` (read while it runs: WAL)."""
    with contextlib.closing(sqlite3.connect(root / "sessions" / "sabha.db")) as db:
        return list(db.execute(sql, args).fetchall())
