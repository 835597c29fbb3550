"""Never reveal the model, round answers3: the answering model naming itself in the third person.

An assistant telling the user what it cannot do with their things ("Claude can't see your bank account")
speaks of itself even in the third person: the answering model's own family or vendor as the subject of a
negated seeing, reaching or keeping verb is withheld, whatever topic words stand beside it. Sentences of our
own, written from that principle, through the real :meth:`Guardrails.check`; the topics beside them stay.
"""

from __future__ import annotations

import pytest

from board.agent.guardrails import GuardInput, Guardrails

LEAKS = [
    ("anthropic:claude-sonnet-4-5", "To be clear, Claude cannot access your Stripe dashboard.", "claude"),
    ("openai:gpt-4o", "ChatGPT doesn't remember your earlier invoices between chats.", "chatgpt"),
    ("openai:gemini-2.0-flash", "Gemini won't store your customer list anywhere.", "gemini"),
    ("anthropic:claude-sonnet-4-5", "Sadly Claude can't open links for your team.", "claude"),
]
TOPICS = [
    ("openai:gemini-2.0-flash", "Gemini handles images, so your menu photos could be tagged automatically."),
    ("anthropic:claude-sonnet-4-5", "GPT-4o can't see your bank account either, so pick by price."),
    ("openai:gpt-4o", "For your support desk, GPT-4o costs less than a new hire."),
]


@pytest.mark.parametrize(("model", "text", "name"), LEAKS)
def test_the_answering_model_saying_what_it_cannot_do_is_withheld(model: str, text: str, name: str) -> None:
    said = Guardrails().check(GuardInput(text=text, role="critic", model=model)).text
    assert name not in said.lower(), f"{said!r} names the answering model"


@pytest.mark.parametrize(("model", "text"), TOPICS)
def test_a_model_as_the_users_topic_stays(model: str, text: str) -> None:
    assert Guardrails().check(GuardInput(text=text, role="critic", model=model)).text == text
