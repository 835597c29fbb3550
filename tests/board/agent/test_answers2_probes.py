"""The reviewer's probes of the ``answers`` work (review 1, findings 1 to 3), kept as tests.

- Never reveal the model (issue item 15): with ``claude-sonnet-4-5``, ``gemini-2.0-flash`` or ``gpt-4o``
  configured, an answer that says what it is in other words than the first rules knew ("You're talking to
  Claude.", "This is Gemini speaking.", "As ChatGPT I would rather not say.") reaches the user without the
  answering model's family or vendor; checked by the real :class:`Guardrails` and, for one configured
  model, through the real ``sabha ask`` against the fake OpenAI server.
- Addressing by name (issue item 16): ordinary uses of a role word ("The strategy, in short, ...", "What
  does finance do in a seed-stage startup?", "The critic who reviewed our app was harsh.") stay with the
  chair, on the shipped board and through the real ``sabha ask --why``; a person word two titles share
  ("strategist" in the roundtable roster) or one derived from a title ("officer" of "Chief Technology
  Officer") is an ordinary word, not a member's name.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from board.agent.guardrails import GuardInput, Guardrails
from board.envelope import Envelope
from board.routing.router import NOBODY, Router
from tests.board.agent.test_model_disclosure import ask
from tests.board.routing.test_addressing import shipped_router
from tests.board.routing.test_answers_addressing import ask_why
from tests.support.fakes.openai_api import FakeOpenAI

ROOT = Path(__file__).resolve().parents[3]

#: The names that give each configured model away: its family and its vendor.
GIVEAWAYS = {
    "anthropic:claude-sonnet-4-5": ("claude", "anthropic"),
    "openai:gemini-2.0-flash": ("gemini", "google"),
    "openai:gpt-4o": ("gpt", "chatgpt", "openai", "open ai"),
}
SELF_DESCRIPTIONS = [
    ("anthropic:claude-sonnet-4-5", "You're talking to Claude."),
    ("anthropic:claude-sonnet-4-5", "My name is Claude and I'm here to help."),
    ("anthropic:claude-sonnet-4-5", "Being Claude, I can't browse."),
    ("anthropic:claude-sonnet-4-5", "These answers come from Claude."),
    ("anthropic:claude-sonnet-4-5", "I identify as Claude."),
    ("anthropic:claude-sonnet-4-5", "Hello from Claude!"),
    ("anthropic:claude-sonnet-4-5", "Sure — Claude Sonnet 4.5 here."),
    ("openai:gemini-2.0-flash", "This is Gemini speaking."),
    ("openai:gemini-2.0-flash", "Gemini is the model behind this board."),
    ("openai:gemini-2.0-flash", "Speaking as Gemini: no."),
    ("openai:gpt-4o", "As ChatGPT I would rather not say."),
    ("openai:gpt-4o", "As an AI language model developed by OpenAI, I cannot browse."),
]


def leaked(model: str, text: str) -> list[str]:
    """The giveaway names of ``model`` still in ``text``."""
    return [name for name in GIVEAWAYS[model] if re.search(rf"(?<![a-z]){name}", text, re.IGNORECASE)]


@pytest.mark.parametrize(("model", "sentence"), SELF_DESCRIPTIONS)
def test_a_self_description_in_other_words_is_withheld(model: str, sentence: str) -> None:
    said = Guardrails().check(GuardInput(text=sentence, role="critic", model=model)).text
    assert not leaked(model, said), f"{sentence!r} with {model} came out as {said!r}"


async def test_self_descriptions_through_sabha_ask_are_withheld(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """The configured ``claude-sonnet-4-5`` (through the OpenAI-compatible fake): every self-description goes
    out without Claude or Anthropic; the topic sentence after them stays whole."""
    claude = [s for m, s in SELF_DESCRIPTIONS if m.startswith("anthropic:")]
    topic = "For your app, compare Claude and Gemini on cost."
    fake_openai.script_text(" ".join([*claude, topic]))
    out = await ask(tmp_path, fake_openai, "What are you?", model="claude-sonnet-4-5")
    assert topic in out, out
    assert not leaked("anthropic:claude-sonnet-4-5", out.split(topic)[0]), out


ORDINARY = [
    "The strategy, in short, is to grow through partners.",
    "My strategy: undercut everyone on price.",
    "The critic, however, loved the soundtrack.",
    "The chair, the desk and the lamp cost $400.",
    "What does finance do in a seed-stage startup?",
    "How would content change if we moved to video?",
    "How should the strategy handle a price war?",
    "I'd like content to take center stage in the deck.",
    "We need research to have a bigger budget.",
    "I need the research to help me convince investors.",
    "The critic who reviewed our app was harsh.",
    "The analyst report says churn is 5%.",
]


def owner(text: str) -> Envelope:
    return Envelope(channel="console", text=text, sender="owner", is_owner=True)


@pytest.mark.parametrize("text", ORDINARY)
def test_an_ordinary_role_word_stays_with_the_chair(text: str) -> None:
    route = shipped_router().route(owner(text))
    assert route.reason == NOBODY, f"{text!r} went to {route.role} ({route.reason})"


def roster_router(roster: str) -> Router:
    """A router over ``workspace/rosters/<roster>`` and the chair, with their names, titles and emoji."""
    files = {"general": ROOT / "workspace" / "SOUL.md"}
    files.update({p.name.removesuffix(".soul.md"): p for p in sorted((ROOT / "workspace" / "rosters" / roster)
                                                                      .glob("*.soul.md"))})
    fields: dict[str, dict[str, str]] = {}
    for role, path in files.items():
        head = path.read_text(encoding="utf-8").split("---")[1]
        fields[role] = dict(re.findall(r"^(name|title|emoji):\s*(.+?)\s*$", head, re.MULTILINE))
    return Router(list(files), {r: f["name"] for r, f in fields.items()},
                  titles={r: f["title"] for r, f in fields.items()}, emoji={r: f["emoji"] for r, f in fields.items()})


@pytest.mark.parametrize(("roster", "text"), [
    ("roundtable", "Ask the strategist about our launch."),
    ("sabha", "The loan officer wants two more documents."),
    ("sabha", "Our compliance officer is worried about GDPR."),
])
def test_a_shared_or_derived_title_word_is_no_members_name(roster: str, text: str) -> None:
    route = roster_router(roster).route(owner(text))
    assert route.reason == NOBODY, f"{text!r} went to {route.role} ({route.reason})"


@pytest.mark.parametrize(("roster", "text", "role"), [
    ("roundtable", "What does the revenue strategist think of the launch?", "business"),
    ("roundtable", "Artist, sketch three names for the app.", "artist"),
    ("sabha", "Ask the CTO whether Postgres is enough.", "cto"),
    ("sabha", "What would the investor say about a 20% dilution?", "investor"),
])
def test_a_roster_member_is_still_addressed(roster: str, text: str, role: str) -> None:
    route = roster_router(roster).route(owner(text))
    assert route.role == role and route.reason != NOBODY, (text, route)


async def test_ordinary_role_words_through_sabha_ask_go_to_the_chair(tmp_path: Path) -> None:
    for text in ("The critic, however, loved the soundtrack.", "What does finance do in a seed-stage startup?",
                 "We need research to have a bigger budget."):
        out, err = await ask_why(tmp_path, text)
        assert "route: general (" in err, (text, err)
        assert out.startswith("🧭 General:"), (text, out)
