"""A history that falls due for compaction is summarised right after the answer that made it due (issue 44), through
a real ``sabha run``: Telegram polling the fake Bot API, the echo model, ``board.history_messages: 4``.

Before, the summary was asked at the start of the next turn: that turn's answer waited for two model calls, and under
a busy intake held its place under the turn cap for both (``benchmarks/webhook.py``: 1,100-1,200 model calls for
1,000 turns in its later rounds). Now the intake asks the board for it once the answer is delivered, in the
conversation's lane without a place under the cap: the summary is asked before the next message even exists, and the
next turn asks the model once, with the summary in its prompt."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER, eventually

SUMMARY_ASK = "You keep the running memory of this conversation"


def last(body: dict[str, Any]) -> str:
    return str(body["messages"][-1].get("content"))


def summaries(model: EchoModel) -> list[dict[str, Any]]:
    """The summaries asked (the ask is their last message; a turn after one has it in its system prompt)."""
    return [b for b in model.bodies if last(b).startswith(SUMMARY_ASK)]


def turns_for(model: EchoModel, marker: str) -> list[dict[str, Any]]:
    """The model requests that answered the message ``marker`` (its text is their last message)."""
    return [b for b in model.bodies if re.match(rf"{marker}\b", last(b))]


async def test_a_summary_due_after_an_answer_is_asked_before_the_next_message_and_that_turn_asks_once(
        tmp_path: Path, fake: FakeTelegramAPI) -> None:
    async with EchoModel(latency=0.05) as model:
        config = write_config(tmp_path, fake, model, extra=["board:", "  history_messages: 4"])
        daemon = SabhaProcess(config)
        try:
            await daemon.start()

            async def ask(n: int) -> None:
                fake.push_update(fake.build_text_update(OWNER, OWNER, f"Q{n} the Pune lease and the hiring plan",
                                                        is_forum=False, chat_type="private"))
                await eventually(lambda: any(f"ECHO Q{n}" in m.text for m in fake.sent_messages), f"the answer to Q{n}")

            await ask(1)
            await ask(2)  # 4 messages in view: the cap, not over it
            assert summaries(model) == []
            await ask(3)  # 6 in view: due for the next turn
            await eventually(lambda: summaries(model), "the summary asked after Q3's answer, with no Q4 sent yet",
                             timeout=120)
            assert [len(turns_for(model, f"Q{n}")) for n in (1, 2, 3)] == [1, 1, 1]
            await ask(4)
            assert len(turns_for(model, "Q4")) == 1, "Q4's turn asked the model once"
            assert len(summaries(model)) == 1, "and no summary inside it"
            [q4] = turns_for(model, "Q4")
            system = " ".join(str(m.get("content")) for m in q4["messages"] if m.get("role") == "system")
            assert f"ECHO {SUMMARY_ASK}" in system, "Q4 was answered with the summary made ahead of it"
            assert "Q1 the Pune lease" not in json.dumps(q4["messages"][1:-1]), "Q1 is folded into the summary"
            await daemon.wait_for_log(r"compacted \S+-general-\S+: \d+ message\(s\) summarised")
        finally:
            await daemon.close()
