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
    # seen in review (issue 38): a question kept as a question, my/I not ours, an alternative dropped
    ("Is it worth hiring a CFO?", "the pilot to find out whether it is worth hiring a CFO",
     "whether it is worth hiring a CFO"),
    ("Should I quit my job?", "the pilot to quit our job", "whether to quit our job"),
    ("Europe or Asia first?", "the pilot to decide on Europe or Asia first", "Europe or Asia first"),
    ("Do we have enough runway to hire a CTO?", "the pilot to find out whether we have enough runway to hire a CTO",
     "whether we have enough runway to hire a CTO"),
    ("Are we ready to launch?", "the pilot to find out whether we are ready to launch",
     "whether we are ready to launch"),
    ("Is the product ready for Europe?", "the pilot to find out whether the product is ready for Europe",
     "whether the product is ready for Europe"),
    ("Should we be cheaper than Acme?", "the pilot to find out whether we should be cheaper than Acme",
     "whether we should be cheaper than Acme"),
    ("AI features or a cheaper plan?", "the pilot to decide on AI features or a cheaper plan",
     "AI features or a cheaper plan"),
    ("Can I afford a second hire?", "the pilot to afford a second hire", "whether to afford a second hire"),
])
def test_a_question_becomes_an_action(question: str, pilot: str, whether: str) -> None:
    topic = topic_of(question)
    assert (topic.pilot, topic.whether) == (pilot, whether)


def test_nothing_asked_still_reads() -> None:
    assert topic_of("").pilot == "the pilot to decide the question"
