"""Addressing by name, round classify45 (issue 36, item 16): how the rules read a mention beside the learned model.

Sentences of our own, written from the principles in :mod:`board.routing.addressing` (none is in a labelled set),
routed through the real :class:`board.routing.router.Router` on the shipped roster: a person's title with nothing
around it is a default the model may overrule, a word that makes it someone else's is a no it may not; an emoji,
a call opening a later sentence, a bare name before a request, a yes/no question to a member, an opening order,
an apostrophe left out and ``@`` with a title each address the member.
"""

from __future__ import annotations

import pytest

from board.routing.addressing import Reading, mentions
from board.routing.router import NOBODY
from tests.board.routing.test_addressing import owner, shipped_router


def routed(text: str) -> str | None:
    route = shipped_router().route(owner(text))
    return route.role if route.reason != NOBODY else None


@pytest.mark.parametrize(("text", "role"), [
    ("can 📣 draft three subject lines for the newsletter", "content"),
    ("have the 🦉 go through my pitch deck", "critic"),
    ("We closed the quarter flat. research, what are similar shops doing?", "research"),
    ("i keep going back and forth, finance what do you think about leasing", "finance"),
    ("strategy tell me where we should be in two years", "strategy"),
    ("does finance think the loan is worth it?", "finance"),
    ("does research have anything on how gen z buys furniture", "research"),
    ("get content to put together a launch thread", "content"),
    ("devils advocate, poke holes in my hiring plan", "critic"),
    ("@cfo how much runway do we have at this burn", "finance"),
])
def test_a_member_spoken_to_is_addressed(text: str, role: str) -> None:
    assert routed(text) == role, shipped_router().route(owner(text)).reason


@pytest.mark.parametrize("text", [
    "our old cfo left a mess in the books",  # someone else's officer, a default the model overrules
    "a film critic liked our trailer",  # indefinite
    "someone needs to play devil's advocate at standup",  # "play": a role someone takes
    "What did finance say about the loan last week?",  # a report of what was said
    "we won the critic's choice prize at the fair",  # a thing of someone else's
    "big month for sales 💰💰 feeling good",  # an emoji decorating a statement
    "I need help with content please",  # a plea after a thing, mid-sentence
    "Thanks. Strategy, in short, is about choices",  # a name and a comma open a later sentence: a statement
])
def test_a_role_word_used_otherwise_stays_with_the_chair(text: str) -> None:
    assert routed(text) is None, shipped_router().route(owner(text)).reason


def test_the_rules_say_how_they_read_each_mention() -> None:
    roster = shipped_router().roster
    readings = {m.word: m.reading for m in mentions(roster, "ask the critic whether my CFO was right, a CMO said no")}
    assert readings == {"critic": Reading.PHRASE, "CFO": Reading.ELSEWHERE, "CMO": Reading.ELSEWHERE}
    (default,) = mentions(roster, "the CFO numbers look off")
    assert default.reading is Reading.DEFAULT
