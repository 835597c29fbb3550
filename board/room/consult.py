"""Consultation: one agent asks a colleague through the ``consult`` tool, within limits.

A request carries depth (0 is the user's question, 1 is A asking B, 2 is B asking C),
the chain of roles so far, the meeting id if any, and a deadline. It is refused, with a
structured result that tells the caller to answer with what it has, when it would go
past ``max_depth``, close a cycle (the target is already in the chain), ask oneself,
name an unknown role (the refusal lists the valid ones), or break the per-role
allow-list. Asking the same role the same question twice in one turn returns the first
answer without a second call. A consultation that outlives its timeout returns a
structured timeout; the caller's turn goes on.

The consulted role answers in its own soul with its own tools in a short-lived
session: nothing is appended to its chat transcript. The caller's transcript gets a
``consult`` entry and the state db a ``consultations`` row (from, to, depth, chain,
latency, cost, outcome).

A caller that keeps a budget (a board meeting) puts it in ``ctx.budget``: a reason from
``over_budget()`` refuses the consultation, and ``spend(usd)`` is told what each
consultation cost. The budget is inherited by nested consultations.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from board.agent.speaker import Ask, Speaker
from board.agent.tools import Tool, ToolContext, ToolResult
from board.conversation.transcripts import utc_now
from board.llm.base import ToolSpec
from board.storage import Database
from board.telemetry.genai import ROLE
from board.telemetry.spans import traced

__all__ = ["CONSULT_TOOL", "ConsultService", "ConsultSettings", "consult_spec", "full_chain", "parse_answer"]

log = logging.getLogger("sabha.consult")

CONSULT_TOOL = "consult"

_CONFIDENCE = re.compile(r"^\s*\**confidence\**\s*[:=]\s*([01](?:\.\d+)?)\s*$", re.IGNORECASE | re.MULTILINE)
_SUGGEST = re.compile(r"^\s*\**suggest(?:ed)?[ _-]consult\**\s*[:=]\s*@?([a-z][a-z0-9_-]*)\s*\.?\s*$",
                      re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class ConsultSettings:
    """Config ``board.consultation``."""

    enabled: bool = True
    max_depth: int = 2
    timeout_s: float = 120.0
    allow: dict[str, tuple[str, ...]] = field(default_factory=dict)  # role -> roles it may consult; absent = any


def consult_spec() -> ToolSpec:
    """The schema of the consult tool."""
    return ToolSpec(
        name=CONSULT_TOOL,
        description="Ask a colleague on the board for their view when their expertise is genuinely needed. "
        "They answer in their own voice. Depth-limited: if refused, answer with what you have.",
        parameters={
            "type": "object",
            "properties": {
                "role": {"type": "string", "minLength": 1, "description": "The colleague's role, e.g. finance."},
                "question": {"type": "string", "minLength": 3, "description": "A precise question."},
                "context": {"type": "string", "description": "Background they need (optional)."},
            },
            "required": ["role", "question"],
            "additionalProperties": False,
        },
    )


def parse_answer(text: str) -> tuple[str, float | None, str | None]:
    """Split a consulted agent's answer into (response, confidence, suggest_consult)."""
    confidence = suggest = None
    if match := _CONFIDENCE.search(text):
        confidence = min(1.0, max(0.0, float(match.group(1))))
    if match := _SUGGEST.search(text):
        suggest = match.group(1).lower()
    cleaned = _SUGGEST.sub("", _CONFIDENCE.sub("", text)).strip()
    return cleaned or text.strip(), confidence, suggest


def full_chain(ctx: ToolContext) -> tuple[str, ...]:
    """The roles of the chain so far, ending with the caller."""
    chain = tuple(ctx.chain)
    return chain if chain and chain[-1] == ctx.role else (*chain, ctx.role)


def _normalise(question: str) -> str:
    return " ".join(question.lower().split()).rstrip("?.! ")


def _consulting(args: dict[str, Any], ctx: ToolContext) -> dict[str, str | int]:
    """The attributes of a consultation's span: who asks whom, how deep (never the question)."""
    return {ROLE: ctx.role, "sabha.consulted": str(args.get("role", ""))[:40], "sabha.consult.depth": len(ctx.chain)}


@dataclass(kw_only=True, eq=False)
class ConsultService:
    """Runs consultations; :meth:`tool` is what gets registered in the tool registry.

    ``speak`` asks a colleague, ``roles`` lists the roster's roles, ``names`` gives a role's
    display name; consultations are recorded in ``db`` when there is one.
    """

    speak: Speaker
    roles: Callable[[], list[str]]
    names: Callable[[str], str]
    settings: ConsultSettings
    db: Database | None = None

    def tool(self) -> Tool:
        """The ``consult`` tool (it manages its own timeout)."""
        return Tool(consult_spec(), self.handle, timeout_s=None)

    def refusal(self, ctx: ToolContext, target: str, code: str, reason: str) -> ToolResult:
        """A structured refusal: the caller should answer with what it has."""
        log.info("consult %s -> %s refused (%s): %s", ctx.role, target, code, reason)
        return ToolResult.failure(
            f"consultation refused: {reason}. Answer with what you have.",
            data={"refused": True, "code": code, "to": target, "depth": ctx.depth + 1,
                  "chain": list(full_chain(ctx))},
        )

    def check(self, ctx: ToolContext, target: str) -> ToolResult | None:
        """The refusal for this request, or None when it may go ahead."""
        roles = self.roles()
        if not self.settings.enabled:
            return self.refusal(ctx, target, "disabled", "consultation is disabled in this board's config")
        if target not in roles:
            valid = ", ".join(r for r in roles if r != ctx.role)
            return self.refusal(ctx, target, "unknown_role", f"there is no role {target!r}; valid roles: {valid}")
        if target == ctx.role:
            return self.refusal(ctx, target, "self", "you cannot consult yourself")
        if target in full_chain(ctx):
            path = " -> ".join([*full_chain(ctx), target])
            return self.refusal(ctx, target, "cycle", f"{target} is already in this consultation chain ({path})")
        depth = ctx.depth + 1
        if depth > self.settings.max_depth:
            return self.refusal(ctx, target, "depth_limit",
                                f"the consultation depth limit ({self.settings.max_depth}) is reached")
        allowed = self.settings.allow.get(ctx.role)
        if allowed is not None and target not in allowed:
            return self.refusal(ctx, target, "not_allowed",
                                f"{ctx.role} may consult only {', '.join(allowed) or 'nobody'}")
        if ctx.budget is not None and (reason := ctx.budget.over_budget()):
            return self.refusal(ctx, target, "budget", reason)
        return None

    @traced("consultation", lambda self, args, ctx: _consulting(args, ctx))
    async def handle(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Handle one ``consult`` call."""
        target = str(args["role"]).strip().lower().lstrip("@")
        question = str(args["question"]).strip()
        context = str(args.get("context") or "").strip()
        refused = self.check(ctx, target)
        if refused is not None:
            await self._record(ctx, target, question, None, "refused", 0.0, 0.0, refused.error)
            return refused
        cache = ctx.consult_cache
        cache_key = (target, _normalise(question))
        if cache is not None and cache_key in cache:
            first = cache[cache_key]
            data = dict(first.data or {})
            data["duplicate"] = True
            data["note"] = "you already asked this in this turn; here is the first answer"
            return ToolResult(ok=first.ok, data=data, error=first.error, retryable=False)

        loop = asyncio.get_running_loop()
        timeout = self.settings.timeout_s
        if ctx.deadline is not None:
            timeout = min(timeout, ctx.deadline - loop.time())
        depth = ctx.depth + 1
        # The colleague inherits the place, meeting, budget and roster; not the caller's
        # transcript (it answers in a short-lived session) nor its answers so far.
        sub_ctx = replace(
            ctx,
            role=target,
            session_key=f"consult:{ctx.session_key}:{target}",
            depth=depth,
            chain=(*full_chain(ctx), target),
            deadline=loop.time() + max(timeout, 0.0),
            transcript=None,
            consult_cache={},
        )
        message = (
            f"Your colleague {self.names(ctx.role)} ({ctx.role}) consults you"
            f"{' during board meeting ' + ctx.meeting_id if ctx.meeting_id else ''}.\n"
            f"Question: {question}\n" + (f"Context: {context}\n" if context else "") +
            "\nAnswer in your own voice, briefly (under 150 words). End with a line 'Confidence: <0 to 1>' and, "
            "only if another colleague should be asked, a line 'Suggest consult: <role>'."
        )
        started = time.perf_counter()
        if timeout <= 0:
            result = ToolResult.failure(
                f"no time left to consult {target}; answer with what you have",
                data={"timeout": True, "to": target, "depth": depth})
            await self._record(ctx, target, question, None, "timeout", 0.0, 0.0, result.error)
            return result
        try:
            utterance = await asyncio.wait_for(self.speak(Ask(target, message), sub_ctx), timeout)
        except TimeoutError:
            latency = time.perf_counter() - started
            result = ToolResult.failure(
                f"{target} did not answer within {timeout:g} s; answer with what you have",
                retryable=False, data={"timeout": True, "to": target, "depth": depth})
            await self._record(ctx, target, question, None, "timeout", latency, 0.0, result.error)
            return result
        latency = time.perf_counter() - started
        if ctx.budget is not None:
            ctx.budget.spend(utterance.cost_usd)
        response, confidence, suggest = parse_answer(utterance.text)
        payload: dict[str, Any] = {"from": target, "response": response}
        if confidence is not None:
            payload["confidence"] = confidence
        if suggest and suggest != target:
            payload["suggest_consult"] = suggest
        if utterance.degraded:
            # Its model was unavailable: say so instead of passing its apology off as advice.
            result = ToolResult.failure(
                f"{target} could not answer right now (its model is unavailable); answer with what you have",
                retryable=True, data={"from": target, "degraded": True})
            await self._record(ctx, target, question, None, "degraded", latency, utterance.cost_usd, result.error)
            return result
        result = ToolResult.success(payload)
        if cache is not None:
            cache[cache_key] = result
        await self._record(ctx, target, question, response, "ok", latency, utterance.cost_usd, None)
        return result

    async def _record(self, ctx: ToolContext, target: str, question: str, answer: str | None, outcome: str,
                      latency_s: float, cost_usd: float, error: str | None) -> None:
        entry = {
            "type": "consult", "ts": utc_now(), "from": ctx.role, "to": target, "depth": ctx.depth + 1,
            "chain": list(full_chain(ctx)), "question": question, "answer": answer, "outcome": outcome,
            "latency_ms": round(latency_s * 1000, 1), "cost_usd": round(cost_usd, 6),
        }
        if error:
            entry["error"] = error
        if ctx.meeting_id:
            entry["meeting_id"] = ctx.meeting_id
        if ctx.transcript is not None:
            ctx.transcript.append(entry)
        if self.db is not None:
            await self.db.execute(
                "INSERT INTO consultations(ts, from_role, to_role, depth, chain, question, outcome, latency_ms, "
                "cost_usd, session_key, meeting_id, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (entry["ts"], ctx.role, target, entry["depth"], json.dumps(entry["chain"]), question, outcome,
                 entry["latency_ms"], cost_usd, ctx.session_key, ctx.meeting_id, error),
            )

