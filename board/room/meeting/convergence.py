"""Pure reads of the record: who stands where, who must be in the dissent, has the board converged.

Functions of :class:`MeetingContext` and :class:`MeetingState` only, no awaits: unit-testable
without a speaker. Convergence is computed from the members' own stances (everyone present
supports, no serious disagreement in the round), never from a consensus someone logged on
others' behalf: :func:`settle_consensus` keeps a consensus entry only for the participants
whose own stance agrees.
"""

from __future__ import annotations

import re

from board.room.decision import Stance, format_stance
from board.room.meeting.context import MeetingContext
from board.room.meeting.state import MeetingState
from board.workspace.souls import AgentProfile

__all__ = [
    "abridge",
    "converged",
    "dissent_reason",
    "dissenters",
    "latest_stance",
    "latest_statement",
    "models_differ",
    "present",
    "said_by",
    "settle_consensus",
    "stance_table",
    "unanimous",
]

_SENTENCES = re.compile(r"(?<=[.!?])\s+")


def abridge(text: str, limit: int) -> str:
    """Shorten ``text`` to about ``limit`` characters at sentence boundaries, keeping its
    opening and its conclusion (the last sentences, where a mitigation or a verdict sits)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    sentences = [x for x in _SENTENCES.split(flat) if x]
    if len(sentences) < 2:
        cut = flat[: max(limit - 12, 1)]
        return cut.rstrip() + " (abridged)"
    head: list[str] = []
    tail: list[str] = []
    budget = limit - 14
    # the conclusion first (up to 60% of the room), then the opening
    for sentence in reversed(sentences[1:]):
        if sum(len(x) + 1 for x in tail) + len(sentence) > budget * 0.6 and tail:
            break
        tail.insert(0, sentence)
    used = sum(len(x) + 1 for x in tail)
    for sentence in sentences[: len(sentences) - len(tail)]:
        if used + len(sentence) + 1 > budget and head:
            break
        head.append(sentence)
        used += len(sentence) + 1
    if len(head) + len(tail) >= len(sentences):
        return " ".join(head + tail)
    text_out = " ".join(head) + " [...] " + " ".join(tail)
    if len(text_out) > limit * 1.5:  # one enormous sentence: cut it
        text_out = text_out[: int(limit * 1.5)].rstrip() + "…"
    return text_out + " (abridged)"


def present(m: MeetingContext, s: MeetingState) -> list[AgentProfile]:
    """Specialists still in the meeting."""
    return [p for p in m.specialists if p.role not in s.absent]


def models_differ(m: MeetingContext, s: MeetingState) -> bool:
    """True when members speak with different models (then output names the model)."""
    return len(set(m.models.values()) | set(s.spoke_with.values())) > 1


def latest_stance(s: MeetingState, role: str) -> Stance | None:
    """The stance ``role`` gave most recently (None: never stated one)."""
    for round_stances in reversed(s.stances):
        if role in round_stances:
            return round_stances[role]
    return None


def latest_statement(s: MeetingState, role: str, before_round: int) -> tuple[int, str] | None:
    """(round, text) of what ``role`` said last before ``before_round``."""
    for number in range(min(before_round, len(s.rounds) + 1) - 1, 0, -1):
        text = s.rounds[number - 1].get(role)
        if text is not None:
            return number, text
    return None


def unanimous(s: MeetingState, round_no: int) -> bool:
    """Every member who spoke in ``round_no`` supports (at least two of them)."""
    stances = s.stances[round_no - 1] if 0 < round_no <= len(s.stances) else {}
    return len(stances) >= 2 and all(st is not None and st.position == "support" for st in stances.values())


def converged(s: MeetingState) -> bool:
    """Positions have converged when, from round 2 on, every member who spoke in the round supports
    by their own stance and nobody logged a serious disagreement (severity >= 3) in it. Consensus
    logged on others' behalf counts for nothing here."""
    round_no = s.current_round
    if round_no < 2 or (s.challenge_round is not None and round_no < s.challenge_round):
        return False
    serious = [d for d in s.disagreements if d["round"] == round_no and d["severity"] >= 3]
    return not serious and unanimous(s, round_no)


def settle_consensus(m: MeetingContext, s: MeetingState, round_no: int) -> None:
    """A consensus entry holds only for the participants whose own stance agrees
    (writes ``holds_for`` / ``not_for`` into the round's entries)."""
    profiles = m.profiles
    for entry in s.consensus:
        if entry["round"] != round_no:
            continue
        holds: list[str] = []
        rejects: list[str] = []
        for role in entry["participants"]:
            stance = latest_stance(s, role) if role in profiles else None
            (holds if stance is not None and stance.position != "oppose" else rejects).append(role)
        entry["holds_for"], entry["not_for"] = holds, rejects


def said_by(s: MeetingState, role: str) -> str:
    """Everything ``role`` said in the meeting: statements, disagreements, stance assumptions."""
    parts = [r[role] for r in s.rounds if role in r]
    parts += [d["reasoning"] + " " + d["topic"] for d in s.disagreements if d["role"] == role]
    parts += [st.assumption for r in s.stances for who, st in r.items() if who == role and st is not None]
    return "\n".join(parts)


def dissenters(m: MeetingContext, s: MeetingState) -> dict[str, str]:
    """Members who must appear in the dissent -> what they said: a final stance of oppose, or an
    unresolved disagreement of severity >= 3 (resolved only by coming round to support)."""
    out: dict[str, str] = {}
    for profile in m.specialists:
        role = profile.role
        final = latest_stance(s, role)
        serious = [d for d in s.disagreements if d["role"] == role and d["severity"] >= 3]
        if (final is not None and final.position == "oppose") or \
                (serious and (final is None or final.position != "support")):
            out[role] = said_by(s, role)
    return out


def dissent_reason(s: MeetingState, role: str) -> str:
    """A dissenter's reasoning in their own words: their serious disagreement, else the conclusion
    of their last statement, with the assumption their stance rests on."""
    serious = [d for d in s.disagreements if d["role"] == role and d["severity"] >= 3]
    latest = latest_statement(s, role, len(s.rounds) + 1)
    stance = latest_stance(s, role)
    if serious:
        why = f"{serious[-1]['reasoning']} (on {serious[-1]['topic']}, severity {serious[-1]['severity']})"
    elif latest is not None:
        why = abridge(latest[1], 320)
    else:
        why = "objected"
    if stance is not None and stance.assumption not in why:
        why += f"; {'opposes' if stance.position == 'oppose' else stance.position}, resting on: {stance.assumption}"
    return why


def stance_table(m: MeetingContext, s: MeetingState) -> str:
    """Each member's stance, round by round."""
    lines = []
    for profile in m.specialists:
        history = [f"round {n}: {format_stance(r[profile.role])}" for n, r in enumerate(s.stances, start=1)
                   if profile.role in r]
        if history:
            lines.append(f"- {profile.name} ({profile.role}): " + "; ".join(history))
    return "\n".join(lines)
