"""Addressing by name, round answers3: the principles added for issue item 16, on sentences of our own.

Each sentence below is written for this file from a principle (none is in a labelled set), through the real
router built from the shipped roster as the daemon builds it:

- a list of members joined by "and"/"then" is one addressee phrase: what follows the whole list decides
  ("Research and finance: which market ...?"), and a list that goes on into a statement is its subject
  ("Research, design and sales all sit ..."), and a list with a word no member goes by is a list of
  topics ("Strategy and execution: which matters more?");
- a name set off by commas after a lead-in, then a question, is called ("Tell me, critic, what's ...");
- "what would <member> do" asks for a choice; after a modal a person's title takes any verb;
- an embedded question asks for a view ("curious what the critic thinks");
- "my question is for X", "let's have X run ..." give X the message;
- a word that picks a kind among many makes a title generic ("Which CFO podcasts", "the most famous CEO");
- saying someone is the title names a person holding that job ("She became our CFO", "He's the CMO");
- a thing of theirs is talked about, not to ("The critic's rating"); "X: that's ..." is a heading.
"""

from __future__ import annotations

import pytest

from board.routing.router import NOBODY
from tests.board.routing.test_addressing import owner, shipped_router

ADDRESSED = [
    ("Research and finance: which market do we enter first?", "research", ["finance"]),
    ("Strategy, then finance: is a price cut wise?", "strategy", ["finance"]),
    ("Tell me, critic, what's wrong with this plan?", "critic", []),
    ("What would finance do with an extra $50k?", "finance", []),
    ("How would the CFO structure the round?", "finance", []),
    ("I'm curious what the critic thinks of the new logo.", "critic", []),
    ("My question is for research: how big is the market?", "research", []),
    ("Let's have finance run the numbers on hiring.", "finance", []),
    ("Could research and strategy both look into Brazil?", "research", ["strategy"]),
    ("I'd love the CFO's candid view on this.", "finance", []),
]
ORDINARY = [
    "Which CFO podcasts are worth a listen?",
    "She became our CFO last spring.",
    "The critic's rating was two stars.",
    "Research, design and sales all sit on the second floor.",
    "Finance: that's where most founders struggle.",
    "He's the CMO and he loves TikTok.",
    "Who is the most famous CEO in tech?",
    "How would content change if we had no budget?",
    "Strategy and execution: which matters more?",
    "Finance and strategy are the two areas I struggle with.",
]


@pytest.mark.parametrize(("text", "role", "also"), ADDRESSED)
def test_a_member_addressed_in_a_new_shape_gets_the_message(text: str, role: str, also: list[str]) -> None:
    route = shipped_router().route(owner(text))
    assert (route.role, list(route.also)) == (role, also) and route.reason != NOBODY, (
        f"{text!r} went to {route.role} {list(route.also)} ({route.reason})")


@pytest.mark.parametrize("text", ORDINARY)
def test_a_role_word_as_an_ordinary_noun_stays_with_the_chair(text: str) -> None:
    route = shipped_router().route(owner(text))
    assert route.reason == NOBODY, f"{text!r} went to {route.role} ({route.reason})"
