"""Phase 4: the challenger's final objection, asked beside the chair's synthesis.

The roster's challenger (``critic`` on the board, the Investor on ``sabha``; see
:meth:`MeetingSettings.challenger_for`) sees what the draft decision is being written from
(every member's final stance and the dissent it must carry) while the chair writes it, so the
review adds no call in sequence. An objection the recorded dissent does not already say goes
into the minutes verbatim, as the decision's final objection and in its dissent.
"""

from __future__ import annotations

import logging
import re

from board.room.decision import Decision, Dissent, FinalObjection, format_stance
from board.room.meeting.context import MeetingContext
from board.room.meeting.convergence import dissent_reason, dissenters, latest_stance
from board.room.meeting.events import MeetingEventKind, Stop
from board.room.meeting.limits import Limits, ask, in_phase
from board.room.meeting.state import MeetingState

__all__ = ["apply", "objection", "review_message"]

log = logging.getLogger("sabha.meeting")


def review_message(m: MeetingContext, s: MeetingState) -> str:
    """What the challenger is asked (a pure function of the record)."""
    positions = [f"- {p.name} ({p.role}): {format_stance(latest_stance(s, p.role))}"
                 for p in m.specialists if p.role not in s.absent]
    parts = [f"Board meeting on: {m.topic}\nYou are this meeting's challenger. The chair is writing the board's "
             "draft decision now, from this record.", f"Agenda:\n{s.agenda}",
             "Final positions:\n" + "\n".join(positions)]
    if required := dissenters(m, s):
        parts.append("Dissent the decision will carry, in each member's own words:\n" + "\n".join(
            f"- {role}: {dissent_reason(s, role)}" for role in required))
    parts.append("If you have a final objection the board must hear that this record does not already carry, "
                 "reply with OBJECTION: and the objection in your own words (under 120 words); it goes into the "
                 "minutes verbatim. Otherwise reply exactly NO OBJECTION.")
    return "\n\n".join(parts)


async def objection(limits: Limits) -> str | None:
    """The challenger's final objection in its own words; None: none, or no challenger, time or money."""
    m, s = limits.m, limits.s
    role = m.challenger
    if not role or role in s.absent or not limits.spare():
        return None
    try:
        with in_phase("challenge"):
            utterance = await ask(limits, role, review_message(m, s), tools=())
    except (Stop, TimeoutError):
        return None
    except Exception as exc:  # noqa: BLE001 - the decision stands without the review
        log.warning("meeting %s: the challenger's review failed (%s)", m.id, exc)
        return None
    text = utterance.text.strip()
    if utterance.degraded or not text or re.match(r"^\W*no objection\b", text, re.IGNORECASE):
        return None
    match = re.search(r"objection\s*:\s*", text, re.IGNORECASE)
    said = text[match.end():].strip() if match else text
    return said or None


async def apply(m: MeetingContext, s: MeetingState, decision: Decision, said: str | None) -> Decision:
    """Keep the objection: stored, shown, the decision's final objection and part of its dissent."""
    role = m.challenger
    if said is None or not role:
        return decision
    await m.store.event(m.id, "objection", role, {"role": role, "text": said}, s.current_round)
    await m.emit(MeetingEventKind.OBJECTION, s.current_round, role=role, text=said)
    dissent = list(decision.dissent)
    if not any(d.who == role for d in dissent):
        dissent.append(Dissent(who=role, why=said))
    return decision.model_copy(update={"final_objection": FinalObjection(who=role, text=said),
                                       "dissent": dissent})
