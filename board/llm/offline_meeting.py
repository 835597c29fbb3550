"""What the offline model says in a board meeting and a roundtable: short statements, each from its
role's angle, a decision that says what to do, and predictions a person can resolve.

Every member speaks about one thing, the pilot named after the meeting's question
(:mod:`board.llm.offline_topic`: "Should we open a Pune office?" is *the pilot to open a Pune office*),
never the question pasted back. A statement is the member's short voice (the soul's first clause), its
question of the round (one of the soul's "questions you always ask", another each round) and its
condition; from round 2 it first answers a colleague by name and that colleague's *angle* in a few words
of its own ("Finance is right about the cost"), never by quoting what the colleague said, so nothing
nests. :data:`ANGLES` gives the shipped roles their angle; any other role speaks from its soul alone.

The chair's decision (:func:`decision`) recommends a capped, reversible pilot of the action with a kill
criterion, with real tasks; each member predicts an outcome of the pilot's first milestone with a number
in it (:func:`prediction_claim`), the prediction's resolve-by date beside it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from board.llm.offline_topic import Topic

__all__ = [
    "ANGLES",
    "Angle",
    "decision",
    "framing",
    "prediction_claim",
    "roundtable_tasks",
    "short_question",
    "short_voice",
    "statement",
]


@dataclass(frozen=True)
class Angle:
    """A role's angle: what colleagues call its point (``focus``), the condition it supports a pilot on,
    the assumption its stance rests on, and the outcome it predicts (``{pilot}`` filled in)."""

    focus: str
    condition: str
    assumption: str
    outcome: str
    #: which way of taking up a colleague's point the role starts from (:data:`_AGREE`): the roles of a
    #: roster differ, so the members of one round do not echo each other
    turn: int = 0


#: The shipped roles' angles (rosters board, sabha and roundtable); other roles use :data:`_ANY`.
ANGLES: dict[str, Angle] = {
    "research": Angle("the evidence", "we label what we know and what we only guess before it starts",
                      "the demand we expect is real, not hoped for",
                      "at least 3 of 5 customers we ask say {pilot} would change what they buy", turn=0),
    "content": Angle("how customers will hear it", "we can say in one sentence why a customer should care",
                     "customers would notice and care",
                     "at least 2 of 5 customers can retell the story of {pilot} in their own words", turn=1),
    "finance": Angle("the cost", "it is costed all-in, people-time included, and capped",
                     "the all-in cost fits our runway",
                     "{pilot} is costed all-in at under 3 months of runway", turn=2),
    "strategy": Angle("what it rules out", "it keeps our options open for the next twelve months",
                      "it serves the goal we set for the year",
                      "at least 4 members sign off {pilot} as serving the year's goal", turn=3),
    "critic": Angle("the worst case", "we agree in advance what result would make us stop",
                    "nothing fatal is hidden in the plan",
                    "{pilot} has a kill criterion with 1 number in it, agreed in writing", turn=0),
    "investor": Angle("the return", "the first paying customer is in sight within a quarter",
                      "someone will pay for it soon",
                      "at least 1 customer agrees to pay for {pilot}", turn=0),
    "cto": Angle("what it takes to build", "the first version fits in two engineer-weeks on tools we know",
                 "we can build it with what we know",
                 "the build plan for {pilot} fits in 2 engineer-weeks", turn=1),
    "analyst": Angle("the sources", "every figure in the plan has a source beside it",
                     "the figures we rely on hold up",
                     "at least 3 figures behind {pilot} are checked against a source", turn=2),
    "artist": Angle("the story", "it is something people would talk about at dinner",
                    "people would talk about it", "at least 5 people ask about {pilot} unprompted", turn=0),
    "business": Angle("the revenue", "we price the cheapest test first and know what a lead costs",
                      "a lead costs less than a customer is worth",
                      "the cheapest test of {pilot} brings 10 qualified leads", turn=1),
    "tech": Angle("what can be automated", "the first step runs without adding headcount",
                  "the work can be automated",
                  "the first step of {pilot} runs end to end with 0 manual steps", turn=2),
}
_ANY = Angle("their point", "we agree how to measure it before it starts", "it can be measured",
             "{pilot} has 1 named owner and 1 measurable first milestone")

_OPPOSE = ("Until that is answered, I oppose committing; a reversible pilot with a kill criterion is the most "
           "I would back.")


def short_voice(voice: str, name: str) -> str:
    """The soul's first clause ("I think in numbers"), at most 16 words; ``I am <name>`` without one."""
    clause = re.split(r"[:;,\u2014(]| - ", voice, maxsplit=1)[0].strip().rstrip(".")
    words = clause.split()
    return " ".join(words[:16]) if words else f"I am {name}"


def short_question(question: str) -> str:
    """The question of a soul's bullet without its lead-in label ("Check the fit. Does ...?")."""
    return re.split(r"(?<=[.!:])\s+(?=[A-Z])", question.strip())[-1]


#: How a supporter takes up a colleague's point, and the words that tell it apart.
_AGREE = (("{name} is right about {focus}; my part is {mine}.", "; my part is"),
          ("I agree with {name} on {focus}, and I would add {mine}.", "and I would add"),
          ("{name}'s point on {focus} holds; what I watch is {mine}.", "what I watch is"),
          ("Taking {name}'s point on {focus} further: {mine} matters as much.", "matters as much"))


def _agreeing(role: str, round_no: int, said: str) -> str:
    """The member's way of taking up a point this round: one nobody used yet in ``said`` (what was
    already said in this round), so a round does not echo."""
    start = ANGLES[role].turn + round_no if role in ANGLES else _seed(role) + round_no
    turns = [_AGREE[(start + i) % len(_AGREE)] for i in range(len(_AGREE))]
    return next((t for t, marker in turns if marker not in said), turns[0][0])


def _seed(role: str) -> int:
    """A stable number of the role (the same in every run and process)."""
    return hashlib.sha256(role.encode()).digest()[0]


def _pick(questions: list[str], role: str, round_no: int) -> str:
    """The member's question of ``round_no``: another one each round, stable across runs."""
    usable = [q for q in (short_question(x) for x in questions) if len(q.split()) <= 18] or \
        ["What are we assuming here?"]
    return usable[(_seed(role) + round_no - 1) % len(usable)]


def statement(*, role: str, voice: str, questions: list[str], topic: Topic, round_no: int,
              colleague: tuple[str, str] | None, challenger: bool, said: str = "") -> tuple[str, str]:
    """A member's statement in ``round_no`` (answering ``colleague`` (name, role) from round 2, in words
    not yet used in ``said``, what was already said in the round) and the assumption its stance rests on."""
    angle = ANGLES.get(role, _ANY)
    question = _pick(questions, role, round_no)
    if colleague is None or round_no == 1:
        parts = [f"{voice}. On {topic.whether}: {question}"]
    else:
        name, their = colleague
        focus = ANGLES.get(their, _ANY).focus
        if challenger:
            parts = [f"{name}'s case on {focus} rests on an assumption we have not tested. {question}"]
        else:
            parts = [_agreeing(role, round_no, said).format(name=name, focus=focus, mine=angle.focus) + f" {question}"]
    if challenger:
        parts.append(_OPPOSE)
    elif round_no == 1:
        parts.append(f"I support a small pilot if {angle.condition}.")
    else:
        parts.append(f"My condition stands: {angle.condition}.")
    assumption = "the plan's core assumption holds untested" if challenger else angle.assumption
    return " ".join(parts), assumption


def prediction_claim(role: str, topic: Topic) -> str:
    """The outcome ``role`` predicts for the pilot, with a number in it (its date is the prediction's)."""
    return ANGLES.get(role, _ANY).outcome.format(pilot=topic.pilot)


def framing(roles: list[str], names: dict[str, str], topic: Topic) -> dict[str, Any]:
    """The chair's agenda and one question per specialist, each from that specialist's angle."""
    agenda = (f"[offline] Decide {topic.whether}: what it costs, what the evidence says, what could go wrong, "
              "and the first step.")
    questions = {r: f"[offline] {names.get(r, r)}, from your angle ({ANGLES.get(r, _ANY).focus}): what must hold "
                    f"for us to {topic.action}?" for r in roles}
    return {"agenda": agenda, "questions": questions}


def decision(topic: Topic, owners: list[str], dissent: list[dict[str, str]]) -> dict[str, Any]:
    """The chair's decision: a capped, reversible pilot of the action, with tasks a person can do."""
    tasks = [f"Write one page for {topic.pilot}: its budget cap, first milestone and kill criterion",
             f"Find 3 comparable cases for {topic.pilot}, each labelled verified, reported or guessed",
             f"Ask 5 customers whether {topic.pilot} would change what they buy",
             f"Cost {topic.pilot} all-in, people-time included",
             f"Name who owns {topic.pilot} day to day"]
    count = min(len(owners), 5) if len(owners) >= 3 else 3
    return {
        "recommendation": f"[offline] Run a 3-month pilot to {topic.action}, with a budget cap and a kill "
                          "criterion agreed up front, and commit further only if it meets its first milestone.",
        "rationale": "Most of the board backs a small, measurable first step; the dissent asks for a kill criterion "
                     "before any commitment, so the pilot is capped and reversible." if dissent else
                     "The board backs a small, measurable first step, so the pilot is capped and reversible.",
        "consensus_points": ["Start with a small, measurable pilot before any full commitment"],
        "dissent": dissent,
        "action_items": [{"task": tasks[i], "owner": owners[i % len(owners)]} for i in range(count)],
        "open_questions": [f"What result from {topic.pilot} would make us stop?"],
    }


def roundtable_tasks(topic: Topic, owners: list[str]) -> str:
    """The summarizer's JSON: three tasks about the pilot, owners from ``owners`` in order."""
    tasks = [f"Sketch {topic.pilot} on one page today: who it reaches and what it costs",
             f"List where the data for {topic.pilot} already lives",
             f"Run the cheapest test of {topic.pilot} within two weeks and count the replies"]
    return json.dumps({"tasks": [{"task": t, "owner": owners[i % len(owners)]} for i, t in enumerate(tasks)]},
                      ensure_ascii=False)
