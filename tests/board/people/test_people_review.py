"""Defects the issue-26 review found in linked people and user memory, on the board itself (no daemon):
private text leaking into group chats, /link in groups, secrets the filter let through, "forget
everything" leaving facts behind, "forget it" deleting a fact, a budget reset by link cycles, and the
extraction dedupe key."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from board.app import Board
from board.envelope import Envelope
from board.language.statements import heard
from board.memory.facts import FactError, FactSource, FactStore, Provenance
from board.people import LinkOutcome
from board.spending.budget import BudgetSettings
from tests.support.fakes.scripted_model import ScriptedModel, Step, say
from tests.support.knowledge import board_settings, context_of

A, B = "telegram:43", "whatsapp:15550002222"


def tg(text: str, **kw: object) -> Envelope:
    return Envelope(channel="telegram", text=text, sender="43", chat_id="43", sender_name="Asha", **kw)  # type: ignore[arg-type]


def wa(text: str) -> Envelope:
    return Envelope(channel="whatsapp", text=text, sender="15550002222", chat_id="15550002222", sender_name="Asha")


def tg_group(text: str) -> Envelope:
    return Envelope(channel="telegram", text=text, sender="43", chat_id="-100777", sender_name="Asha", is_group=True)


def wa_group(text: str, sender: str = "15550002222") -> Envelope:
    return Envelope(channel="whatsapp", text=text, sender=sender, chat_id="120363000000000000@g.us",
                    sender_name="Asha", is_group=True)


# -- 1: private text never reaches a group -----------------------------------------------------

async def test_a_group_turn_gets_no_note_of_a_private_chat_and_is_not_noted(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(say("ok"), say("ok"), say("ok"))
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry()) as b:
        await b.parts.people.link(A, B)
        await b.handle(wa("My divorce hearing is on Friday, keep it between us"))
        await b.handle(tg_group("Team, what's the plan for Q3? Also my salary is 40 lakh"))
        assert "divorce" not in context_of(model.requests[-1])  # the group turn saw no private note
        await b.handle(wa("Anything else?"))  # the private chat is not told what was said in the group
        assert "salary" not in context_of(model.requests[-1])


async def test_memory_is_asked_about_only_in_a_direct_chat(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry()) as b:
        await b.parts.facts.learn(A, "health", "diabetic", Provenance(source=FactSource.HEARD))
        recall = await b.handle(tg_group("what do you remember about me"))
        assert "diabetic" not in recall.text and "direct chat" in recall.text
        forgot = await b.handle(tg_group("forget everything"))
        assert "direct chat" in forgot.text
        assert [f.value for f in await b.parts.facts.facts(user=A)] == ["diabetic"]
        assert "diabetic" in (await b.handle(tg("what do you remember about me"))).text


# -- 2: /link is refused in any group ----------------------------------------------------------

async def test_link_codes_are_refused_in_any_group(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry()) as b:
        code = await b.parts.people.ask_code("whatsapp:19990001111", is_owner=False)
        # the owner's number in a WhatsApp group: the channel sets is_owner False there
        reply = await b.handle(wa_group(f"/link {code}", sender="15550000001"))
        assert "direct chat" in reply.text
        assert reply.text.count("Linked") == 0
        assert await b.parts.people.persons() == []
        reply = await b.handle(tg_group(f"/link {code}"))
        assert "direct chat" in reply.text and await b.parts.people.persons() == []
        # the code was not spent: its owner can still use it from a direct chat
        assert (await b.parts.people.redeem(A, code, is_owner=False)).outcome is LinkOutcome.LINKED


# -- 3: secrets ---------------------------------------------------------------------------------

SECRET_FACTS = [
    ("wifi", "hunter2"), ("bank pw", "Tr0ub4dor&3"), ("pwd", "Asha@1985"), ("netbanking", "asha85 / Sunflower#9"),
    ("sbi account", "30012345678"), ("bank account", "123456789"), ("ifsc and account", "SBIN0001234 30012345678"),
    ("upi mpin", "4821"), ("mpin", "4821"), ("locker combination", "12-34-56"),
    ("passport no", "K1234567"), ("travel document", "K1234567"), ("driving licence", "MH1220110012345"),
    ("voter id", "ABC1234567"),  # a GSTIN is no longer here: it is printed on every invoice and looked up on
    # the GST portal by anyone (round classify45, board.language.secrets; two writers apart labelled it harmless)
    ("aws", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("cloud", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("openai", "sk-proj-abcDEF123456789xyz"), ("door code", "4821#"), ("seed", "abandon ability able about"),
    ("card", "4111 1111 1111 1111"), ("card expiry", "12/27 cvv 123"), ("card last", "exp 12/27, security number 123"),
    ("recovery phrase", "abandon ability able about above absent absorb abstract absurd abuse access accident"),
]
SECRET_SENTENCES = [
    "My pw is Tr0ub4dor&3.", "My wifi is hunter2.", "My mpin is 4821.", "My locker code is 12-34-56.",
    "My ifsc is SBIN0001234 and account 30012345678.", "My netbanking login is asha85.",
    "My bank account is 30012345678.", "My recovery phrase is abandon ability able about above absent",
    "My door code is 4821#.", "My passcode is 1234.", "My seed is abandon ability able about.",
]


@pytest.mark.parametrize(("key", "value"), SECRET_FACTS)
def test_the_store_refuses_every_secret_the_review_found(key: str, value: str) -> None:
    with pytest.raises(FactError):
        FactStore(None).check(key, value)  # type: ignore[arg-type]


@pytest.mark.parametrize("sentence", SECRET_SENTENCES)
def test_no_secret_is_heard_from_a_sentence(sentence: str) -> None:
    assert heard(sentence) == []


@pytest.mark.parametrize(("sentence", "key"), [
    ("My company is called Zeta.", "company"), ("Our investor is Sequoia.", "our investor"),
    ("I am based in Pune.", "location"), ("My son's school is DPS Pune.", "son's school"),
])
def test_ordinary_facts_are_still_heard(sentence: str, key: str) -> None:
    assert [s.key for s in heard(sentence)] == [key]


# -- 5: natural-language forget -----------------------------------------------------------------

@pytest.mark.parametrize("text", ["forget it", "ok forget it", "Forget it.", "forget all the drama, what next?",
                                  "forget everything I said about the launch"])
async def test_forget_it_deletes_nothing(workspace: Path, data_dir: Path, text: str) -> None:
    model = ScriptedModel()
    model.script(say("Sure."))
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry()) as b:
        await b.parts.facts.learn(A, "location", "Pune", Provenance(source=FactSource.HEARD))
        await b.handle(tg(text))
        assert [f.value for f in await b.parts.facts.facts(user=A)] == ["Pune"]


@pytest.mark.parametrize("text", ["forget everything", "forget all", "Please forget everything about me."])
async def test_forget_everything_says_what_was_erased(workspace: Path, data_dir: Path, text: str) -> None:
    model = ScriptedModel()
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry()) as b:
        await b.parts.facts.learn(A, "location", "Pune", Provenance(source=FactSource.HEARD))
        reply = await b.handle(tg(text))
        assert "location" in reply.text and "Pune" in reply.text
        assert await b.parts.facts.facts(user=A) == []


# -- 4: forget everything erases everything -----------------------------------------------------

async def test_forget_everything_after_a_link_with_conflicting_facts_leaves_nothing(
        workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry()) as b:
        where = Provenance(source=FactSource.HEARD)
        await b.parts.facts.learn(A, "location", "Pune", where)
        await b.parts.facts.learn(B, "location", "Mumbai", where)  # the newer one
        code = await b.parts.people.ask_code(A, is_owner=False)
        assert (await b.parts.people.redeem(B, code, is_owner=False)).outcome is LinkOutcome.LINKED
        key = await b.parts.people.person_of("telegram", "43")
        assert [(f.user, f.value) for f in await b.parts.facts.facts()] == [(key, "Mumbai")]
        await b.parts.facts.learn(A, "employer", "Infosys", where)  # written under the old key by a late extraction
        await b.handle(tg("forget everything"))
        assert await b.parts.facts.facts() == []
        await b.parts.people.unlink(B)
        assert "Mumbai" not in (await b.handle(wa("what do you remember about me"))).text


async def test_forget_one_key_reaches_a_fact_left_under_a_linked_account(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry()) as b:
        await b.parts.people.link(A, B)
        await b.parts.facts.learn(A, "employer", "Infosys", Provenance(source=FactSource.HEARD))  # a late write
        reply = await b.handle(wa("/forget employer"))
        assert reply.text.startswith("Forgot 'employer'")
        assert await b.parts.facts.facts() == []


async def test_forget_everything_clears_the_note_of_what_was_said(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(say("ok"), say("ok"))
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry()) as b:
        await b.parts.people.link(A, B)
        await b.handle(wa("My divorce hearing is on Friday"))
        await b.handle(wa("forget everything"))
        await b.handle(tg("What next?"))
        assert "divorce" not in context_of(model.requests[-1])


async def test_an_extraction_pending_at_forget_everything_writes_nothing(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(say("ok"))
    model.memory = Step(text='{"facts": [{"key": "location", "value": "Pune", "kind": "profile"}]}', latency=3.0)
    settings = board_settings(workspace, data_dir, model)
    settings = replace(settings, agent=replace(settings.agent, cheap_model=None))
    async with await Board.open(settings, model.registry()) as b:
        await b.handle(tg("I'm based in Pune."))  # its extraction (under telegram:43) is still running
        assert b.parts.memory_writer is not None and b.parts.memory_writer.pending == 1
        await b.parts.people.link(A, B)
        forgot = await b.handle(wa("forget everything"))
        assert "nothing to forget" in forgot.text.lower()
        await b.parts.memory_writer.settle(A)
        assert await b.parts.facts.facts() == []


# -- 6: a link cycle does not reset a budget ----------------------------------------------------

async def _spend(b: Board, sender: str, usd: float) -> None:
    await b.parts.db.execute(
        "INSERT INTO llm_calls(ts, provider, model, outcome, cost_usd, sender) VALUES (?,?,?,?,?,?)",
        (datetime.now(UTC).isoformat(timespec="seconds"), "x", "x", "ok", usd, sender))


async def test_linking_does_not_reset_the_day_s_budget(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    s = board_settings(workspace, data_dir, model, budget=BudgetSettings(per_sender_daily_usd=1.0))
    async with await Board.open(s, model.registry()) as b:
        await _spend(b, A, 1.0)
        await _spend(b, B, 1.0)
        outcomes = []
        for _ in range(5):
            code = await b.parts.people.ask_code(B, is_owner=False)
            r = await b.parts.people.redeem(A, code, is_owner=False)
            outcomes.append(r.outcome)
            key = await b.parts.people.person_of("telegram", "43")
            assert await b.parts.budget.check(key, is_owner=False) is not None  # still spent
            await b.parts.people.unlink(B)
        assert outcomes[:3] == [LinkOutcome.LINKED] * 3
        assert LinkOutcome.LINKED not in outcomes[3:]


# -- 7: the extraction dedupe key ---------------------------------------------------------------

async def test_the_same_message_id_on_two_channels_is_heard_twice(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(say("ok"), say("ok"))
    settings = board_settings(workspace, data_dir, model)
    settings = replace(settings, agent=replace(settings.agent, cheap_model="offline"))
    async with await Board.open(settings, model.registry()) as b:
        await b.parts.people.link(A, B)
        key = await b.parts.people.person_of("telegram", "43")
        await b.handle(replace(tg("I'm based in Pune."), message_id="5"))
        await b.handle(replace(wa("I work at Zeta Foods."), message_id="5"))  # ids are per channel (and chat)
        assert b.parts.memory_writer is not None
        await b.parts.memory_writer.settle(key)
        assert {f.key: f.value for f in await b.parts.facts.facts(user=key)} == {"location": "Pune",
                                                                                 "employer": "Zeta Foods"}
