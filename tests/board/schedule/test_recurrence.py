"""The standing-work phrase reader (board.schedule.recurrence) over a labelled set: 57 phrasings in
``tests/data/schedule_phrases.jsonl`` (weekdays, "every other", "1st of month", "last friday", times in
am/pm and 24h, time zones, daylight-saving changes, nonsense), each with what it must read as (kind, topic,
the rule in words and its next runs in UTC, from the line's ``now`` in the board's ``zone``) or the refusal
it must get, which always says what would be understood. The labels were written by hand from a calendar,
not from the reader's output."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from board.schedule.recurrence import EVERY_UNDERSTOOD, Recurrence, RecurrenceProblem, read_every

PHRASES = Path(__file__).parents[2] / "data" / "schedule_phrases.jsonl"
LABELLED: list[dict[str, Any]] = [json.loads(line) for line in PHRASES.read_text().splitlines() if line.strip()]


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_the_labelled_set_is_large_and_covers_refusals() -> None:
    assert len(LABELLED) >= 40
    assert sum("refused" in case for case in LABELLED) >= 10
    assert {case["zone"] for case in LABELLED} >= {"UTC", "America/New_York", "Europe/Berlin"}


@pytest.mark.parametrize("case", LABELLED, ids=[f"{c['text']} [{c['zone']}]" for c in LABELLED])
def test_each_phrase_reads_as_labelled(case: dict[str, Any]) -> None:
    now = _at(case["now"])
    if "refused" in case:
        with pytest.raises(RecurrenceProblem) as refused:
            read_every(case["text"], now, case["zone"])
        said = str(refused.value)
        assert case["refused"] in said, said
        assert f"I understand: {EVERY_UNDERSTOOD}" in said  # the suggestion: what would be read
        return
    asked = read_every(case["text"], now, case["zone"])
    assert (asked.kind.value, asked.topic, asked.recurrence.said()) == (case["kind"], case["topic"], case["said"])
    runs, moment = [], now
    for _ in case["runs"]:
        moment = asked.recurrence.next_after(moment)
        runs.append(moment.strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert runs == case["runs"]
    stored = Recurrence.from_json(asked.recurrence.to_json())  # what the db keeps reads back the same
    assert stored == asked.recurrence
