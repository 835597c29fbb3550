"""Context budget and compaction: summaries replace old turns, the static prompt never changes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from board.agent.compaction import ContextSettings, load_window
from board.app import Board
from board.llm.base import LLMRequest
from board.llm.tokens import ESTIMATE, counter_for, estimate_tokens
from board.storage.url import StateURL
from tests.support.fakes.scripted_model import ScriptedModel, Step, fail
from tests.support.llm import envelope, scripted_board, session_entries

pytestmark = pytest.mark.backends

LONG = "We discussed the Pune warehouse lease, the hiring plan and the GST filing calendar in detail. " * 3


def summarising(request: LLMRequest) -> Step:
    """Answers turns with an echo and compaction requests with a recognisable summary."""
    last = request.messages[-1].content
    if request.metadata.get("purpose") == "compaction":
        folded = last.count("\n") + 1
        return Step(text=f"SUMMARY of {folded} lines: warehouse lease, hiring plan, GST calendar.")
    return Step(text=f"Noted ({len(request.messages)} messages in view). " + LONG[:120])


def small_budget(**kw: object) -> ContextSettings:
    values: dict[str, object] = {"history_tokens": 300, "keep_recent_messages": 2}
    values.update(kw)
    return ContextSettings(**values)  # type: ignore[arg-type]


@asynccontextmanager
async def open_board(
    workspace: Path, data_dir: Path, state: StateURL | None, model: ScriptedModel, points: int = 0, **agent: Any
) -> AsyncIterator[Board]:
    """A board talking to ``model`` on the small budget (unless ``context`` is given) that has heard
    ``points`` long points; closed afterwards."""
    agent.setdefault("context", small_budget())
    board = await scripted_board(workspace, data_dir, model, state=state, **agent)
    try:
        for i in range(points):
            await board.handle(envelope(f"Point {i}: {LONG}"))
        yield board
    finally:
        await board.close()


async def test_compaction_triggers_and_static_prompt_stays_identical(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = ScriptedModel(default=summarising)
    async with open_board(workspace, data_dir, state_url, model, 8, cheap_model="scripted:cheap") as board:
        turns = model.requests_for("general", purpose="turn")
        summaries = model.requests_for("general", purpose="compaction")
        assert len(turns) == 8 and summaries, "the history went over budget, so it was compacted"
        assert all(r.request.model == "scripted:cheap" for r in summaries)  # the cheap model summarises
        assert {r.request.system[0].text for r in turns} == {turns[0].request.system[0].text}  # byte-identical

        entries = await session_entries(board, "main")
        records = [e for e in entries if e["type"] == "compaction"]
        assert records and records[-1]["summary"].startswith("SUMMARY")
        assert records[-1]["first_kept"] and records[-1]["kept_messages"] >= 1
        assert records[-1]["tokens_after"] < records[-1]["tokens_before"]
        assert records[-1]["token_method"] == ESTIMATE

        last = turns[-1].request
        assert [b.name for b in last.system] == ["static", "summary"]
        assert "SUMMARY" in last.system[1].text and last.system[1].cacheable
        assert len(last.messages) <= 2 + 1  # the kept messages and the new one, not all 16
        assert last.messages[-1].content.startswith("Point 7")
        # the history the model saw is inside the budget
        counter = counter_for("scripted:main")
        assert counter.count_messages(last.messages[:-1]) + counter.count(last.system[1].text) <= 300 + 150


async def test_history_survives_a_restart_via_the_compaction_record(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    async with open_board(workspace, data_dir, state_url, ScriptedModel(default=summarising), 6):
        pass
    model2 = ScriptedModel(default=summarising)
    async with open_board(workspace, data_dir, state_url, model2) as board:
        await board.handle(envelope("And now?"))
        request = model2.requests_for("general", purpose="turn")[0].request
        assert any(b.name == "summary" and "SUMMARY" in b.text for b in request.system)
        assert request.messages[-1].content == "And now?"


async def test_compact_command_forces_compaction(workspace: Path, data_dir: Path, state_url: StateURL | None) -> None:
    model = ScriptedModel(default=summarising)
    # nothing would trigger compaction by itself
    async with open_board(workspace, data_dir, state_url, model, context=ContextSettings()) as board:
        for i in range(3):
            await board.handle(envelope(f"@research question {i}"))
        reply = await board.handle(envelope("/compact research"))
        assert reply.kind == "command" and "Compacted the conversation with research" in reply.text
        entries = await session_entries(board, "board:research")
        record = entries[-1]
        assert record["type"] == "compaction" and record["forced"] is True and record["summarized_messages"] == 4
        await board.handle(envelope("@research next"))
        request = model.requests_for("research", purpose="turn")[-1].request
        contents = [m.content for m in request.messages]
        assert len(contents) == 3 and contents[0] == "question 2" and contents[-1] == "next"
        assert any(b.name == "summary" for b in request.system)
        empty = await board.handle(envelope("/compact critic"))
        assert "Nothing to compact" in empty.text


async def test_summariser_failure_keeps_the_turn_alive(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    def flaky(request: LLMRequest) -> Step:
        if request.metadata.get("purpose") == "compaction":
            return fail("server")
        return summarising(request)

    model = ScriptedModel(default=flaky)
    async with open_board(workspace, data_dir, state_url, model) as board:
        for i in range(6):
            reply = await board.handle(envelope(f"Point {i}: {LONG}"))
            assert not reply.degraded
        entries = await session_entries(board, "main")
        assert not [e for e in entries if e["type"] == "compaction"]
        last = model.requests_for("general", purpose="turn")[-1].request
        counter = counter_for("scripted:main")
        assert counter.count_messages(last.messages[:-1]) <= 300  # oldest messages dropped to fit
        assert last.messages[-1].content.startswith("Point 5")


async def test_compaction_can_be_turned_off(workspace: Path, data_dir: Path, state_url: StateURL | None) -> None:
    model = ScriptedModel(default=summarising)
    async with open_board(workspace, data_dir, state_url, model, context=small_budget(compaction=False),
                          history_messages=4) as board:
        for i in range(6):
            await board.handle(envelope(f"Point {i}"))
        assert not model.requests_for("general", purpose="compaction")  # no summariser
        turns = [r.request for r in model.requests_for("general")]
        # never more than 4 earlier messages, and cut in a block (down to half the cap), not slid per turn
        assert [len(r.messages) for r in turns] == [1, 3, 5, 3, 5, 3]
        contents = [[m.content for m in r.messages] for r in turns]
        assert contents[3][0] == "Point 2" and contents[3][-1] == "Point 3"
        assert contents[4][:3] == contents[3]  # between cuts, last turn's prompt is this one's prefix
        entries = await session_entries(board, "main")
        drops = [e for e in entries if e["type"] == "compaction"]
        assert [(d["mode"], d["dropped_messages"], d["summary"]) for d in drops] == [("drop", 4, None)] * 2


async def test_window_reads_only_the_tail(workspace: Path, data_dir: Path, state_url: StateURL | None) -> None:
    async with open_board(workspace, data_dir, state_url, ScriptedModel(default=summarising), 6) as board:
        ref = await board.parts.sessions.current("main")
        assert ref is not None
        transcript = await board.parts.transcripts.open(ref.session_id)
        window = load_window(transcript)
        assert window.summary and window.summary.startswith("SUMMARY")
        assert all(e["type"] == "message" for e in window.entries)
        assert len(window.entries) < 12


def test_token_counter_falls_back_to_a_labelled_estimate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import board.llm.tokens as tokens

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(tokens, "_ENCODINGS", {})
    counter = counter_for("openai:gpt-4o")
    assert counter.method == ESTIMATE and not counter.exact  # never downloads
    assert counter_for("anthropic:claude-sonnet-4-6").method == ESTIMATE
    assert counter_for("openai:llama3.1").method == ESTIMATE  # not an OpenAI tokenizer model
    assert estimate_tokens("a" * 400) == 100
    assert estimate_tokens("नमस्ते") > estimate_tokens("hello")  # non-Latin text costs more


def test_token_counter_uses_tiktoken_when_the_encoding_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The encoding is in tiktoken's own cache, put there by tiktoken itself (its download faked at the network
    edge: a small byte-level BPE file): the real ``_cache_file`` must find it where tiktoken keeps it, and the
    counter counts with the real tiktoken, loading from that cache (no download)."""
    import base64

    import tiktoken.load
    import tiktoken.registry

    import board.llm.tokens as tokens

    bpe = b"".join(base64.b64encode(bytes([b])) + b" " + str(b).encode() + b"\n" for b in range(256))
    downloads: list[str] = []

    def download(blobpath: str) -> bytes:  # the network edge: tiktoken's fetch
        downloads.append(blobpath)
        return bpe

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))
    monkeypatch.setattr(tiktoken.load, "read_file", download)
    monkeypatch.setattr(tiktoken.load, "check_hash", lambda data, expected: data == bpe)  # our file, not OpenAI's
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    monkeypatch.setattr(tokens, "_ENCODINGS", {})
    assert counter_for("openai:gpt-4o-mini").method == ESTIMATE and downloads == []  # not cached: never downloads

    tiktoken.registry.get_encoding("o200k_base")  # tiktoken fetches it once and caches it where it keeps it
    assert len(downloads) == 1 and len(list((tmp_path / "tiktoken-cache").iterdir())) == 1
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})  # a new process: only the file on disk
    monkeypatch.setattr(tokens, "_ENCODINGS", {})
    counter = counter_for("openai:gpt-4o-mini")
    assert counter.exact and counter.method == "tiktoken:o200k_base"
    assert counter.count("one two three") == 13  # one token per byte in this small encoding
    assert len(downloads) == 1  # loaded from the cache, not fetched again


@pytest.mark.parametrize("compaction", [True, False])
async def test_a_message_cap_below_keep_recent_messages_still_holds(
    workspace: Path, data_dir: Path, state_url: StateURL | None, compaction: bool
) -> None:
    model = ScriptedModel(default=summarising)
    context = ContextSettings(compaction=compaction)  # keeps 6 messages, more than the cap of 4
    async with open_board(workspace, data_dir, state_url, model, context=context, history_messages=4) as board:
        for i in range(7):
            await board.handle(envelope(f"Point {i}"))
        turns = [r.request for r in model.requests_for("general", purpose="turn")]
        assert max(len(r.messages) for r in turns) == 5  # 4 earlier + the new one, never more
        records = [e for e in await session_entries(board, "main") if e["type"] == "compaction"]
        assert records and all(r["kept_messages"] <= 3 for r in records)  # half the cap, and the message asked
        assert bool(model.requests_for("general", purpose="compaction")) is compaction


def _window_from_the_whole_tail(tail: list[dict[str, Any]]) -> tuple[str | None, list[str]]:
    """The window as it was read before the walk (issue 44): the whole tail filtered, then cut at the last
    compaction. The walk must give the same (summary, entry ids)."""
    from board.agent.compaction import _is_message

    last = next((i for i in range(len(tail) - 1, -1, -1) if tail[i].get("type") == "compaction"), None)
    if last is None:
        return None, [e["id"] for e in tail if _is_message(e)]
    record = tail[last]
    before = [e for e in tail[:last] if _is_message(e)]
    kept: list[dict[str, Any]] = []
    if record.get("first_kept"):
        start = next((i for i, e in enumerate(before) if e.get("id") == record["first_kept"]), None)
        kept = before[start:] if start is not None else before[-int(record.get("kept_messages") or 0):] \
            if int(record.get("kept_messages") or 0) > 0 else []
    after = [e for e in tail[last + 1:] if _is_message(e)]
    return record.get("summary"), [e["id"] for e in kept + after]


class _Tail:
    """A transcript's tail in memory (what load_window reads)."""

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self.entries = entries

    def recent(self, limit: int, *, types: tuple[str, ...] = ("message",)) -> list[dict[str, Any]]:
        return [e for e in self.entries if e.get("type") in types][-limit:]

    def newest(self, types: tuple[str, ...] = ("message",)) -> Any:
        return (e for e in reversed(self.entries) if e.get("type") in types)


def _said(i: int, role: str = "user", kind: str = "message") -> dict[str, Any]:
    return {"type": kind, "id": f"m{i}", "role": role, "text": f"said {i}"}


@pytest.mark.parametrize("shape", ["none", "kept found", "kept gone", "kept none", "meeting and tools", "two"])
def test_the_window_walked_from_the_newest_is_the_window_of_the_whole_tail(shape: str) -> None:
    tail = [_said(i, ("user", "assistant")[i % 2]) for i in range(30)]
    record = {"type": "compaction", "id": "c1", "summary": "S", "first_kept": "m26", "kept_messages": 4}
    if shape == "kept found":
        tail.insert(30, record)
    elif shape == "kept gone":
        tail.insert(30, {**record, "first_kept": "m-older", "kept_messages": 3})
    elif shape == "kept none":
        tail.insert(30, {**record, "first_kept": None, "kept_messages": 0})
    elif shape == "meeting and tools":
        tail += [{"type": "tool_call", "id": "t1"}, _said(40, "assistant", "meeting"), record, _said(41)]
    elif shape == "two":
        tail[10:10] = [{**record, "id": "c0", "summary": "old", "first_kept": "m8"}]
        tail += [{**record, "id": "c2", "summary": "new", "first_kept": "m28"}, _said(50)]
    window = load_window(_Tail(tail))  # type: ignore[arg-type]
    assert (window.summary, [e["id"] for e in window.entries]) == _window_from_the_whole_tail(tail)


async def test_a_turn_walks_its_window_not_the_whole_tail(workspace: Path, data_dir: Path,
        state_url: StateURL | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 44: a turn read its history window by filtering the whole in-memory tail (up to 400 events), twice,
    however short the window after the last compaction. Now it walks from the newest event back to the last
    compaction: one more turn looks at fewer entries than the tail holds."""
    from board.agent import compaction
    from board.conversation.transcripts import TAIL_ENTRIES

    async with open_board(workspace, data_dir, state_url, ScriptedModel(default=summarising), 40) as board:
        ref = await board.parts.sessions.current("main")
        assert ref is not None
        transcript = await board.parts.transcripts.open(ref.session_id)
        tail = transcript.recent(TAIL_ENTRIES, types=("message", "compaction", "meeting"))
        window = load_window(transcript)
        assert (window.summary, [e["id"] for e in window.entries]) == _window_from_the_whole_tail(tail)
        looked: list[object] = []
        real = compaction._is_message
        monkeypatch.setattr(compaction, "_is_message", lambda entry: looked.append(entry) or real(entry))
        await board.handle(envelope(f"One more point: {LONG}"))
        assert len(tail) >= 80
        assert len(looked) < len(tail) // 2, (len(looked), len(tail))


async def test_after_an_answer_the_history_is_compacted_ahead_so_the_next_turn_asks_the_model_once(
        workspace: Path, data_dir: Path, state_url: StateURL | None) -> None:
    """A compaction that falls due with an answer is made right after that answer is delivered
    (:meth:`Board.after`, which the intake calls in the conversation's lane, off the turn cap): the next turn asks
    the model once, its answer waits for no summary (issue 44: 1,100-1,200 model calls for 1,000 turns in the
    webhook benchmark's later rounds, the summaries inside turns)."""
    model = ScriptedModel(default=summarising)
    async with open_board(workspace, data_dir, state_url, model, cheap_model="scripted:cheap") as board:
        ahead = 0
        for i in range(8):
            asked = envelope(f"Point {i}: {LONG}")
            before = len(model.requests)
            reply = await board.handle(asked)
            assert [r.purpose for r in model.requests[before:]] == ["turn"], f"turn {i} asked for a summary first"
            before = len(model.requests)
            await board.after(asked, reply)
            made = [r.purpose for r in model.requests[before:]]
            assert made in ([], ["compaction"]), made
            ahead += len(made)
        assert ahead >= 2, "the history went over budget several times: compacted each time, after an answer"
        records = [e for e in await session_entries(board, "main") if e["type"] == "compaction"]
        assert len(records) == ahead and records[-1]["summary"].startswith("SUMMARY")
        last = model.requests_for("general", purpose="turn")[-1].request
        assert "SUMMARY" in last.system[1].text  # the next turn reads the summary made ahead of it
        assert len(last.messages) <= 2 + 1 + 2  # the kept messages, the answer after them and the new one

