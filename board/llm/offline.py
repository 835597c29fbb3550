"""The offline model: deterministic, no key, no network.

It answers in the speaking role's voice by quoting its soul file: the first sentence
of the soul's first paragraph (its stance) and one of its "questions you always ask",
chosen by a stable hash of the user's message. Every answer says that it came from
the offline model, so nobody mistakes it for advice; the first one in each conversation
place (the owner's chats, a group, a WhatsApp user) also says how to configure a real
model (:data:`OFFLINE_NOTICE`), later ones only :data:`OFFLINE_TAG`. What was said is
remembered by the provider, so once per process: once per terminal chat, once per
``sabha ask``, once per place while the daemon runs.

It can also exercise the tool loop without a key: when the last user message contains
``[TOOL: <name> ARG: {json}]`` for a tool the request offers, it calls that tool, then
answers quoting the tool's result. A chat question that plainly asks for what an offered read-only
tool gives ("what time is it in Tokyo?" and a ``get_current_time`` tool; "what was the last commit?"
and a git ``log`` tool) makes it call that tool once, with arguments from the question or the tool's
schema, and answer with the result cited ``[time.get_current_time]`` (:mod:`board.llm.offline_tools`);
a tool that is not read-only it never calls. Asked for JSON of a schema
(``metadata["response_schema"]``, meetings do this) it returns a valid instance built
from the persona (see :mod:`board.llm.offline_json`). Sent pictures, it says how many, their type and
their size (:func:`describe_images`), never what they show. Asked to summarise for compaction
(``metadata["purpose"] == "compaction"``) it returns an extractive summary: the first
sentence of each message. Asked for the durable facts a person stated (``metadata["purpose"] ==
"memory"``, :mod:`board.memory.extract`) it reads them by rule from the last user message
(:func:`board.language.statements.heard`), so memory writes itself without a key too.

In a board meeting (``metadata["purpose"] == "meeting"``) it takes part the way a real
member would, so a first run shows what a meeting is (:mod:`board.llm.offline_meeting` words it): each
statement is short and spoken from the member's angle about the meeting's question read as an action
(:mod:`board.llm.offline_topic`: "the pilot to open a Pune office", never the question pasted); from round 2
it answers a named colleague by that colleague's angle, never by quoting them, and it ends with a
``STANCE:`` line; the meeting's challenger opposes, states a disagreement in round 2 and raises a
final objection on the draft decision; the others support and state a consensus in round
2 (a ``DISAGREE:`` / ``CONSENSUS:`` line in the statement, or a tool call where the meeting
offers only the tools); the chair frames the meeting and decides a capped, reversible pilot with tasks,
keeping the dissent the meeting asks for. The offline notice is left
to the meeting, which shows it once instead of on every statement. Each member's stance carries a
checkable prediction (:func:`offline_prediction`: an outcome of the pilot with a number in it, a
probability of its own, to be checked the day after the meeting, whose date is read from the prompt's
"Time:" line), so ``/predictions``, ``/resolve``, the resolution request and ``/stats`` can be shown without
a key. In a roundtable (``metadata["purpose"] == "roundtable"``) a debater speaks the same way about the
topic in the system prompt ("## Topic"), never about the debate's headings.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

from board.llm import offline_json, offline_meeting, offline_tools, text_tools
from board.llm.base import ImagePart, LLMRequest, LLMResponse, ToolCall, Usage
from board.llm.offline_topic import topic_of
from board.llm.purpose import CallPurpose

__all__ = [
    "OFFLINE_NOTICE",
    "OFFLINE_TAG",
    "OfflineProvider",
    "describe_images",
    "extractive_summary",
    "offline_prediction",
    "signature_questions",
    "voice_line",
]

OFFLINE_NOTICE = (
    "(offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "
    "\"anthropic:claude-sonnet-4-6\" with ANTHROPIC_API_KEY, or "
    "\"openai:gpt-4o-mini\" with OPENAI_API_KEY, for real answers.)"
)

#: What every answer after the first in a place ends with.
OFFLINE_TAG = "(offline model)"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _paragraphs(soul: str) -> list[str]:
    """Prose paragraphs of the soul: no headings, no bullets, whitespace folded."""
    paragraphs: list[str] = []
    for chunk in re.split(r"\n\s*\n", soul):
        lines = [ln.strip() for ln in chunk.strip().splitlines()]
        lines = [ln for ln in lines if ln and not ln.startswith(("#", "-", "*", ">", "|"))]
        if lines:
            paragraphs.append(" ".join(lines))
    return paragraphs


def voice_line(soul: str) -> str:
    """The soul's first sentence of prose: the role's stance in its own words."""
    for paragraph in _paragraphs(soul):
        sentence = _SENTENCE_END.split(paragraph, maxsplit=1)[0].strip()
        if sentence:
            return sentence
    return ""


def signature_questions(soul: str) -> list[str]:
    """Bullet lines of the soul that are questions."""
    questions = []
    for line in soul.splitlines():
        stripped = line.strip()
        if stripped.startswith(("- ", "* ")) and stripped.endswith("?"):
            questions.append(stripped[2:].strip())
    return questions


def _shorten(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


_PREPOSITIONS = "to|for|with|at|about|of|from|by|on|against|than|like|without|behind|around|before|after"


def _second_to_first_person(sentence: str) -> str:
    """Turn "You are X; you think..." into "I am X; I think..." so the stance reads as speech."""
    replacements = [
        (r"\bYou are\b", "I am"),
        (r"\byou are\b", "I am"),
        (r"\bYou're\b", "I'm"),
        (r"\byou're\b", "I'm"),
        (r"\bYou've\b", "I've"),
        (r"\byou've\b", "I've"),
        (r"\bYour\b", "My"),
        (r"\byour\b", "my"),
        (r"\byours\b", "mine"),
        (r"\byourself\b", "myself"),
        (rf"\b({_PREPOSITIONS}) you\b", r"\1 me"),
        (r"\bYou\b", "I"),
        (r"\byou\b", "I"),
    ]
    for pattern, repl in replacements:
        sentence = re.sub(pattern, repl, sentence)
    return sentence


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _usage(request: LLMRequest, text: str) -> Usage:
    return Usage(
        input_tokens=_estimate_tokens(request.system_text) + sum(_estimate_tokens(m.content) for m in request.messages),
        output_tokens=_estimate_tokens(text),
    )


def extractive_summary(text: str, *, limit_chars: int = 1600) -> str:
    """The first sentence of every ``Who: text`` line, clipped to ``limit_chars`` (newest kept)."""
    lines = []
    for line in text.splitlines():
        who, sep, said = line.partition(": ")
        if not sep or not said.strip():
            continue
        first = _SENTENCE_END.split(said.strip(), maxsplit=1)[0]
        lines.append(f"- {who.strip()}: {_shorten(first, 160)}")
    while lines and sum(len(x) + 1 for x in lines) > limit_chars:
        lines.pop(0)
    return "\n".join(lines)


_ROUND = re.compile(r"^Round (\d+) of at most \d+\.", re.MULTILINE)
_HEARD = re.compile(r"^- (.+?) \(([a-z][a-z0-9_-]*)\)(?:, round \d+)?: (.+?)(?: \[stance: (\w+).*\])?$", re.MULTILINE)
_REQUIRED_DISSENT = re.compile(r"^- ([a-z][a-z0-9_-]*): (\".*\")\s*$", re.MULTILINE)
CHALLENGER_MARK = "You are this meeting's challenger"
STATED_MARK = "a line DISAGREE: {"  # the meeting takes disagreements and consensus inside the statement


_ASKED = re.compile(r"(?:board meeting on|Roundtable on): (.+)$")
_RT_TOPIC = re.compile(r"^## Topic\n(.+)$", re.MULTILINE)
_RT_ROUND = re.compile(r", round (\d+) of \d+\.")
_RT_SAID = re.compile(r"^([A-Z][A-Z0-9 _-]*): ", re.MULTILINE)
_SPECIALIST = re.compile(r"^- ([a-z][a-z0-9_-]*): ([^,\n]+)", re.MULTILINE)


def _roster_names(text: str) -> dict[str, str]:
    """role -> name of the specialists a framing prompt lists ("- finance: Finance, CFO")."""
    return {m.group(1): m.group(2).strip() for m in _SPECIALIST.finditer(text)}


_TODAY = re.compile(r"^- Time: \w+ (\d{4}-\d{2}-\d{2})", re.MULTILINE)
_TOPIC = re.compile(r"^Board meeting on: (.+)$", re.MULTILINE)


def offline_prediction(request: LLMRequest, text: str, *, challenger: bool) -> dict[str, object] | None:
    """The prediction an offline member stakes: an outcome of the pilot's first milestone from its role's
    angle, with a number in it (:func:`board.llm.offline_meeting.prediction_claim`), and a
    probability of the member's own (the challenger doubts it), checkable the day after the meeting (its
    date is the prompt's "Time:" line), so a first run can resolve it. None without a date or a topic."""
    today = _TODAY.search(request.system_text + "\n" + request.context_text)
    topic = _TOPIC.search(text)
    if today is None or topic is None:
        return None
    digest = hashlib.sha256(f"{request.persona.role}:prediction".encode()).digest()
    probability = 0.3 if challenger else 0.55 + (digest[0] % 8) * 0.05
    when = (date.fromisoformat(today.group(1)) + timedelta(days=1)).isoformat()
    return {"claim": offline_meeting.prediction_claim(request.persona.role, topic_of(topic.group(1))),
            "probability": round(probability, 2), "resolve_by": when}


def _meeting_round(text: str) -> int | None:
    match = _ROUND.search(text)
    return int(match.group(1)) if match and text.startswith("Board meeting on:") else None


def _colleagues(text: str, me: str) -> list[tuple[str, str, str]]:
    """(name, role, what they said) of the colleagues a round message quotes."""
    return [(m.group(1), m.group(2), m.group(3)) for m in _HEARD.finditer(text) if m.group(2) != me]


def _required_dissent(text: str) -> list[dict[str, str]]:
    if "Required dissent" not in text:
        return []
    block = text.split("Required dissent", 1)[1].split("\n\n", 1)[0]
    out = []
    for match in _REQUIRED_DISSENT.finditer(block):
        try:
            why = json.loads(match.group(2))
        except json.JSONDecodeError:
            continue
        out.append({"who": match.group(1), "why": f"{_TAG_DISSENT} {why}"})
    return out


_TAG_DISSENT = "[offline]"


def _pixels(image: ImagePart) -> str:
    """``1200x800`` from the picture's header (nothing decoded), or "" when it cannot be read."""
    try:
        from PIL import Image

        with Image.open(io.BytesIO(image.data)) as img:
            return f"{img.width}x{img.height} "
    except Exception:  # noqa: BLE001 - a picture the header of which cannot be read: size unsaid
        return ""


def describe_images(images: Sequence[ImagePart]) -> str:
    """What the offline model honestly sees of pictures: how many, their type, size in pixels and bytes."""
    if not images:
        return ""
    each = [f"{_pixels(i)}{i.mime.removeprefix('image/').upper()}, {max(1, round(len(i.data) / 1024))} KB"
            for i in images]
    count = "1 picture" if len(images) == 1 else f"{len(images)} pictures"
    return f"I was sent {count} ({'; '.join(each)}); the offline model cannot look inside pictures."


_ATTACHED = re.compile(r'^\[(document|voice|audio) attached: "([^"\n]{1,120})"[^\n]*quoted data below', re.MULTILINE)


def describe_attachments(user_text: str) -> str:
    """What the offline model honestly says of files read for it (their text is in the message): their
    names, and that it does not weigh what they say."""
    found = [(kind, name) for kind, name in _ATTACHED.findall(user_text)]
    if not found:
        return ""
    names = ", ".join(f"{name} ({'transcribed' if kind != 'document' else 'its text'})" for kind, name in found)
    return f"I was given {names} in this message; the offline model does not weigh what it says."


class OfflineProvider:
    """A deterministic stand-in model that speaks with the role's soul."""

    name = "offline"

    def _notice(self, request: LLMRequest) -> str:
        """The whole notice the first time in the request's place, then only the tag."""
        # The places given the whole notice; kept here so that subclasses need not call an __init__.
        told: set[str] = self.__dict__.setdefault("_told", set())
        key = str(request.metadata.get("session_key") or "")
        parts = key.split(":")
        place = ":".join(parts[2:]) if len(parts) > 2 else "owner"  # main, board:<role>: the owner's own
        if place in told:
            return OFFLINE_TAG
        told.add(place)
        return OFFLINE_NOTICE

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Answer the last user message in the persona's voice (or call a tool it was told to)."""
        if request.metadata.get("purpose") == "compaction":
            last = request.messages[-1].content if request.messages else ""
            text = extractive_summary(last)
            return LLMResponse(text=text, model="offline", usage=_usage(request, text))
        if request.metadata.get("purpose") == CallPurpose.EXTRACTION:
            # imported here: the statement reader compiles the secret filter's patterns (~35 ms), which loading
            # the config (every `sabha` command names the offline provider) should not pay
            from board.language.statements import heard

            last = request.messages[-1].content if request.messages else ""
            facts = [{"key": s.key, "value": s.value, "kind": s.kind.value} for s in heard(last)]
            text = json.dumps({"facts": facts}, ensure_ascii=False)
            return LLMResponse(text=text, model="offline", usage=_usage(request, text), stop_reason="end_turn")
        if request.messages and request.messages[-1].role == "tool":
            return self._after_tools(request)
        if request.tools and request.tool_choice != "none" and request.messages:
            calls = self._requested_calls(request) or self._meeting_calls(request) or self._looked_up(request)
            if calls:
                return LLMResponse(text="", model="offline", tool_calls=calls, usage=_usage(request, ""),
                                   stop_reason="tool_use")
        return self._answer(request)

    @staticmethod
    def _requested_calls(request: LLMRequest) -> tuple[ToolCall, ...]:
        last = request.messages[-1]
        if last.role != "user" or "[TOOL:" not in last.content.upper():
            return ()
        offered = {t.name for t in request.tools}
        parsed = text_tools.parse(last.content, id_prefix=f"offline-{len(request.messages)}")
        return tuple(c for c in parsed.calls if c.name in offered)

    @staticmethod
    def _looked_up(request: LLMRequest) -> tuple[ToolCall, ...]:
        """A chat question that plainly asks for what an offered read-only tool gives: call it once
        (:mod:`board.llm.offline_tools`)."""
        last = request.messages[-1]
        if request.metadata.get("purpose", "turn") != "turn" or last.role != "user":
            return ()
        call = offline_tools.intent_call(last.content, request.tools, call_id=str(len(request.messages)))
        return (call,) if call is not None else ()

    @staticmethod
    def _scoreboard_entry(request: LLMRequest, text: str) -> tuple[str, dict[str, object]] | None:
        """In round 2 of a meeting: the challenger's disagreement, else one consensus for the supporters."""
        if _meeting_round(text) != 2:
            return None
        me = request.persona.role
        colleagues = _colleagues(text, me)
        if not colleagues:
            return None
        if CHALLENGER_MARK in text:
            name, role, _said = colleagues[0]
            questions = signature_questions(request.persona.soul) or ["What are we assuming?"]
            return "log_disagreement", {"target_participant_name": role, "topic": "an untested core assumption",
                                        "reasoning": f"{name} assumes what nobody has checked. {questions[0]}",
                                        "severity": 4}
        supporters = sorted({m.group(2) for m in _HEARD.finditer(text) if m.group(4) == "support"} - {me})
        if not supporters or me > supporters[0]:  # one member speaks for the supporters: the first by name
            return None
        return "log_consensus", {"participants": [me, *supporters], "topic": "start with a small, measurable pilot",
                                 "strength": 4}

    @classmethod
    def _meeting_calls(cls, request: LLMRequest) -> tuple[ToolCall, ...]:
        """A meeting that asks for the scoreboard by tool only (no ``DISAGREE:`` line offered): call it."""
        if request.metadata.get("purpose") != "meeting" or request.messages[-1].role != "user":
            return ()
        text = request.messages[-1].content
        entry = cls._scoreboard_entry(request, text)
        if entry is None or STATED_MARK in text or entry[0] not in {t.name for t in request.tools}:
            return ()
        name, args = entry
        kind = "disagree" if name == "log_disagreement" else "consensus"
        return (ToolCall(f"offline-{request.persona.role}-{kind}", name, args, raw_arguments=json.dumps(args)),)

    def _meeting_statement(self, request: LLMRequest, text: str, round_no: int) -> LLMResponse:
        """A member's statement in a meeting round (:func:`board.llm.offline_meeting.statement`), ending
        with its stance."""
        persona = request.persona
        challenger = CHALLENGER_MARK in text
        colleagues = _colleagues(text, persona.role)
        colleague = None
        if round_no > 1 and colleagues:
            seed = hashlib.sha256(persona.role.encode()).digest()[1]  # stable: the same colleague every run
            name, role, _said = colleagues[(seed + round_no) % len(colleagues)]
            colleague = (name, role)
        topic = _TOPIC.search(text)
        voice = offline_meeting.short_voice(_second_to_first_person(voice_line(persona.soul)), persona.name)
        body, assumption = offline_meeting.statement(
            role=persona.role, voice=voice, questions=signature_questions(persona.soul),
            topic=topic_of(topic.group(1) if topic else ""), round_no=round_no, colleague=colleague,
            challenger=challenger, said=text.partition("Already said in this round:")[2])
        position, confidence = ("oppose", 0.7) if challenger else ("support", 0.6 + 0.05 * min(round_no, 3))
        held: dict[str, object] = {"position": position, "confidence": round(confidence, 2), "assumption": assumption}
        prediction = offline_prediction(request, text, challenger=challenger)
        if prediction is not None:
            held["prediction"] = prediction
        line = json.dumps(held, ensure_ascii=False)
        entry = self._scoreboard_entry(request, text) if STATED_MARK in text else None
        if entry is not None:  # stated in the statement itself: the round needs no second turn
            label = "DISAGREE" if entry[0] == "log_disagreement" else "CONSENSUS"
            body += f"\n{label}: {json.dumps(entry[1], ensure_ascii=False)}"
        body += f"\nSTANCE: {line}"
        return LLMResponse(text=body, model="offline", usage=_usage(request, body), stop_reason="end_turn")

    def _meeting_review(self, request: LLMRequest) -> LLMResponse:
        """The challenger's look at the draft decision: one final objection, in its own voice."""
        questions = signature_questions(request.persona.soul) or ["What are we assuming here?"]
        text = f"OBJECTION: {questions[-1]} The draft commits before that is answered; record it."
        return LLMResponse(text=text, model="offline", usage=_usage(request, text), stop_reason="end_turn")

    def _after_tools(self, request: LLMRequest) -> LLMResponse:
        if request.metadata.get("purpose") == "meeting":
            prompt = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
            round_no = _meeting_round(prompt)
            if round_no is not None:
                return self._meeting_statement(request, prompt, round_no)
        persona = request.persona
        stance = _second_to_first_person(voice_line(persona.soul)) or f"I am {persona.name}."
        looked = offline_tools.cited_answer(request.messages, request.tools)
        if looked is not None:
            text = " ".join([stance, looked, self._notice(request)])
            return LLMResponse(text=text, model="offline", usage=_usage(request, text), stop_reason="end_turn")
        results = []
        for message in reversed(request.messages):
            if message.role != "tool":
                break
            results.append(_shorten(message.content, 300))
        text = " ".join([stance, "The tools returned: " + " | ".join(reversed(results)), self._notice(request)])
        return LLMResponse(text=text, model="offline", usage=_usage(request, text))

    @staticmethod
    def _structured(request: LLMRequest, user_text: str, schema: dict[str, Any]) -> LLMResponse:
        """One JSON object of ``schema``: a meeting's framing and decision, a roundtable's tasks, spoken
        about the question's topic (:mod:`board.llm.offline_meeting`); anything else a valid instance
        built from the persona (:mod:`board.llm.offline_json`)."""
        persona = request.persona
        first_line = user_text.strip().splitlines()[0] if user_text.strip() else ""
        asked = _ASKED.search(first_line)
        question = asked.group(1) if asked else (first_line.rpartition(": ")[2] or first_line)
        topic, props = topic_of(question), schema.get("properties", {})
        in_meeting = request.metadata.get("purpose") == "meeting"
        if in_meeting and "action_items" in props and "recommendation" in props:
            owners = list(props["action_items"].get("items", {}).get("properties", {}).get("owner", {})
                          .get("enum") or [persona.role])
            made = offline_meeting.decision(topic, owners, _required_dissent(user_text))
            text = offline_json.with_due_dates(json.dumps(made, ensure_ascii=False))  # make run sees a reminder
        elif in_meeting and "agenda" in props and "questions" in props:
            roles = list(props["questions"].get("required") or [])
            text = json.dumps(offline_meeting.framing(roles, _roster_names(user_text), topic), ensure_ascii=False)
        elif request.metadata.get("purpose") == "roundtable" and "tasks" in props:
            owners = list(props["tasks"].get("items", {}).get("properties", {}).get("owner", {}).get("enum") or [])
            text = offline_meeting.roundtable_tasks(topic, owners or ["Orchestrator"])
        else:
            fixed = {"dissent": _required_dissent(user_text)} if in_meeting and "dissent" in props else {}
            text = offline_json.instance_for(schema, speaker=persona.name, topic=_shorten(question, 80),
                                             questions=signature_questions(persona.soul), fixed=fixed)
        return LLMResponse(text=text, model="offline", usage=_usage(request, text), stop_reason="end_turn")

    def _roundtable_statement(self, request: LLMRequest) -> LLMResponse:
        """A debater's turn in the roundtable: about the topic in the system prompt (never the debate's
        scaffolding), answering the speaker before it by name and angle from the second turn on."""
        persona = request.persona
        topic = _RT_TOPIC.search(request.system_text)
        turn = _RT_ROUND.search(request.context_text)
        round_no = int(turn.group(1)) if turn else 1
        said = [m.group(1) for m in _RT_SAID.finditer("\n".join(m.content for m in request.messages))]
        earlier = [name for name in said if name != persona.name.upper()]
        colleague = (earlier[-1].title(), earlier[-1].lower()) if earlier else None
        voice = offline_meeting.short_voice(_second_to_first_person(voice_line(persona.soul)), persona.name)
        body, _assumption = offline_meeting.statement(
            role=persona.role, voice=voice, questions=signature_questions(persona.soul),
            topic=topic_of(topic.group(1) if topic else ""), round_no=round_no if colleague else 1,
            colleague=colleague, challenger=False)
        text = f"{body} {self._notice(request)}"
        return LLMResponse(text=text, model="offline", usage=_usage(request, text), stop_reason="end_turn")

    def _answer(self, request: LLMRequest) -> LLMResponse:
        user_text = ""
        for message in reversed(request.messages):
            if message.role == "user":
                user_text = message.content
                break
        persona = request.persona
        questions = signature_questions(persona.soul)
        schema = request.metadata.get("response_schema")
        in_meeting = request.metadata.get("purpose") == "meeting"
        if isinstance(schema, dict):
            return self._structured(request, user_text, schema)
        if request.metadata.get("purpose") == "roundtable" and request.messages:
            return self._roundtable_statement(request)
        if in_meeting:
            round_no = _meeting_round(user_text)
            if round_no is not None:
                return self._meeting_statement(request, user_text, round_no)
            if "draft decision" in user_text and CHALLENGER_MARK in user_text:
                return self._meeting_review(request)
        stance = _second_to_first_person(voice_line(persona.soul)) or f"I am {persona.name}."
        digest = hashlib.sha256(user_text.encode("utf-8")).digest()
        parts = [stance]
        if user_text.strip():
            parts.append(f'On "{_shorten(user_text.strip().splitlines()[0])}":')
        last = request.messages[-1] if request.messages else None
        if last is not None and last.role == "user" and last.images:
            parts.append(describe_images(last.images))
        if last is not None and last.role == "user" and (given := describe_attachments(last.content)):
            parts.append(given)
        if questions:
            parts.append(questions[digest[0] % len(questions)])
        turns = sum(1 for m in request.messages if m.role == "user")
        if turns > 1:
            parts.append(f"(I have {turns - 1} earlier message(s) of ours in view.)")
        if not in_meeting:  # a meeting shows the notice once, not on every statement
            parts.append(self._notice(request))
        text = " ".join(parts)
        return LLMResponse(text=text, model="offline", usage=_usage(request, text), stop_reason="end_turn")
