"""Phase 3: the chair's synthesis, validated; the dissent restored; a best effort when it fails.

The chair gets the whole record (rounds, stances, disagreements, consensus that holds, the
peer ranking, who is absent, and the dissent it must carry) and writes the decision as one
JSON object; an invalid one is asked for again once. Every member whose final stance is
oppose, or who logged a serious disagreement and did not come round, must be in the dissent
in their own words: if the chair still leaves one out, Sabha restores it and says so. When
the chair's output is unusable (or the meeting ran out of time or money) the decision is
assembled from the record and marked best effort.

The chair also sees each member's track record (:func:`track_block`: the Brier score over their
resolved predictions and how many, or "too few resolved predictions"; never the demo history's made-up
ones) and may weigh the members' views by it, saying so in the rationale. The records are read while the
chair frames the meeting (``MeetingState.track``, started by :mod:`board.room.meeting.frame`), so the
synthesis does not wait for them; a meeting resumed after its framing reads them here.
"""

from __future__ import annotations

import json
import logging

from board.decisions.predictions.scoring import track_line
from board.decisions.predictions.tally import stored_track_records
from board.room.decision import (
    ActionItem,
    Decision,
    DecisionProblem,
    Dissent,
    cites,
    decision_schema,
    validate_decision,
)
from board.room.meeting.context import MeetingContext
from board.room.meeting.convergence import abridge, dissent_reason, dissenters, stance_table
from board.room.meeting.events import Stop
from board.room.meeting.limits import Limits, ask, in_phase
from board.room.meeting.review import ranking_lines
from board.room.meeting.seat import chair_block, read_contributions
from board.room.meeting.state import MeetingState

__all__ = ["best_effort", "restore_dissent", "run", "synthesis_message", "track_block"]

log = logging.getLogger("sabha.meeting")


def _scoreboard_parts(s: MeetingState) -> list[str]:
    parts = []
    if s.disagreements:
        parts.append("Disagreements logged:\n" + "\n".join(
            f"- {d['role']} vs {d['target']} on {d['topic']} (severity {d['severity']}): {d['reasoning']}"
            for d in s.disagreements))
    if s.consensus:
        parts.append("Consensus logged (it holds only for those whose own stance agrees):\n" + "\n".join(
            f"- {c['topic']}: holds for {', '.join(c.get('holds_for', c['participants'])) or 'nobody'}"
            + (f"; not for {', '.join(c['not_for'])}" if c.get("not_for") else "")
            + f" (strength {c['strength']})" for c in s.consensus))
    return parts


async def track_block(m: MeetingContext) -> str:
    """The members' track records for the chair ("" when none of them has made a prediction yet); the made-up
    predictions of ``sabha demo`` (:mod:`board.room.demo_history`) are no record."""
    members = {p.role for p in m.specialists}
    minimum = m.settings.min_resolved_predictions
    try:  # the stored tallies: one read, however many predictions (board.decisions.predictions.tally)
        records = await stored_track_records(m.store.db, min_resolved=minimum, roles=members, demo=False)
    except Exception as exc:  # noqa: BLE001 - the record is an aid; a failing read must not stop the decision
        log.warning("meeting %s: reading the track records failed (%s)", m.id, exc)
        return ""
    if not records:
        return ""
    return ("Track records of the members, from their earlier predictions that were resolved (Brier score: 0 is "
            "perfect, 0.25 is always saying 50%; lower is better):\n"
            + "\n".join("- " + track_line(r, minimum) for r in records)
            + "\nYou may weigh each member's view by their track record; if you do, say so in the rationale "
            "(whose record, its Brier score and n). Do not weigh a record marked too few.")


def synthesis_message(m: MeetingContext, s: MeetingState, track: str = "") -> str:
    """What the chair is asked to decide on (a pure function of the record and ``track``, the members'
    track records from :func:`track_block`)."""
    parts = [f"You chaired a board meeting on: {m.topic}", f"Agenda:\n{s.agenda}"]
    for number, statements in enumerate(s.rounds, start=1):
        lines = "\n".join(f"- {m.profiles[r].name} ({r}): {abridge(t, m.settings.abridge_chars * 2)}"
                          for r, t in statements.items())
        parts.append(f"Round {number}{' (the case against)' if number == s.challenge_round else ''}:\n{lines}")
    if any(s.stances):
        parts.append("Stances, by the members themselves:\n" + stance_table(m, s))
    parts += _scoreboard_parts(s)
    if s.peer_ranking:
        parts.append("Peer review of round 1 (anonymised; best first):\n" + ranking_lines(s.peer_ranking))
    if s.absent:
        parts.append("Absent: " + ", ".join(f"{r} ({why})" for r, why in s.absent.items()))
    if at_table := chair_block(m, s):  # what the owner and participants wrote in (board.room.meeting.seat)
        parts.append(at_table)
    if track:
        parts.append(track)
    required = dissenters(m, s)
    if required:
        parts.append("Required dissent (each must appear in dissent with their own reasoning):\n" + "\n".join(
            f"- {role}: {json.dumps(dissent_reason(s, role), ensure_ascii=False)}" for role in required))
    parts.append(
        "Write the board's decision as one JSON object with keys recommendation, rationale, consensus_points "
        "(list of strings), dissent (list of {who, why}: a minority report of everyone who opposed or logged a "
        "serious disagreement, each in their own words; never drop an objection), action_items (3 to 5 of "
        f"{{task, owner, due}} where owner is one of {', '.join(m.owners())} and due says by when, e.g. "
        "\"by 2026-12-15\", \"in two weeks\", \"friday\"), open_questions (list of strings). "
        "JSON only."
    )
    return "\n\n".join(parts)


def restore_dissent(s: MeetingState, decision: Decision, required: dict[str, str]) -> Decision:
    """Put every dissenter the chair dropped (or reduced to a placeholder) back, in their own words."""
    kept = [d for d in decision.dissent if d.who not in required or cites(d.why, required[d.who])]
    notes = list(decision.notes)
    for role in required:
        if not any(d.who == role for d in kept):
            kept.append(Dissent(who=role, why=dissent_reason(s, role)))
            notes.append(f"The dissent of {role} was restored by Sabha from their own words: the chair's "
                         "decision left it out or reduced it to a placeholder.")
    return decision.model_copy(update={"dissent": kept, "notes": notes})


def best_effort(m: MeetingContext, s: MeetingState, raw: str) -> Decision:
    """A decision assembled from the record when the chair's output was unusable."""
    participants = [p for p in m.specialists if p.role not in s.absent] or list(m.specialists)
    last = s.rounds[-1] if s.rounds else {}
    recommendation = abridge(raw, 400) if raw.strip() else f"No validated recommendation on {m.topic}."
    dissent = [Dissent(who=role, why=dissent_reason(s, role)) for role in dissenters(m, s)]
    for d in s.disagreements:
        if not any(x.who == d["role"] for x in dissent):
            dissent.append(Dissent(who=d["role"], why=f"disagreed with {d['target']} on {d['topic']}: "
                                                      f"{d['reasoning']}"))
    items = [ActionItem(task=f"Follow up on {p.name}'s position: "
                             f"{abridge(last.get(p.role, s.questions.get(p.role, m.topic)), 160)}",
                        owner=p.role) for p in participants[:5]]
    while len(items) < 3:
        items.append(ActionItem(task=f"Bring {m.topic} back to the board with the missing facts",
                                owner=m.chair.role))
    return Decision(
        recommendation=recommendation,
        rationale="Assembled by Sabha from the meeting record because the chair's decision could not be validated.",
        consensus_points=[c["topic"] for c in s.consensus if c.get("holds_for", c["participants"])],
        dissent=dissent,
        action_items=items,
        open_questions=[f"{r}: {why}" for r, why in s.absent.items()],
        best_effort=True,
    )


async def _drafts(limits: Limits, participants: list[str], required: dict[str, str],
                  track: str = "") -> tuple[Decision | None, str]:
    """Up to two attempts at a valid decision: (the decision or None, the last text the chair gave)."""
    m, s = limits.m, limits.s
    owners = m.owners()
    schema = decision_schema(owners)
    message = synthesis_message(m, s, track)
    last_text = ""
    for attempt in (1, 2):
        try:
            utterance = await ask(limits, m.chair.role, message, schema=schema)
        except Stop:
            break
        except Exception as exc:  # noqa: BLE001
            log.warning("meeting %s: synthesis call failed (%s)", m.id, exc)
            break
        if utterance.degraded:  # its text is an apology, not a decision; asking again will not help
            log.warning("meeting %s: the chair's model is unavailable; assembling a best-effort decision", m.id)
            break
        last_text = utterance.text
        try:
            return validate_decision(last_text, participants=participants, owners=owners,
                                     dissenters=required), last_text
        except DecisionProblem as problem:
            log.warning("meeting %s: synthesis attempt %d invalid: %s", m.id, attempt, problem)
            message = (f"{synthesis_message(m, s, track)}\n\nYour previous answer was not valid: {problem}. "
                       "Reply again with the corrected JSON object only.")
    return None, last_text


async def run(limits: Limits) -> Decision:
    """The chair's validated decision, with every required dissent; else a best effort."""
    m, s = limits.m, limits.s
    await read_contributions(m, s)  # written during the last round: the chair hears it
    participants = [m.chair.role, *[p.role for p in m.specialists]]
    required = dissenters(m, s)
    with in_phase("synthesis"):
        track = await s.track if s.track is not None else await track_block(m)  # read while the chair framed
        decision, last_text = await _drafts(limits, participants, required, track)
    if decision is not None:
        return decision
    if last_text:
        try:  # a sound decision that still leaves a dissenter out: keep it, and restore the dissent
            decision = validate_decision(last_text, participants=participants, owners=m.owners())
        except DecisionProblem:
            pass
        else:
            return restore_dissent(s, decision, required)
    return best_effort(m, s, last_text)
