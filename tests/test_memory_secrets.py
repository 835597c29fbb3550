"""The memory's secret filter (issue item 7): facts written the way models write them (``card_pin: 4455``,
``door_code=1234``, "alarm code is 9911", a wallet's seed words, "netflix login pw Summer2024") are never
stored, and facts that merely look close ("zip code 94107", "a PIN-striped suit", "works on code review",
"seed round") still are.

Three labelled sets in ``tests/data/`` (one JSON object a line: ``key``, ``value``, ``secret``):
``memory_secrets.jsonl`` (the set the filter was tuned on), ``memory_secrets_heldout.jsonl`` (written before
the filter was changed; its first measurement: recall 1.000, 1 of 30 harmless refused, "pin code: 411001")
and ``memory_secrets_heldout2.jsonl`` (new phrasings written after that tuning; its first measurement:
recall 0.867 (a home alarm's "disarm with 5570", a lockbox's and a key safe's digits, a password in a
database URL), 4 of 30 harmless refused; the rules were widened for those kinds, so it is no longer held out).

What counts as a secret: anything that opens
something or moves money if someone else reads it: passwords and passphrases, PINs, door / gate / alarm /
garage / lock / safe codes and combinations, one-time and backup codes, wallet seed or recovery words, API
keys and tokens, card numbers, expiry and CVV, bank account numbers and IBANs, government ID numbers, gift
card codes. Not a secret: postal codes (a ZIP, a UK postcode, an Indian PIN code of six digits with no card,
bank or lock nearby), area / country / airport codes, dress codes, promo and referral codes (meant to be
shared), addresses, phone numbers, e-mail addresses, a funding stage ("seed"), naming a password manager.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.memory.statements import secret_reason
from board.storage.url import StateURL
from tests.fakes.scripted_model import ScriptedModel
from tests.llm_support import envelope
from tests.test_memory_extract import heard_facts, open_on, settings_with_cheap, settle

DATA = Path(__file__).parent / "data"
#: At most this share of harmless facts may be refused.
MAX_REFUSED = 0.05


def labelled(name: str) -> list[tuple[str, str, bool]]:
    rows = [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(r["key"], r["value"], bool(r["secret"])) for r in rows]


def measure(name: str) -> tuple[list[str], list[str], str]:
    """(secrets let through, harmless facts refused, the printed figures) of the filter on one set."""
    facts = labelled(name)
    secrets = [(k, v) for k, v, s in facts if s]
    harmless = [(k, v) for k, v, s in facts if not s]
    missed = [f"{k}: {v}" for k, v in secrets if secret_reason(k, v) is None]
    refused = [f"{k}: {v} ({secret_reason(k, v)})" for k, v in harmless if secret_reason(k, v) is not None]
    caught = len(secrets) - len(missed)
    precision = caught / (caught + len(refused)) if caught + len(refused) else 1.0
    recall = caught / len(secrets)
    figures = (f"{name}: {len(secrets)} secret, {len(harmless)} harmless; recall {recall:.3f} "
               f"({len(missed)} secret(s) let through), precision {precision:.3f}, harmless refused "
               f"{len(refused)}/{len(harmless)} = {len(refused) / len(harmless):.1%}")
    return missed, refused, figures


@pytest.mark.parametrize("name", ["memory_secrets.jsonl", "memory_secrets_heldout.jsonl",
                                  "memory_secrets_heldout2.jsonl"])
def test_no_labelled_secret_passes_and_few_harmless_facts_are_refused(name: str) -> None:
    facts = labelled(name)
    assert sum(s for _k, _v, s in facts) >= 30 and sum(not s for _k, _v, s in facts) >= 30
    missed, refused, figures = measure(name)
    print(f"\n{figures}")
    for line in missed:
        print(f"  let through: {line}")
    for line in refused:
        print(f"  refused: {line}")
    assert not missed, figures
    assert len(refused) <= MAX_REFUSED * sum(not s for _k, _v, s in facts), figures


def test_the_sets_together_hold_at_least_60_of_each() -> None:
    facts = labelled("memory_secrets.jsonl") + labelled("memory_secrets_heldout.jsonl")
    assert sum(s for _k, _v, s in facts) >= 60 and sum(not s for _k, _v, s in facts) >= 60


#: What the issue saw stored end to end, as the model proposed it, and one harmless fact beside them.
PROPOSED = [
    ("card_pin", "4455"), ("door_code", "1234"), ("alarm_code", "9911"), ("garage", "garage opener code 4321"),
    ("wallet", "abandon ability able about above absent absorb abstract absurd abuse access accident"),
    ("netflix", "netflix login pw Summer2024"), ("note", "my card pin is 4455"), ("location", "Pune"),
]


async def test_secrets_the_model_proposes_after_a_real_turn_are_never_stored(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = ScriptedModel()
    model.memory = json.dumps({"facts": [{"key": k, "value": v, "kind": "context"} for k, v in PROPOSED]})
    said = ("I'm in Pune. My card pin is 4455, door code 1234, alarm code 9911, the garage opener code is 4321, "
            "my wallet words are abandon ability able about above absent absorb abstract absurd abuse access "
            "accident, and netflix login pw Summer2024.")
    async with await open_on(settings_with_cheap(workspace, data_dir, state_url, model, cheap=None), model) as b:
        await b.handle(envelope(said))
        await settle(b)
        assert len(model.memory_requests) == 1  # the model was asked, and proposed all of them
        marker = await b.handle(envelope("Q900 what next?"))  # a later turn: the extraction is long done
        assert marker.text == "general: Q900 what next?"
        await settle(b)
        kept = await heard_facts(b)
    assert kept == {"location": "Pune"}, kept
