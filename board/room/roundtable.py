"""The Roundtable (seed 004): ARTIST, BUSINESS and TECH debate, a SUMMARIZER distils tasks.

Input is JSON ``{"prompt", "context", "learnings", "max_rounds"}`` (plus the options below);
output is ``{"transcript": "...", "summary": ["3-5 actionable tasks"]}``.

As in the seed, the debate runs ``max_rounds`` rounds (default 3) and is sequential: each
debater in turn sees the whole debate so far (earlier rounds and the speakers before it in
this round), in full. The prompt keeps what every speaker shares first (the frame, topic,
context and learnings in the system prompt, then the statements one message each, the last
one a cache breakpoint) and the speaker's own persona last, in the per-turn context, so the
cached prefix grows from one speaker to the next instead of being rebuilt. ``parallel``
lets the debaters of a round speak at once (each sees the earlier rounds only);
``early_stop`` hands the debate to the board meeting engine, which may end it when the
debaters converge. Debaters answer with temperature 0.8 and at most 200 output tokens, the
summarizer with 0.3 and 300 (the seed's values, settable in the input); an answer cut by
that limit ends at its last full sentence.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from board.agent.exchange import ExchangeRequest, ModelChoice, ToolPolicy
from board.agent.tools import ToolContext
from board.llm.base import ChatMessage, PromptBlock
from board.llm.purpose import CallPurpose
from board.roles import GENERAL
from board.room.convene import SUMMARIZER, BoardRoom
from board.workspace.souls import AgentProfile

if TYPE_CHECKING:
    from board.agent.exchange import ExchangeOutcome
    from board.room.meeting import MeetingResult

__all__ = ["DEBATERS", "ROSTER", "RoundtableInput", "RoundtableInputError", "clean_cut", "parse_input",
           "run_roundtable"]

ROSTER = "roundtable"
#: who may own a task besides the debaters: the owners seed 004's summarizer names
OWNERS = ("Director", "Builder", "Orchestrator", "FULLSEND")
#: the debaters, in the seed's speaking order
DEBATERS = ("artist", "business", "tech")


class RoundtableInput(BaseModel):
    """What the orchestrator sends."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1, max_length=8000)
    context: str = ""
    learnings: list[str] = Field(default_factory=list, max_length=50)
    max_rounds: int = Field(3, ge=1, le=5)
    #: let the meeting engine end the debate early when the debaters converge
    early_stop: bool = False
    #: the debaters of a round speak at once (each sees the earlier rounds only)
    parallel: bool = False
    temperature: float = Field(0.8, ge=0.0, le=2.0)
    max_tokens: int = Field(200, ge=16, le=4096)
    summarizer_temperature: float = Field(0.3, ge=0.0, le=2.0)
    summarizer_max_tokens: int = Field(300, ge=64, le=4096)
    #: the debaters' and the summarizer's models in Sabha's provider syntax (``openai:gpt-4o-mini``);
    #: None: each role's own (``sabha roundtable`` fills them from ROUNDTABLE_MODEL / SUMMARIZER_MODEL)
    model: str | None = Field(None, min_length=1)
    summarizer_model: str | None = Field(None, min_length=1)

    @field_validator("context", mode="before")
    @classmethod
    def _context_lines(cls, value: Any) -> Any:
        if isinstance(value, list):
            return "\n".join(f"- {item}" for item in value)
        return value

    @field_validator("prompt")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("prompt is blank")
        return value.strip()


class RoundtableInputError(ValueError):
    """The input JSON is not usable; ``details`` lists what is wrong."""

    def __init__(self, message: str, details: list[str]) -> None:
        super().__init__(message)
        self.details = details


def parse_input(text: str, overrides: dict[str, Any] | None = None) -> RoundtableInput:
    """Parse roundtable input JSON (``overrides``: fields the command line sets); raises
    :class:`RoundtableInputError`."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        raise RoundtableInputError("input is not valid JSON", [where]) from exc
    if not isinstance(data, dict):
        raise RoundtableInputError("input must be a JSON object", ['expected {"prompt": "...", ...}'])
    try:
        return RoundtableInput.model_validate({**data, **(overrides or {})})
    except ValidationError as exc:
        details = [f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}" for err in exc.errors()]
        raise RoundtableInputError("input does not match the roundtable schema", details) from exc


def agenda_for(request: RoundtableInput) -> str:
    """The debate context every participant sees (the meeting engine's agenda, ``early_stop``)."""
    parts = [f"Topic: {request.prompt}"]
    if request.context.strip():
        parts.append(f"Context:\n{request.context.strip()}")
    if request.learnings:
        parts.append("Learnings from past experiments:\n" + "\n".join(f"- {item}" for item in request.learnings))
    parts.append("Build on or challenge each other's points; be distinctive to your persona; 2-3 sentences.")
    return "\n\n".join(parts)


def brief_for(request: RoundtableInput) -> str:
    """The seed's debate context: topic, context and learnings."""
    learnings = "\n".join(f"- {item}" for item in request.learnings) or "(none)"
    return (f"## Topic\n{request.prompt}\n\n## Context\n{request.context.strip() or '(none)'}\n\n"
            f"## Learnings from Past Experiments\n{learnings}")


def frame_for(request: RoundtableInput, names: list[str]) -> str:
    """What every debater shares, first in the prompt: the roundtable and the seed's debate context."""
    return (f"You are one of the debaters of a roundtable: {', '.join(names)}. They speak in turn for "
            f"{request.max_rounds} rounds; then a SUMMARIZER turns the debate into 3-5 actionable tasks. Your "
            f"own persona comes last, after the debate so far.\n\n{brief_for(request)}")


_SENTENCE_END = re.compile(r"[.!?\u2026\u3002](?:[\"'\u201d\u2019)\]*_]*)(?=\s|$)")


def clean_cut(text: str) -> str:
    """An answer cut by the output limit, ended at its last full sentence (no half sentence shown);
    with no full sentence at all, its last whole word and an ellipsis."""
    text = text.rstrip()
    ends = list(_SENTENCE_END.finditer(text))
    if ends:
        return text[: ends[-1].end()]
    head = text.rsplit(None, 1)[0] if len(text.split()) > 1 else text
    return head.rstrip(",;:-\u2013\u2014 ") + "\u2026"


@dataclass(frozen=True)
class Statement:
    """One debater's statement in one round."""

    round: int
    name: str
    text: str
    model: str

    @property
    def line(self) -> str:
        return f"{self.name}: {self.text}"


def debate_messages(seen: tuple[Statement, ...]) -> tuple[ChatMessage, ...]:
    """The debate so far, one message per statement (the first of a round under its header), so each
    speaker's prompt starts with the previous speaker's; the last one is a cache breakpoint (the
    speaker's persona and turn follow it as the per-turn context)."""
    texts = ["## Debate So Far"]
    for index, said in enumerate(seen):
        header = f"--- Round {said.round} ---\n" if index == 0 or seen[index - 1].round != said.round else ""
        texts.append(f"{header}{said.line}")
    last = len(texts) - 1
    return tuple(ChatMessage("user", text, cache_point=i == last) for i, text in enumerate(texts))


def render(statements: list[Statement]) -> str:
    """``--- Round n ---`` then ``NAME: text`` lines, as in seed 004; ``NAME (model):`` when the
    debaters spoke with different models."""
    mixed = len({s.model for s in statements}) > 1
    lines: list[str] = []
    for index, said in enumerate(statements):
        if index == 0 or statements[index - 1].round != said.round:
            lines.append(f"--- Round {said.round} ---")
        lines.append(f"{said.name} ({said.model}): {said.text}" if mixed else said.line)
    return "\n".join(lines)


@dataclass(frozen=True)
class _Debate:
    room: BoardRoom
    request: RoundtableInput
    system: tuple[PromptBlock, ...]
    #: what the user should know about a run that still gave an answer
    notes: list[str] = field(default_factory=list)

    async def ask(self, profile: AgentProfile, prompt: tuple[ChatMessage, ...] | str, *, temperature: float,
                  max_tokens: int, model: str | None, turn: str = "",
                  schema: dict[str, Any] | None = None) -> ExchangeOutcome:
        system = self.system if schema is None else (PromptBlock("summarizer", profile.soul.text, cacheable=True),)
        if turn:  # after the shared prefix: the exchange sends a "dynamic" block after the messages
            system = (*system, PromptBlock("dynamic", turn))
        return await self.room.runner.run(ExchangeRequest(
            profile=profile, ctx=ToolContext(role=profile.role, session_key="roundtable", roster=ROSTER),
            prompt=prompt, system=system, tools=ToolPolicy(allowed=(), max_rounds=0),
            model=ModelChoice(model=model, temperature=temperature, max_tokens=max_tokens),
            purpose=CallPurpose.ROUNDTABLE,
            response_schema=schema, ledger_tags={"purpose": CallPurpose.ROUNDTABLE},
        ))

    async def turn(self, profile: AgentProfile, seen: tuple[Statement, ...], number: int) -> Statement | str:
        name = profile.name.upper()
        opening = "Nobody has spoken yet: you open the debate. " if not seen else ""
        context = (f"## You\n{profile.soul.text.strip()}\n\n## Your Turn\n{opening}You are {name}, round {number} of "
                   f"{self.request.max_rounds}. Respond to the topic. Build on or challenge previous points. "
                   "Keep it concise (2-3 sentences). Be distinctive to your persona.")
        outcome = await self.ask(profile, debate_messages(seen), temperature=self.request.temperature,
                                 max_tokens=self.request.max_tokens, model=self.request.model, turn=context)
        if outcome.degraded or not outcome.text.strip():
            return f"{name} could not speak in round {number}: {outcome.error or 'an empty answer'}"
        text = clean_cut(outcome.text) if outcome.stop_reason == "max_tokens" else outcome.text
        return Statement(number, name, " ".join(text.split()), outcome.model)

    async def round(self, debaters: list[AgentProfile], said: list[Statement], number: int) -> list[str]:
        """One round: in turn, each seeing everything said so far (or all at once with ``parallel``)."""
        results: list[Statement | str] = []
        if self.request.parallel:
            seen = tuple(said)
            results = list(await asyncio.gather(*(self.turn(p, seen, number) for p in debaters)))
            said.extend(r for r in results if isinstance(r, Statement))
        else:
            for profile in debaters:
                result = await self.turn(profile, tuple(said), number)
                results.append(result)
                if isinstance(result, Statement):
                    said.append(result)
        return [r for r in results if isinstance(r, str)]

    async def summarize(self, summarizer: AgentProfile, transcript: str, owners: list[str]) -> list[str]:
        schema = summary_schema(owners)
        prompt = (f"Roundtable on: {self.request.prompt}\n\n{brief_for(self.request)}\n\n## Debate Transcript\n"
                  f"{transcript}\n\n## Output\nList 3-5 "
                  "actionable tasks. Each should be specific and executable, with its owner.\n\nReply with exactly "
                  f"one JSON object that matches this JSON schema:\n{json.dumps(schema, ensure_ascii=False)}")
        outcome = await self.ask(summarizer, prompt, temperature=self.request.summarizer_temperature,
                                 max_tokens=self.request.summarizer_max_tokens, model=self.request.summarizer_model,
                                 schema=schema)
        tasks = [] if outcome.degraded else summary_of(outcome.text, owners)
        if outcome.stop_reason == "max_tokens" and not outcome.degraded:
            self.notes.append(f"the summary was cut by its output limit of {self.request.summarizer_max_tokens} "
                              f"tokens: {len(tasks)} whole task(s) kept (raise summarizer_max_tokens)")
        return tasks


def summary_schema(owners: list[str]) -> dict[str, Any]:
    """The summarizer's answer: 3-5 tasks, each with an owner."""
    task = {"type": "object", "required": ["task", "owner"],
            "properties": {"task": {"type": "string", "minLength": 8}, "owner": {"enum": owners}}}
    return {"type": "object", "required": ["tasks"],
            "properties": {"tasks": {"type": "array", "minItems": 3, "maxItems": 5, "items": task}}}


_WHOLE_TASK = re.compile(r'\{\s*"task"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"owner"\s*:\s*"((?:[^"\\]|\\.)*)"\s*\}')


def summary_of(text: str, owners: list[str]) -> list[str]:
    """``Task (Owner: who)`` strings from the summarizer's JSON (owners spelt as ``owners`` spells
    them: "the builder" is Builder), or from ``- task`` lines as in the seed."""
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start:end + 1]) if start >= 0 else None
        items = data.get("tasks") if isinstance(data, dict) else None
    except json.JSONDecodeError:
        items = None
    if not isinstance(items, list):  # a JSON answer cut by the output limit: its whole tasks
        items = [{"task": json.loads(f'"{t}"'), "owner": json.loads(f'"{o}"')} for t, o in _WHOLE_TASK.findall(text)]
    if not items:
        return [t for t in (line.strip().lstrip("-*").strip() for line in text.splitlines()
                            if line.strip()[:1] in "-*") if t][:5]
    spelt = {o.lower(): o for o in owners}
    tasks: list[str] = []
    for item in items:
        task = " ".join(str(item.get("task", "")).split()) if isinstance(item, dict) else ""
        if task:
            said = " ".join(str(item.get("owner") or "Orchestrator").split())
            key = said.lower().removeprefix("the ").strip()
            tasks.append(f"{task} (Owner: {spelt.get(key, said)})")
    return tasks[:5]


async def run_roundtable(room: BoardRoom, request: RoundtableInput) -> dict[str, Any]:
    """Run the debate and return ``{"transcript", "summary", "stop_reason"}`` (and ``error``, ``notes``)."""
    if request.early_stop:
        return await _run_as_meeting(room, request)
    souls = room.souls_for(ROSTER)
    roles = [r for r in DEBATERS if souls.has(r)] + \
        [r for r in souls.roles() if r not in (*DEBATERS, SUMMARIZER, GENERAL) and souls.has(r)]
    debaters = [souls.profile(r) for r in roles]
    if not debaters:
        return {"transcript": "", "summary": [], "stop_reason": "error",
                "error": f"the {ROSTER} roster has no debaters with a usable soul; see `sabha souls`"}
    debate = _Debate(room, request, (PromptBlock("roundtable", frame_for(request, [p.name.upper() for p in
                                                                                     debaters]), cacheable=True),))
    said: list[Statement] = []
    errors: list[str] = []
    stop = "completed"
    for number in range(1, request.max_rounds + 1):
        before = len(said)
        errors += await debate.round(debaters, said, number)
        if len(said) == before:
            stop = "error"
            break
    output: dict[str, Any] = {"transcript": render(said), "summary": [], "stop_reason": stop}
    if not said:
        output["error"] = f"no quorum: no debater could speak ({errors[0] if errors else 'no answer'})"
        return output
    if errors:
        output["error"] = "; ".join(errors)
    if souls.has(SUMMARIZER):
        owners = [*OWNERS, *roles]
        output["summary"] = await debate.summarize(souls.profile(SUMMARIZER), output["transcript"], owners)
    if not output["summary"]:
        output["error"] = "; ".join([*errors, "the summarizer gave no tasks"])
    if debate.notes:
        output["notes"] = debate.notes
    return output


def _legacy_transcript(room: BoardRoom, rounds: list[dict[str, str]], models: dict[str, str] | None) -> str:
    souls = room.souls_for(ROSTER)
    lines: list[str] = []
    for number, statements in enumerate(rounds, start=1):
        lines.append(f"--- Round {number} ---")
        for role, text in statements.items():
            name = souls.profile(role).name.upper() if souls.has(role) else role.upper()
            model = f" ({models[role]})" if models and role in models else ""
            lines.append(f"{name}{model}: {' '.join(text.split())}")
    return "\n".join(lines)


async def _run_as_meeting(room: BoardRoom, request: RoundtableInput) -> dict[str, Any]:
    """``early_stop``: the debate as a board meeting of the roster chaired by the summarizer (parallel
    rounds, ended early when the debaters converge); the summary is the decision's action items."""
    settings = replace(room.meeting_settings, max_turns_per_agent=request.max_rounds, critic_role="")
    run = room.prepare(request.prompt, roster=ROSTER, chair_role=SUMMARIZER, settings=settings,
                       agenda=agenda_for(request), extra_owners=OWNERS)
    result: MeetingResult = await run.run()
    summary = [f"{item.task} (Owner: {item.owner})" for item in result.decision.action_items] if result.decision else []
    models = {**run.models, **run.spoke_with} if run.models_differ() else None
    output: dict[str, Any] = {"transcript": _legacy_transcript(room, run.rounds, models), "summary": summary,
                              "stop_reason": result.stop_reason.value}
    if result.error:
        output["error"] = result.error
    return output
