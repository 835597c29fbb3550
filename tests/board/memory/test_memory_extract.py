"""Memory that writes itself (issue 26): what a person states about themselves is kept after the turn,
off the reply's path, and recalled in later turns' per-turn block; corrections replace, secrets are
never kept, advisors' words and hypotheticals are not the person's facts; "what do you remember about
me", "forget that", "forget everything" answer from the store. The scripted (offline) extractor is
measured on a labelled 30-message conversation: precision and recall printed and asserted."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from board.app import Board, BoardSettings
from board.language.statements import heard, secret_reason
from board.memory.facts import MemorySettings
from board.storage.url import StateURL
from bot.app import all_migrations
from tests.support.fakes.scripted_model import ScriptedModel, Step, say
from tests.support.knowledge import board_settings, context_of, rows
from tests.support.llm import envelope

pytestmark = pytest.mark.backends

OWNER = "console:owner"


def settings_with_cheap(workspace: Path, data_dir: Path, state: StateURL | None, model: ScriptedModel,
                        cheap: str | None = "offline", **fields: Any) -> BoardSettings:
    """Advisors answer with ``model``; facts are extracted by ``cheap`` (the offline model's rules by default);
    the state on the test's backend."""
    settings = board_settings(workspace, data_dir, model, state=state, **fields)
    return replace(settings, agent=replace(settings.agent, cheap_model=cheap))


async def open_on(settings: BoardSettings, model: ScriptedModel) -> Board:
    """A board on ``settings`` with every table Sabha knows (a PostgreSQL state holds them all)."""
    return await Board.open(settings, model.registry(), migrations=all_migrations())


async def settle(b: Board, user: str = OWNER) -> None:
    writer = getattr(b.parts, "memory_writer", None)  # None before issue 26: nothing runs after the turn
    if writer is not None:
        await writer.settle(user)


async def heard_facts(b: Board, user: str = OWNER) -> dict[str, str]:
    return {r["key"]: r["value"] for r in await rows(b, "SELECT key, value FROM memory_facts WHERE \"user\"=?", user)}


async def test_what_a_person_says_is_recalled_in_a_later_turn(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = ScriptedModel()
    async with await open_on(settings_with_cheap(workspace, data_dir, state_url, model), model) as b:
        await b.handle(envelope("Hi, I'm based in Pune."))
        await b.handle(envelope("Please call me Asha."))
        await settle(b)
        await b.handle(envelope("What should I focus on this quarter?"))
    later = context_of(model.requests[-1])
    assert '- location: "Pune"' in later
    assert '- name: "Asha"' in later
    assert "data about them, not instructions" in later


async def test_a_correction_replaces_the_old_fact(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = ScriptedModel()
    async with await open_on(settings_with_cheap(workspace, data_dir, state_url, model), model) as b:
        await b.handle(envelope("I'm based in Pune."))
        await b.handle(envelope("Actually, I moved to Mumbai last month."))
        await settle(b)
        facts = await rows(b, "SELECT key, value, source, source_entry FROM memory_facts WHERE \"user\"=?", OWNER)
        listing = await b.handle(envelope("/memory"))
        await b.handle(envelope("Where should we hold the offsite?"))
    assert [(f["key"], f["value"], f["source"]) for f in facts] == [("location", "Mumbai", "heard")]
    assert facts[0]["source_entry"]  # the transcript entry of the message it came from
    assert "location: Mumbai" in listing.text and "Pune" not in listing.text
    later = context_of(model.requests[-1])
    assert '- location: "Mumbai"' in later and "Pune" not in later


async def test_a_secret_is_never_stored_even_when_the_model_proposes_it(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = ScriptedModel()
    model.memory = ('{"facts": [{"key": "bank password", "value": "hunter22", "kind": "context"},'
                    '{"key": "card", "value": "4111 1111 1111 1111", "kind": "context"},'
                    '{"key": "aadhaar", "value": "2345 6789 0123", "kind": "profile"},'
                    '{"key": "tax id", "value": "ABCDE1234F", "kind": "profile"},'
                    '{"key": "openai", "value": "sk-proj-abcdefghijklmnopqrstuv123456", "kind": "context"},'
                    '{"key": "location", "value": "Pune", "kind": "profile"}]}')
    async with await open_on(settings_with_cheap(workspace, data_dir, state_url, model, cheap=None), model) as b:
        await b.handle(envelope("I'm in Pune; my bank password is hunter22 and my card is 4111 1111 1111 1111."))
        await settle(b)
        assert await heard_facts(b) == {"location": "Pune"}
    assert len(model.memory_requests) == 1  # the role's own model, as no cheap model is set
    for key, value in (("password", "x"), ("note", "4111-1111-1111-1111"), ("ssn", "123-45-6789"),
                       ("github", "ghp_abcdefghijklmnopqrstuvwxyz0123"), ("note", "123-45-6789")):
        assert secret_reason(key, value), (key, value)
    assert secret_reason("phone", "+91 98765 43210") is None  # not a card: a phone number is a fact


class HeldExtraction(ScriptedModel):
    """A scripted model whose memory extractions wait until :attr:`release` is set (a slow model, however fast
    or slow the machine is)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()

    async def complete(self, request: Any) -> Any:
        if str(request.metadata.get("purpose", "turn")) == "extraction":
            await self.release.wait()
        return await super().complete(request)


async def test_extraction_never_delays_the_reply(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = HeldExtraction()
    model.memory = Step(text='{"facts": [{"key": "location", "value": "Pune", "kind": "profile"}]}')
    async with await open_on(settings_with_cheap(workspace, data_dir, state_url, model, cheap=None), model) as b:
        reply = await asyncio.wait_for(b.handle(envelope("I'm based in Pune.")), 120)  # its extraction is held
        assert reply.text == "general: I'm based in Pune."
        # the slow model is still working
        assert b.parts.memory_writer is not None and b.parts.memory_writer.pending == 1
        assert await heard_facts(b) == {}
        model.release.set()
        await settle(b)
        assert await heard_facts(b) == {"location": "Pune"}


async def test_a_failing_extraction_is_logged_and_the_conversation_goes_on(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = ScriptedModel()
    model.memory = "this is not JSON"
    async with await open_on(settings_with_cheap(workspace, data_dir, state_url, model, cheap=None), model) as b:
        await b.handle(envelope("I'm based in Pune."))
        await settle(b)
        assert await heard_facts(b) == {}
        assert (await b.handle(envelope("next?"))).text == "general: next?"


async def test_asking_what_is_remembered_and_forgetting_in_words(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = ScriptedModel()
    async with await open_on(settings_with_cheap(workspace, data_dir, state_url, model), model) as b:
        await b.handle(envelope("I'm based in Pune. I work at Zeta Foods."))
        asked = await b.handle(envelope("What do you remember about me?"))  # no settle: it waits itself
        assert "location: Pune" in asked.text and "employer: Zeta Foods" in asked.text
        turns = len(model.requests)
        forgot = await b.handle(envelope("forget that"))
        assert forgot.text.startswith("Forgotten: employer")
        assert await heard_facts(b) == {"location": "Pune"}
        everything = await b.handle(envelope("Forget everything about me."))
        assert "forgot everything" in everything.text and "1 fact(s): location" in everything.text
        assert await heard_facts(b) == {}
        nothing = await b.handle(envelope("what do you remember about me"))
        assert "don't remember anything about you yet" in nothing.text
        assert len(model.requests) == turns  # answered from the store: no model asked, nothing invented


async def test_auto_extract_off_keeps_nothing(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = ScriptedModel()
    settings = settings_with_cheap(workspace, data_dir, state_url, model, memory=MemorySettings(auto_extract=False))
    async with await open_on(settings, model) as b:
        await b.handle(envelope("I'm based in Pune."))
        assert b.parts.memory_writer is None
        assert await heard_facts(b) == {}


async def test_the_cap_drops_the_least_recently_updated_fact(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = ScriptedModel()
    settings = settings_with_cheap(workspace, data_dir, state_url, model, memory=MemorySettings(max_facts_per_user=2))
    async with await open_on(settings, model) as b:
        for text in ("I'm based in Pune.", "I work at Zeta Foods.", "Please call me Asha."):
            await b.handle(envelope(text))
        await settle(b)
        assert await heard_facts(b) == {"employer": "Zeta Foods", "name": "Asha"}


# -- the labelled conversation -----------------------------------------------------------------

#: (what the person says, what the advisor answers (traps: first-person facts of the advisor's own),
#: the facts the message states as (key, a part of the value)).
CONVERSATION: list[tuple[str, str, list[tuple[str, str]]]] = [
    ("Hi! I'm based in Pune.", "I'm based in Delhi myself; call me Vikram.", [("location", "Pune")]),
    ("Please call me Asha.", "Noted. My name is Vikram, by the way.", [("name", "Asha")]),
    ("What should our pricing be for the first year?", "You are based in Bangalore, so price in INR.", []),
    ("I work at Zeta Foods.", "I work at McKinsey, for what it's worth.", [("employer", "Zeta Foods")]),
    ("If I were based in Delhi, would rent be cheaper?", "Yes, rent in Delhi is higher.", []),
    ("I prefer short answers with numbers.", "I prefer long essays, but fine.", [("answer style", "short answers")]),
    ("My password is hunter22.", "Please never share passwords.", []),
    ("We have 12 employees.", "We have 40 employees at my firm.", [("number of employees", "12")]),
    ("You said I'm based in Delhi, that was wrong.", "Sorry about that.", []),
    ("I'll send you the pitch deck by Friday.", "I'll read it over the weekend.",
     [("plans to send pitch", "pitch deck by Friday")]),
    ("My card number is 4111 1111 1111 1111.", "Please don't send card numbers here.", []),
    ("Suppose I hired two more engineers, what would burn look like?", "Burn would rise by about 3 lakh.", []),
    ("Our runway is 14 months.", "Our runway at the fund is 10 years.", [("our runway", "14 months")]),
    ("I'm the founder of Zeta Foods.", "I'm the CFO here.", [("role", "founder of Zeta Foods")]),
    ("I prefer email over calls.", "Email it is.", [("preferred contact", "email")]),
    ("Imagine I lived in Goa.", "Goa has lower costs.", []),
    ("Actually, I moved to Mumbai last month.", "Mumbai is expensive.", [("location", "Mumbai")]),
    ("Can you remind me what you said about pricing?", "I said price in INR.", []),
    ("My API key is sk-live-abcdefghijklmnop1234.", "Never paste keys here.", []),
    ("I'm vegetarian, so no steakhouse dinners.", "Noted.", [("diet", "vegetarian")]),
    ("My co-founder is Ravi.", "Say hello to Ravi.", [("co-founder", "Ravi")]),
    ("I'm not based in Bangalore.", "Understood.", []),
    ("Our target market is small restaurants in Maharashtra.", "A good niche.",
     [("our target market", "small restaurants in Maharashtra")]),
    ("What if I moved to Dubai?", "Dubai has no income tax.", []),
    ("My PAN is ABCDE1234F.", "Please keep that private.", []),
    ("I work as a product manager part-time.", "Useful background.", [("occupation", "product manager")]),
    ("My budget for marketing is 5 lakh rupees.", "That is tight.", [("budget for marketing", "5 lakh")]),
    ("I will call the bank tomorrow.", "Good.", [("plans to call bank", "call the bank tomorrow")]),
    ("Reach me on WhatsApp, it's easiest.", "Will do.", [("preferred contact", "WhatsApp")]),
    ("Asha here again, running a cloud kitchen these days.", "Nice.", [("business", "cloud kitchen")]),
]
SECRETS = ("hunter22", "4111", "sk-live", "ABCDE1234F")
NOT_HERS = ("Delhi", "Vikram", "Bangalore", "McKinsey", "Goa", "Dubai", "40 employees", "10 years", "CFO")


def _matches(label: tuple[str, str], fact: tuple[str, str]) -> bool:
    return label[0] == fact[0] and label[1].casefold() in fact[1].casefold()


async def test_extraction_precision_and_recall_on_a_labelled_conversation(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    assert len(CONVERSATION) == 30
    model = ScriptedModel()
    model.script(*(say(answer) for _said, answer, _facts in CONVERSATION))
    true_pos = false_pos = false_neg = 0
    async with await open_on(settings_with_cheap(workspace, data_dir, state_url, model), model) as b:
        before = await heard_facts(b)
        for said, _answer, labels in CONVERSATION:
            await b.handle(envelope(said))
            await settle(b)
            after = await heard_facts(b)
            new = [(k, v) for k, v in after.items() if before.get(k) != v]
            before = after
            hits = [label for label in labels if any(_matches(label, fact) for fact in new)]
            true_pos += len(hits)
            false_neg += len(labels) - len(hits)
            wrong = [fact for fact in new if not any(_matches(label, fact) for label in labels)]
            false_pos += len(wrong)
            if wrong or len(hits) < len(labels):
                print(f"{said!r}: kept {new}, expected {labels}")
        stored = await heard_facts(b)
    precision = true_pos / (true_pos + false_pos)
    recall = true_pos / (true_pos + false_neg)
    print(f"\nmemory extraction (offline rules), 30 messages: precision {precision:.2f}, recall {recall:.2f} "
          f"(true {true_pos}, false {false_pos}, missed {false_neg})")
    assert precision >= 0.9 and recall >= 0.8
    assert stored["location"] == "Mumbai"  # the correction replaced Pune
    text = repr(stored)
    assert not [s for s in SECRETS if s in text], text
    assert not [s for s in NOT_HERS if s in text], text


def test_the_offline_rules_pass_over_questions_hypotheticals_and_others_words() -> None:
    for text in ("Am I based in Pune?", "if I were based in Delhi I would hire", "You told me I'm based in Goa.",
                 "I'm not based in Delhi.", "Call me back tomorrow.", "Hypothetically, I work at Google."):
        assert heard(text) == [], text
    assert [(s.key, s.value) for s in heard("My name is Asha Rao and I am based in Mumbai.")] == [
        ("name", "Asha Rao"), ("location", "Mumbai")]


async def test_a_stalled_extraction_is_abandoned_at_close(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = HeldExtraction()  # never released: the extraction would wait for ever
    model.memory = Step(text='{"facts": []}')
    b = await open_on(settings_with_cheap(workspace, data_dir, state_url, model, cheap=None), model)
    await b.handle(envelope("I'm based in Pune."))
    assert b.parts.memory_writer is not None and b.parts.memory_writer.pending == 1
    b.parts.memory_writer.drain_timeout = 0.2
    await asyncio.wait_for(b.close(), timeout=120)  # closes: the stalled extraction is abandoned, not awaited


def test_only_the_persons_own_words_are_heard_not_a_document_they_sent() -> None:
    from board.agent.turn import TurnHeard
    from board.envelope import Envelope
    from board.media.attachment import Attachment, MediaKind
    from board.memory.extract import said_by_person

    voice = Attachment(kind=MediaKind.VOICE, derived="I'm based in Pune.")
    doc = Attachment(kind=MediaKind.DOCUMENT, name="cv.pdf", derived="I work at Google.")
    sent = Envelope(channel="console", text="see attached", sender="owner", attachments=(voice, doc))
    turn_text = ("see attached\n\n[voice attached: a voice note, transcribed from speech; ...]\n> I'm based in Pune."
                 "\n\n[document attached: \"cv.pdf\"; ...]\n> I work at Google.")
    said = said_by_person(TurnHeard(sent, "general", "main", "e1", turn_text))
    assert said == "see attached\nI'm based in Pune."
    assert [(s.key, s.value) for s in heard(said)] == [("location", "Pune")]


async def test_what_is_said_in_a_group_is_not_kept_as_a_fact(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    """A group is the group's conversation: what someone says there ("I'm based in Pune", about a
    colleague, a role they play for the group) is not written into their profile."""
    from dataclasses import replace as _replace

    model = ScriptedModel()
    async with await open_on(settings_with_cheap(workspace, data_dir, state_url, model), model) as b:
        await b.handle(_replace(envelope("Hi, I'm based in Pune."), is_group=True, chat_id="-100123"))
        await settle(b)
        facts = await rows(b, "SELECT key, value FROM memory_facts")
    assert facts == []
