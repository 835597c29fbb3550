"""Issue 38: what the web chat says of a meeting called there (:mod:`bot.channels.web.meeting_card`): a link to
its live page, then a card (the vote as the board gave it, the first action items, a link to the minutes);
nothing at its end when it decided; a line with the same link when it did not."""

from __future__ import annotations

from typing import Any

from board.room.meeting import MeetingEvent, MeetingEventKind
from bot.channels.web.meeting_card import MeetingNotes

TOPIC = "should we open a Pune office?"


def event(kind: MeetingEventKind, **data: Any) -> MeetingEvent:
    role = data.pop("role", "general")
    return MeetingEvent(kind=kind, meeting_id="m-1", topic=TOPIC, role=role, data=data)


def stance(position: str, confidence: float) -> dict[str, Any]:
    return {"position": position, "confidence": confidence, "assumption": "rents stay where they are"}


def decision(actions: int) -> dict[str, Any]:
    return {"recommendation": "Open a small Pune office in March, with two hires.", "rationale": "why",
            "dissent": [{"who": "critic", "why": "too early"}],
            "action_items": [{"task": f"task {n}", "owner": "finance", "due": "+2m"} for n in range(1, actions + 1)]}


def test_a_meeting_is_a_live_link_then_a_card_and_nothing_more() -> None:
    notes = MeetingNotes(lambda role: role.title())
    started = notes.line(event(MeetingEventKind.STARTED))
    assert started is not None and started.body.endswith("[watch it live](/ui/meetings/m-1)")
    for role, said in (("research", stance("support", 0.8)), ("critic", stance("oppose", 0.6)),
                       ("finance", None), ("research", stance("conditional", 0.5))):  # research changed its mind
        assert notes.line(event(MeetingEventKind.AGENT_SPOKE, role=role, stance=said)) is None
    card = notes.line(event(MeetingEventKind.DECISION, decision=decision(5),
                            participants=["research", "critic", "finance"]))
    assert card is not None
    assert "**Vote:** 1 conditional, 1 oppose, 1 gave no stance; confidence 55% on average" in card.body
    assert "**Dissent:** Critic" in card.body and "**Action items:** 5, the first 3" in card.body
    assert "3. task 3 (Finance)" in card.body and "task 4" not in card.body
    assert "[Read the minutes](/ui/meetings/m-1)" in card.body
    notes.posted(card)  # the channel stored it
    assert notes.line(event(MeetingEventKind.ENDED, stop_reason="completed", minutes="# Minutes\n- [ ] x")) is None


def test_a_meeting_with_no_decision_says_so_with_the_link() -> None:
    notes = MeetingNotes()
    notes.line(event(MeetingEventKind.STARTED))
    ended = notes.line(event(MeetingEventKind.ENDED, stop_reason="cancelled", minutes="# Minutes"))
    assert ended is not None
    assert ended.body == (f"The meeting on \u201c{TOPIC}\u201d ended without a decision (cancelled). "
                          "[Read the minutes](/ui/meetings/m-1)")


def test_a_card_not_posted_is_followed_by_a_line_at_the_end_and_memory_is_bounded() -> None:
    from bot.channels.web.meeting_card import REMEMBERED

    notes = MeetingNotes()
    card = notes.line(event(MeetingEventKind.DECISION, decision=decision(1), participants=[]))
    assert card is not None  # ... and never posted (the db failed)
    ended = notes.line(event(MeetingEventKind.ENDED, stop_reason="completed"))
    assert ended is not None and ended.body.startswith(f"The board decided on \u201c{TOPIC}\u201d")
    for n in range(REMEMBERED + 10):  # meetings that never end
        notes.line(MeetingEvent(kind=MeetingEventKind.AGENT_SPOKE, meeting_id=f"m-{n}", topic=TOPIC,
                                role="critic", data={"stance": stance("oppose", 0.5)}))
    assert len(notes._stances) == REMEMBERED and "m-0" not in notes._stances
