"""A fake OpenAI-compatible model that holds a real board meeting, for tests that drive ``sabha run``.

It answers each meeting request by what it is asked (recognised by the prompt's own words): the chair's
framing (a JSON agenda and a question per specialist, each question naming its role), a member's statement
(``STATEMENT <role> R<round>`` and a ``conditional`` stance, so no round is unanimous and the meeting runs all
its rounds), a stance asked again, the chair's synthesis (a valid decision) and the challenger's review (no
objection). User memory's extractions get no facts; anything else gets ``OK``.

:meth:`MeetingModel.hold` makes the requests of one kind (``"round 2"``, ``"synthesis"`` ...), optionally of
some roles only, wait at the model until :meth:`release`: a test can kill ``sabha run`` while exactly those
calls are on their way. Every request is recorded as a :class:`Asked` (kind, role, round).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.support.fakes.local_server import MEMORY_MARKER, LocalServer

__all__ = ["Asked", "MeetingModel", "statement_marker"]

_ROUND = re.compile(r"Round (\d+) of at most")
_ASKED_OF = re.compile(r"The chair asked you: QUESTION FOR (\w+)")
_SPECIALIST = re.compile(r"^- (\w+): ", re.MULTILINE)


def statement_marker(role: str, round_no: int) -> str:
    """The words that open ``role``'s statement in round ``round_no``."""
    return f"STATEMENT {role} R{round_no}"


@dataclass(frozen=True)
class Asked:
    """One request the model got: its kind ("framing", "round N", "stance", "synthesis", "challenge", "other")
    and the role it was for, when the prompt says."""

    kind: str
    role: str | None
    at: float


class MeetingModel(LocalServer):
    """See the module docstring."""

    name = "MeetingModel"

    def __init__(self, latency: float = 0.05) -> None:
        super().__init__()
        self.latency = latency
        self.asked: list[Asked] = []
        self.waiting: list[Asked] = []  # held right now
        self._holds: dict[str, set[str] | None] = {}  # kind -> the roles held (None: every role)
        self._open = asyncio.Event()
        self._open.set()
        self._changed = asyncio.Event()

    @property
    def base_url(self) -> str:
        """For ``llm.providers.openai.base_url``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._chat)

    def hold(self, kind: str, roles: set[str] | None = None) -> None:
        """Requests of ``kind`` (of ``roles`` only, if given) wait at the model until :meth:`release`."""
        self._holds[kind] = roles
        self._open.clear()

    def release(self) -> None:
        """Let every held request (and every later one) be answered."""
        self._holds.clear()
        self._open.set()

    async def wait_for(self, what: str, check: Any, timeout: float = 180.0) -> None:
        """Until ``check()`` is true (it is looked at whenever a request comes or is held)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not check():
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"the model never saw {what}; asked: {[(a.kind, a.role) for a in self.asked]}")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(left, 0.5))

    def _held(self, asked: Asked) -> bool:
        if asked.kind not in self._holds:
            return False
        roles = self._holds[asked.kind]
        return roles is None or asked.role in roles

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body: dict[str, Any] = await request.json()
        if MEMORY_MARKER in await request.read():
            return self._answer(body, '{"facts": []}')
        text = _last_user(body)
        asked = _classify(text)
        self.asked.append(asked)
        self._changed.set()
        if self._held(asked):
            self.waiting.append(asked)
            self._changed.set()
            while self._held(asked):
                await self._open.wait()
            self.waiting.remove(asked)
        await asyncio.sleep(self.latency)
        return self._answer(body, _reply(asked, text))

    def _answer(self, body: dict[str, Any], text: str) -> web.Response:
        prompt = sum(len(str(m)) for m in body.get("messages") or []) // 4
        return web.json_response({
            "id": f"chatcmpl-meeting{len(self.asked)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "meeting"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": len(text) // 4 + 1,
                      "total_tokens": prompt + len(text) // 4 + 1},
        })


def _last_user(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def _classify(text: str) -> Asked:
    now = time.monotonic()
    if "You are chairing a board meeting on" in text:
        return Asked("framing", "general", now)
    if "You chaired a board meeting on" in text:
        return Asked("synthesis", "general", now)
    if "The chair is writing the board's draft decision" in text:
        return Asked("challenge", "critic", now)
    asked_of = _ASKED_OF.search(text)
    if "Your statement needs a stance" in text:
        return Asked("stance", None, now)
    found = _ROUND.search(text)
    if found and asked_of:
        return Asked(f"round {found.group(1)}", asked_of.group(1), now)
    return Asked("other", None, now)


_STANCE = 'STANCE: {"position": "conditional", "confidence": 0.6, "assumption": "demand holds"}'
_DECISION = {
    "recommendation": "DECIDED: open the office in phases", "rationale": "The members agree on a phased start.",
    "consensus_points": ["start small"], "dissent": [],
    "action_items": [{"task": f"Prepare step {n} of the plan", "owner": "general", "due": "in two weeks"}
                     for n in (1, 2, 3)],
    "open_questions": [],
}


def _reply(asked: Asked, text: str) -> str:
    if asked.kind == "framing":
        roles = _SPECIALIST.findall(text.split("Specialists present:", 1)[-1].split("\n\n", 1)[0])
        return json.dumps({"agenda": "1. Costs\n2. Risks", "questions": {r: f"QUESTION FOR {r}" for r in roles}})
    if asked.kind.startswith("round ") and asked.role:
        return f"{statement_marker(asked.role, int(asked.kind.split()[1]))}: a phased start is wiser.\n{_STANCE}"
    if asked.kind == "stance":
        return '{"position": "conditional", "confidence": 0.6, "assumption": "demand holds"}'
    if asked.kind == "synthesis":
        return json.dumps(_DECISION)
    if asked.kind == "challenge":
        return "NO OBJECTION"
    return "OK"
