"""The memory's secret filter in a real ``sabha run`` (issue 36, item 7; round secrets46): the owner's Telegram DMs are
read by the cheap model (a fake OpenAI-compatible server whose ``memory_text`` proposes facts, as a model would write
them); blind4's six secrets that classify46's filter stored (answers to verification questions in any words, backup
numbers, an unlock pattern drawn or on a grid) are never written to ``memory_facts``, and the nine harmless facts it
refused (a postal PIN, HSN / SAC codes, a partial account number, news about a password, a place pinned on a map) are.
Round secrets47: the same for blind5's twenty secrets that secrets46's filter stored (codes given to open something in
Hindi, Tamil and Marathi, one-time codes by their SMS, an Amex number, an authenticator seed, security answers in any
words) and its eight harmless facts it refused (masked numbers, a policy number, events about a secret's kind).
Round secrets48: the same for blind6's eight secrets that secrets47's filter stored (national IDs by form, a card's
code on its front or back, turns in Bengali, a car's keypad, numbered wallet words, a bank's question) and the fourteen
harmless facts it refused (postal PIN codes, routing and employee codes, a locker's number, a dress code, a plan, a
login by Google, talk).
Round secrets49: the same for blind7's eighteen secrets that secrets48's filter stored (IDs of Nigeria, Indonesia,
Mexico, Germany and Kenya; a PIN or a password in Swahili, Bahasa, Spanish, Portuguese and German words; a code by its
use; a card's back; a bank's question answered) and its one refusal (an opinion of security questions).
Round secrets50: the same for blind8's twenty-one secrets that secrets49's filter stored (passwords beside verbs of
getting in, a router's admin pair, a number that is all an iPad's value, verification codes, IDs by checksum, digits
said in voice notes and in Polish) and its five refusals (a speaker pass, a gate pass, a price per OTP SMS, who holds
the signing keys, a map pin).
Round secrets51: the same for blind9's and blind10's six secrets each that secrets50's filter stored (a password after a
router's or a service's name in Swedish and Amharic, a card's PIN in Yoruba, a spoken user and password, a Korean
resident number, a bank's question answered; a code a DVR takes, a till's override, half a wallet's words, a TAN,
spaced digits on a card's back, a safe's turns in Portuguese) and their seven refusals (a PNR, a passcode policy, a
recovery plan, env lines, where a password is written, a queue token, a host list).
Round secrets52: the same for tuning52's thirteen secrets that secrets51's filter stored (everyday English credentials:
a device that opens with a word, a host key, a bank's memorable information, IRD / PPS / TFN and licence numbers, a
voicemail's PIN after its number), caught by the learned model that now reads characters and words, and two of its
refusals the rules now keep (a network's name, an order's number beside a keypad) with three look-alikes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.board.language.test_memory_secrets import (
    BLIND4_REFUSED,
    BLIND4_STORED,
    BLIND5_REFUSED,
    BLIND5_STORED,
    BLIND6_REFUSED,
    BLIND6_STORED,
    BLIND7_REFUSED,
    BLIND7_STORED,
    BLIND8_REFUSED,
    BLIND8_STORED,
    BLIND9_REFUSED,
    BLIND9_STORED,
    BLIND10_REFUSED,
    BLIND10_STORED,
    TUNING52_REFUSED,
    TUNING52_STORED,
)
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.standing import StandingBoard
from tests.support.telegram import OWNER

USER = f"telegram:{OWNER}"
#: What the owner says, and what the model proposes after each message (at most eight facts a message), the last a
#: plain fact that is always kept: once it is written, that message's extraction is done.
TURNS = (("I keep my bank details and phone tidy, here's what matters to me.",
          [*BLIND4_STORED[:4], *BLIND4_REFUSED[:3], ("home_city", "Mumbai")]),
         ("My phone and invoices, for the record.",
          [*BLIND4_STORED[4:], *BLIND4_REFUSED[3:6], ("employer", "Acme")]),
         ("I also pinned my favourite pizza place and my delivery area.",
          [*BLIND4_REFUSED[6:], ("diet", "vegetarian")]))
PLAIN = {facts[-1] for _text, facts in TURNS}


@pytest.fixture
async def cheap() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:  # extractions are answered by its memory_text
        yield server


@pytest.fixture
async def board(tmp_path: Path, fake: FakeTelegramAPI, cheap: FakeOpenAI) -> AsyncIterator[StandingBoard]:
    extra = ["llm:", "  cheap_model: openai:cheap", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {cheap.base_url}", "      stream: false"]
    running = StandingBoard(tmp_path, fake, extra=extra)
    try:
        yield running
    finally:
        await running.sabha.close()


#: blind5's misses and refusals in four DMs of seven facts each, then a plain fact.
TURNS5 = tuple((f"I keep my locks, cards and phone codes in order; here is what matters to me at home, part {i + 1}.",
                [*BLIND5_STORED[5 * i:5 * i + 5], *BLIND5_REFUSED[2 * i:2 * i + 2], (f"plain_{i}", f"likes chai, {i}")])
               for i in range(4))


async def _told(board: StandingBoard, fake: FakeTelegramAPI, cheap: FakeOpenAI,
                turns: tuple[tuple[str, list[tuple[str, str]]], ...]) -> set[tuple[str, str]]:
    """Say each turn's text to the running board with the model proposing its facts; what ``memory_facts`` holds."""
    await board.start()
    for text, facts in turns:
        cheap.memory_text = json.dumps({"facts": [{"key": k, "value": v, "kind": "context"} for k, v in facts]})
        fake.push_text(OWNER, OWNER, text)
        await board.wait_db('SELECT COUNT(*) FROM memory_facts WHERE "user" = ? AND key = ?', 1, (USER, facts[-1][0]))
    return {(r["key"], r["value"]) for r in board.query('SELECT key, value FROM memory_facts WHERE "user" = ?',
                                                        (USER,))}


async def test_blind4s_secrets_are_never_stored_and_its_harmless_facts_are(board: StandingBoard, fake: FakeTelegramAPI,
                                                                           cheap: FakeOpenAI) -> None:
    stored = await _told(board, fake, cheap, TURNS)
    assert not stored & set(BLIND4_STORED), stored & set(BLIND4_STORED)  # no secret written
    assert stored == set(BLIND4_REFUSED) | PLAIN, set(BLIND4_REFUSED) - stored  # every harmless fact written



#: blind6's misses and refusals in four DMs (two secrets and three or four harmless facts each), then a plain fact.
TURNS6 = tuple((f"I keep my cards, IDs, office and team details in order; here is what matters, part {i + 1}.",
                [*BLIND6_STORED[2 * i:2 * i + 2], *BLIND6_REFUSED[4 * i:4 * i + 4], (f"plain6_{i}", f"likes tea, {i}")])
               for i in range(4))



#: blind7's misses in three DMs of six, its one refusal in the first, then a plain fact.
TURNS7 = tuple((f"My IDs, bank apps and cards in the countries we work in; keep what matters, part {i + 1}.",
                [*BLIND7_STORED[6 * i:6 * i + 6], *(BLIND7_REFUSED if i == 0 else []),
                 (f"plain7_{i}", f"likes coffee, {i}")])
               for i in range(3))


#: blind8's misses in five DMs of four or five, one refusal in each, then a plain fact (at most eight facts a message).
_CUTS8 = (0, 5, 9, 13, 17, 21)
TURNS8 = tuple((f"My passwords, IDs and locks, the family's and the office's; keep what matters, part {i + 1}.",
                [*BLIND8_STORED[_CUTS8[i]:_CUTS8[i + 1]], BLIND8_REFUSED[i], (f"plain8_{i}", f"likes tea, {i}")])
               for i in range(5))


#: blind9's and blind10's misses in two DMs of three each, a refusal or two beside them, then a plain fact.
TURNS9 = tuple((f"My logins, IDs and bank answers from home and abroad; keep what matters, part {i + 1}.",
                [*BLIND9_STORED[3 * i:3 * i + 3], *BLIND9_REFUSED[2 * i:2 * i + 2], (f"plain9_{i}", f"likes tea, {i}")])
               for i in range(2))
TURNS10 = tuple((f"I look after the shop's devices, tills and the family's cards; keep what matters, part {i + 1}.",
                 [*BLIND10_STORED[3 * i:3 * i + 3], *BLIND10_REFUSED[2 * i:2 * i + 2],
                  (f"plain10_{i}", f"likes tea, {i}")])
                for i in range(2))


#: tuning52's misses in three DMs of four or five, its look-alikes beside them, then a plain fact (round secrets52).
_CUTS52 = (0, 5, 9, 13)
TURNS52 = tuple((f"My family's logins, IDs and bank bits, and the home network; keep what matters, part {i + 1}.",
                 [*TUNING52_STORED[_CUTS52[i]:_CUTS52[i + 1]], *TUNING52_REFUSED[2 * i:2 * i + 2],
                  (f"plain52_{i}", f"likes tea, {i}")])
                for i in range(3))


@pytest.mark.parametrize(("turns", "secrets", "harmless"), [(TURNS5, BLIND5_STORED, BLIND5_REFUSED),
                                                            (TURNS6, BLIND6_STORED, BLIND6_REFUSED),
                                                            (TURNS7, BLIND7_STORED, BLIND7_REFUSED),
                                                            (TURNS8, BLIND8_STORED, BLIND8_REFUSED),
                                                            (TURNS9, BLIND9_STORED, BLIND9_REFUSED),
                                                            (TURNS10, BLIND10_STORED, BLIND10_REFUSED),
                                                            (TURNS52, TUNING52_STORED, TUNING52_REFUSED)],
                         ids=["blind5", "blind6", "blind7", "blind8", "blind9", "blind10", "tuning52"])
async def test_a_held_out_sets_secrets_are_never_stored_and_its_harmless_facts_are(
        board: StandingBoard, fake: FakeTelegramAPI, cheap: FakeOpenAI,
        turns: tuple[tuple[str, list[tuple[str, str]]], ...], secrets: list[tuple[str, str]],
        harmless: list[tuple[str, str]]) -> None:
    """Each held-out set's misses and refusals (the secrets proposed, then the harmless facts) told to a running board,
    the model proposing them as facts after each DM: no secret in ``memory_facts``, every harmless fact there."""
    stored = await _told(board, fake, cheap, turns)
    assert not stored & set(secrets), stored & set(secrets)  # no secret written
    plain = {facts[-1] for _text, facts in turns}
    assert stored == set(harmless) | plain, set(harmless) - stored  # every harmless fact written
