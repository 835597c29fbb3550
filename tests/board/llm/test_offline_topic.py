"""The offline model reads a meeting's question as an action to talk about, never pasting it back."""

from __future__ import annotations

import pytest

from board.llm.offline_topic import topic_of


@pytest.mark.parametrize(("question", "pilot", "whether"), [
    ("Should we open a Pune office?", "the pilot to open a Pune office", "whether to open a Pune office"),
    ("Should we open a Pune office or stay remote?", "the pilot to open a Pune office",
     "whether to open a Pune office"),
    ("How can we reach AI startup CTOs?", "the pilot to reach AI startup CTOs", "whether to reach AI startup CTOs"),
    ("What price should we charge for the pro plan?", "the pilot to decide what price to charge for the pro plan",
     "what price to charge for the pro plan"),
    ("Expand to Europe?", "the pilot to expand to Europe", "whether to expand to Europe"),
    ("Do we hire a CTO this year? We have 9 months of runway.", "the pilot to hire a CTO this year",
     "whether to hire a CTO this year"),
    ("Pricing for 2027", "the pilot to decide on pricing for 2027", "pricing for 2027"),
    ("Should you rebrand your shop?", "the pilot to rebrand our shop", "whether to rebrand our shop"),
])
def test_a_question_becomes_an_action(question: str, pilot: str, whether: str) -> None:
    topic = topic_of(question)
    assert (topic.pilot, topic.whether) == (pilot, whether)


def test_nothing_asked_still_reads() -> None:
    assert topic_of("").pilot == "the pilot to decide the question"
