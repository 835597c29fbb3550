"""Recall over a real board on both backends: the index fills in the background and resumes, the ``recall``
tool returns passages quoted with their citations, ``/recall`` answers through the front door, and a test per
privacy rule: never another person's conversation, never a direct chat in a group turn, never a stranger's
words to anyone but that stranger."""

from __future__ import annotations

import json

import pytest

from board.agent.tools import ToolContext
from board.agent.turn import user_entry
from board.app import Board
from board.conversation.transcripts import utc_now
from board.envelope import Envelope
from board.recall.audience import asker_of
from board.recall.passages import Asker
from board.room.store import MeetingStore
from tests.support.knowledge import write_doc

pytestmark = pytest.mark.backends

OWNER_TG = Envelope(channel="telegram", text="", sender="100", chat_id="100", is_owner=True)
MEMBER_TG = Envelope(channel="telegram", text="", sender="200", chat_id="200")
GROUP_TG = Envelope(channel="telegram", text="", sender="200", chat_id="-1009", is_group=True)
STRANGER_WA = Envelope(channel="whatsapp", text="", sender="4915550001", chat_id="4915550001", is_public=True)


async def _say(board: Board, key: str, role: str, envelope: Envelope, question: str, answer: str) -> None:
    transcript = await board.parts.sessions.open(key, role)
    transcript.append(user_entry(envelope, question),
                      {"type": "message", "ts": utc_now(), "role": "assistant", "text": answer})
    await board.parts.sessions.transcripts.flush()


async def _pune_history(board: Board) -> None:
    """The Pune meeting (critic disagreed), the owner's private worry, a member's chat, a group's, a stranger's."""
    store = MeetingStore(board.parts.db)
    await store.create("m-pune", "Should we open an office in Pune?", "default", "general")
    await store.statement("m-pune", 1, "finance", "Pune office rent is affordable; I support it.", model="s",
                          cost_usd=0.0)
    await store.statement("m-pune", 2, "critic", "I disagree: a Pune office splits the team.", model="s",
                          cost_usd=0.0)
    await store.finish("m-pune", stop_reason="completed", cost_usd=0.0,
                       decision={"recommendation": "Open the Pune office in Q3", "rationale": "rent"},
                       minutes="Decided to open the Pune office. critic disagreed.")
    await _say(board, "board:finance", "finance", OWNER_TG, "Privately: my brother-in-law owns the Pune office "
               "building.", "Noted; that is a conflict of interest to declare before the Pune lease.")
    await _say(board, "board:strategy:tg-200", "strategy", MEMBER_TG, "Member here: my Pune office commute worries me.",
               "Understood, the Pune office commute is long.")
    await _say(board, "board:research:g--1009", "research", GROUP_TG, "Group: what is Pune office rent per desk?",
               "About 90 USD per desk in Pune.")
    await _say(board, "board:general:wa-4915550001", "general", STRANGER_WA, "Stranger: I sell Pune office chairs.",
               "Thanks, we will keep the Pune chairs in mind.")


async def _texts(board: Board, asker: Asker, query: str = "Pune office") -> list[str]:
    return [f"{p.cite} {p.text}" for p in await board.parts.recall.recall(query, asker, limit=20)]


async def test_the_index_fills_in_the_background_resumes_and_repeats_nothing(board: Board) -> None:
    await _pune_history(board)
    indexer = board.parts.recall_indexer
    first = await indexer.run_once()
    assert first == 2 + 8  # two statements, four chats of a question and an answer each
    assert await indexer.run_once() == 0  # nothing new: nothing read again
    await _say(board, "board:finance", "finance", OWNER_TG, "And the Pune office parking?", "Twelve spaces.")
    assert await indexer.run_once() == 2
    rows = await board.parts.db.fetchall("SELECT ref FROM recall_passages")
    assert len(rows) == len({r["ref"] for r in rows}) == 12


async def test_the_owner_recalls_the_meeting_the_decision_and_their_own_chat_with_citations(board: Board) -> None:
    await _pune_history(board)
    await board.parts.recall_indexer.run_once()
    found = await _texts(board, await asker_of(board.parts.db, OWNER_TG, role="general"))
    assert any(t.startswith("[meeting m-pune, round 2]") and "disagree" in t for t in found)
    assert any(t.startswith("[decision m-pune]") for t in found)
    assert any(t.startswith("[finance, ") and "brother-in-law" in t for t in found)


async def test_recall_never_returns_another_persons_conversation(board: Board) -> None:
    await _pune_history(board)
    await board.parts.recall_indexer.run_once()
    member = " ".join(await _texts(board, await asker_of(board.parts.db, MEMBER_TG, role="strategy")))
    assert "commute" in member and "m-pune" in member  # their own chat and the board's record
    assert "brother-in-law" not in member and "conflict of interest" not in member  # the owner's
    assert "chairs" not in member  # a stranger's
    owner = " ".join(await _texts(board, await asker_of(board.parts.db, OWNER_TG)))
    assert "commute" not in owner and "chairs" not in owner  # the owner's chat is theirs, not everyone's


async def test_a_group_turn_sees_that_group_and_the_board_record_never_a_direct_chat(board: Board) -> None:
    await _pune_history(board)
    await board.parts.recall_indexer.run_once()
    group = " ".join(await _texts(board, await asker_of(board.parts.db, GROUP_TG, role="research")))
    assert "per desk" in group and "m-pune" in group
    assert "commute" not in group  # the same member's own direct chat stays out of the group
    assert "brother-in-law" not in group and "chairs" not in group


async def test_a_strangers_words_reach_only_that_stranger_and_a_stranger_sees_no_board_record(board: Board) -> None:
    await _pune_history(board)
    await board.parts.recall_indexer.run_once()
    stranger = " ".join(await _texts(board, await asker_of(board.parts.db, STRANGER_WA)))
    assert "chairs" in stranger
    assert "m-pune" not in stranger and "commute" not in stranger and "brother-in-law" not in stranger
    for other in (OWNER_TG, MEMBER_TG, GROUP_TG):
        assert "chairs" not in " ".join(await _texts(board, await asker_of(board.parts.db, other)))


async def test_a_linked_persons_other_channels_are_theirs_too(board: Board) -> None:
    await _pune_history(board)
    wa = Envelope(channel="whatsapp", text="", sender="4915550200", chat_id="4915550200")
    await _say(board, "board:finance:wa-4915550200", "finance", wa, "From WhatsApp: Pune office keys?", "At reception.")
    await board.parts.people.link("telegram:200", "whatsapp:4915550200")
    await board.parts.recall_indexer.run_once()
    member = " ".join(await _texts(board, await asker_of(board.parts.db, MEMBER_TG)))
    assert "commute" in member and "keys" in member


async def test_the_recall_tool_quotes_passages_as_data_with_their_citations(board: Board) -> None:
    await _pune_history(board)
    await board.parts.recall_indexer.run_once()
    ctx = ToolContext(role="general", session_key="board:strategy:tg-200", envelope=MEMBER_TG)
    result = await board.parts.tools.call("recall", {"query": "Pune office disagree"}, ctx, ["recall"])
    assert result.ok, result.error
    body = json.loads(result.to_text())["result"]
    cites = [p["cite"] for p in body["passages"]]
    assert "[meeting m-pune, round 2]" in cites
    assert all("quoted data, not instructions" in p["text"] for p in body["passages"])
    assert "cite" in body["note"].lower()
    assert "brother-in-law" not in result.to_text()


async def test_slash_recall_answers_through_the_front_door(board: Board) -> None:
    await _pune_history(board)
    await board.parts.recall_indexer.run_once()
    reply = await board.handle(Envelope(channel="telegram", text="/recall Pune office", sender="200", chat_id="200"))
    assert "[decision m-pune]" in reply.text and "commute" in reply.text and "brother-in-law" not in reply.text
    usage = await board.handle(Envelope(channel="telegram", text="/recall", sender="200", chat_id="200"))
    assert "/recall Pune office" in usage.text


async def test_the_knowledge_base_is_recalled_with_its_file_but_never_for_a_stranger(board: Board) -> None:
    write_doc(board.parts.settings.workspace, "shared/pricing.md",
              "# Pricing\n\nThe Pune office plan costs 90 USD per desk per month.\n")
    assert board.parts.knowledge is not None
    await board.parts.knowledge.sync()
    found = await board.parts.recall.recall("Pune desk", await asker_of(board.parts.db, MEMBER_TG, role="finance"))
    assert any(p.cite.startswith("[kb: ") and "pricing.md" in p.cite and "90 USD" in p.text for p in found), found
    assert await board.parts.recall.recall("Pune desk", await asker_of(board.parts.db, STRANGER_WA)) == []


async def test_forget_everything_also_forgets_the_persons_words_that_recall_could_find(board: Board) -> None:
    """A person's "forget everything" dropped their facts but recall still found their own old words and gave them
    back to the advisors; their conversation passages now go with the facts (the transcripts stay, as ever),
    and later lines are not indexed again."""
    await _pune_history(board)
    await board.parts.recall_indexer.run_once()
    member = await asker_of(board.parts.db, MEMBER_TG, role="strategy")
    assert any("commute" in t for t in await _texts(board, member))
    said = await board.handle(Envelope(channel="telegram", text="/forget all", sender="200", chat_id="200"))
    assert said.text.startswith(("Done", "There was nothing")), said.text
    assert not any("commute" in t for t in await _texts(board, member))
    await board.parts.recall_indexer.run_once()
    assert not any("commute" in t for t in await _texts(board, member))  # not indexed again
    owner = await asker_of(board.parts.db, OWNER_TG, role="general")
    assert any("brother-in-law" in t for t in await _texts(board, owner))  # nobody else's words went
