"""A fake OpenAI-compatible model that sits board meetings, slowly, for a real ``sabha run`` or ``sabha meeting``.

It answers each meeting request as its phase asks, read from the request's own words: the chair's framing (one
JSON object, a question per specialist: ``[<role>] ...``, so a statement's request says whose it is), each
member's statement (the Critic opposes, the others support: the board does not converge, so only the rounds,
a ``/wrap`` or a cancel end it), a stance asked for again, the challenger's ``NO OBJECTION`` and the chair's
decision (JSON). Every statement request is recorded (:attr:`SeatModel.statements`: round, role, the request's
last user message), so a test can read what each member was asked in each round.

:meth:`SeatModel.hold` makes the statements of a round wait at the model until :meth:`SeatModel.release`, so a
test can act "during round 1" however fast or slow the machine is; :attr:`SeatModel.waiting` says how many wait.
Memory extractions are answered with no facts. Answers are whole (configure ``stream: false``).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.support.fakes.local_server import MEMORY_MARKER, LocalServer

__all__ = ["AskedStatement", "SeatModel"]

_ROUND = re.compile(r"Round (\d+) of at most \d+\. The chair asked you: \[([a-z0-9_-]+)\]")
_SPECIALIST = re.compile(r"^- ([a-z0-9_-]+): ", re.MULTILINE)
OPPOSER = "critic"


@dataclass(frozen=True)
class AskedStatement:
    """A member asked for a statement: the round, the role, what it was asked."""

    round: int
    role: str
    text: str


class SeatModel(LocalServer):
    """See the module docstring."""

    name = "SeatModel"

    def __init__(self, latency: float = 0.3) -> None:
        super().__init__()
        self.latency = latency
        self.statements: list[AskedStatement] = []
        self.calls = 0
        self.waiting = 0
        self._gates: dict[int, asyncio.Event] = {}

    @property
    def base_url(self) -> str:
        """For ``llm.providers.openai.base_url``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._chat)

    def hold(self, round_no: int) -> None:
        """The statements of round ``round_no`` wait at the model until :meth:`release`."""
        self._gates.setdefault(round_no, asyncio.Event()).clear()

    def release(self, round_no: int) -> None:
        """Let the statements of round ``round_no`` answer."""
        self._gates.setdefault(round_no, asyncio.Event()).set()

    def asked(self, round_no: int) -> list[AskedStatement]:
        """The statement requests of round ``round_no`` (a stance asked again is not one)."""
        return [s for s in self.statements if s.round == round_no]

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        body: dict[str, Any] = json.loads(raw)
        if MEMORY_MARKER in raw:
            return self._reply(body, '{"facts": []}')
        self.calls += 1
        asked = ""
        for message in reversed(body.get("messages") or []):
            if message.get("role") == "user":
                content = message.get("content")
                asked = content if isinstance(content, str) else json.dumps(content)
                break
        text = await self._answer(asked)
        return self._reply(body, text)

    async def _answer(self, asked: str) -> str:
        if "Frame the meeting:" in asked:
            roles = _SPECIALIST.findall(asked.split("Specialists present:", 1)[-1].split("\n\n", 1)[0])
            await asyncio.sleep(self.latency)
            return json.dumps({"agenda": "1. The case for it\n2. The risks", "questions": {
                r: f"[{r}] What is your view, from your seat, on the question?" for r in roles}})
        if "Write the board's decision as one JSON object" in asked:
            await asyncio.sleep(self.latency)
            return json.dumps({
                "recommendation": "Go ahead with a small pilot first.",
                "rationale": "Most members support it; the critic's risk is real but bounded.",
                "consensus_points": ["start small"],
                "dissent": [{"who": OPPOSER, "why": "the risk is not bounded yet"}] if f"- {OPPOSER}:" in asked else [],
                "action_items": [{"task": "Scope the pilot", "owner": "strategy", "due": "in two weeks"},
                                 {"task": "Price the pilot", "owner": "finance", "due": "friday"},
                                 {"task": "List what would stop it", "owner": OPPOSER}],
                "open_questions": ["How soon do we know?"]})
        if "Give it as one JSON object: position" in asked:
            return json.dumps({"position": "support", "confidence": 0.6, "assumption": "it can be undone"})
        if "reply with OBJECTION:" in asked:
            return "NO OBJECTION"
        found = _ROUND.search(asked)
        if found is None:
            return "Noted."
        round_no, role = int(found.group(1)), found.group(2)
        self.statements.append(AskedStatement(round_no, role, asked))
        gate = self._gates.get(round_no)
        if gate is not None and not gate.is_set():
            self.waiting += 1
            try:
                await gate.wait()
            finally:
                self.waiting -= 1
        await asyncio.sleep(self.latency)
        position = "oppose" if role == OPPOSER else "support"
        return (f"{role} in round {round_no}: I {position} it, for the reasons my seat sees.\n"
                f'STANCE: {{"position": "{position}", "confidence": 0.7, "assumption": "demand holds"}}')

    def _reply(self, body: dict[str, Any], text: str) -> web.Response:
        prompt = sum(len(str(m)) for m in body.get("messages") or []) // 4
        completion = max(1, len(text) // 4)
        return web.json_response({
            "id": f"chatcmpl-seat{self.calls}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "seat"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        })
