"""The memory's secret filter (issue item 7; review findings 4, 5, 7 and 8): facts written the way models write
them (``card_pin: 4455``, ``door_code=1234``, "alarm code is 9911", a wallet's seed words, "netflix login pw
Summer2024") are never stored, and facts that merely look close ("zip code 94107", "a PIN-striped suit", "works
on code review", "seed round", "wifi provider: ACT Fibernet", "I work at Vault Capital.") still are.

Labelled sets in ``tests/data/`` (one JSON object a line: ``key``, ``value``, ``secret``; a ``null`` key is a
sentence as a person says it, read as :func:`board.language.statements.heard` reads it, by
:func:`board.language.secrets.sentence_reason`). The TUNING sets (the rules were changed until they pass, so they
measure nothing new): ``memory_secrets.jsonl``; ``memory_secrets_tuning2.jsonl`` (once called held-out: written
before the first change, then tuned on); ``memory_secrets_tuning3.jsonl`` (once called heldout2: written after
that tuning, then tuned on); ``memory_secrets_review1.jsonl`` (the review's probes: 17 secrets it saw stored,
16 harmless facts and sentences it saw refused; before the fix: 17 let through, 14 of 16 refused).

``memory_secrets_heldout3.jsonl`` (56 secret, 75 harmless) was the HELD-OUT set: written and committed before
the filter's second change and never tuned on. Its first measurement, before that change: recall 0.893 (6 let
through), 11/75 = 14.7% harmless refused. After the change: recall 0.946 (3 let through: "wife's phone: unlocks
with 120588", "spare key: lockbox by the meter, 1948", "The key safe outside the flat opens with 2468."), 6/75 =
8.0% harmless refused. In the third round (memory3) it BECAME A TUNING SET: the rules were changed, from stated
principles, until it passes (recall 1.000, 0/75 refused), so it measures nothing new either.

``memory_secrets_blind.jsonl`` (70 secret, 90 harmless) is the one HELD-OUT set that counts: written by someone
who had read neither the rules nor the other sets, given only the definition above; never tuned on. Measured
before round 3: 4 secrets let through (recall 0.943), 16/90 = 17.8% harmless refused; after round 3: the same 4
let through ("office_safe_combo: L 24, R 11, L 37", "quickbooks: u/p priya.accounts / Ledger2023",
"router_admin: admin:admin123", "ein: 84-3920175"), 11/90 = 12.2% refused. That misses the goal (none let
through, at most 5% refused): pattern rules tuned on one set keep missing the next set's phrasings. The test
holds it to what was measured, so a regression fails; reaching the goal needs another approach (a model check
beside the patterns, failing closed), not more patterns tuned on it.
``memory_secrets_tuning4.jsonl`` (35 secret, 35 harmless): probes written in that round by memory3 of phrasings
the earlier sets lacked (on the second round's filter: 2 secrets let through, 8/35 refused); tuned on. Two of
its harmless rows stay refused on purpose ("pin: pinned the roadmap...", "credentials: certified AWS
architect": a bare secret's key over a value that could be the secret), so it is held to that, not to 5%.
``memory_secrets_tuning5.jsonl`` (35 secret, 35 harmless): memory3's second probes, committed before the filter
was measured on them; first measurement (after the changes for heldout3 and tuning4): recall 0.914 (3 let
through: "demat: TPIN 445566", "wifi: SSID RaoHome, key is monsoon", "Use 3344 to open the garage."), 7/35 =
20.0% refused ("otp: prefers OTP over email links", "passport: renewing it in May", "door number: 1203", "I
work at Passcode Labs."...). Then tuned on: it passes the goal. ``memory_secrets_tuning6.jsonl`` (24 secret, 24
harmless): memory3's third probes, committed before being measured: recall 0.833 (4 let through: "netflix:
meera.k@gmail.com Sunny@123", "office: alarm is 5577", "apartment: 4B, entry 2211#", "Our Netflix login is
meera@gmail.com and Sunny@123."), 5/24 = 20.8% refused ("bank account: ends in 7712", "locker number: 214 at
the gym"...). Then tuned on: it passes the goal. Those first figures on unseen probes are the honest guess
for a fresh set: each new batch found new misses. ``memory_secrets_tuning7.jsonl`` (18 secret, 34 harmless, mostly
ordinary facts): memory3's fourth probes, committed before being measured; first measurement recall 1.000, 0/34
refused, no rule changed after it; written by the one who wrote the rules, so it is a weak held-out set.

Round ``classify`` (issue 36, item 7): a learned model beside the rules (:mod:`board.language.secret_model`,
logistic regression over the key's words and the value's words and token shapes, trained by
``scripts/train_classifiers.py`` on every set above, the blind one included, which is a training set from here
on). It only adds refusals (failing closed: its ``veto`` is 0, it never lets through what a rule caught).
Leave-one-set-out estimate on the blind set: 4 let through, 11/90 refused -> 3 let through, 11/90.
``memory_secrets_fresh.jsonl`` (90 secret, 90 harmless, 60 of them sentences) is this round's HELD-OUT set,
written by someone who had read nothing of the project's rules or sets, opened only after the method was frozen
and committed, measured ONCE and never tuned on: rules alone and rules + model alike, 4 secrets let through
(recall 0.956: all four answers to a security question, "security_answer_mothers_maiden_name: Fernandes", a
kind of secret no set here had) and 9/90 = 10.0% harmless refused (five are numbers this filter calls
secrets by definition, a GSTIN, an IFSC or SWIFT code; "password_manager: uses 1Password", "pin_board: ...",
"passport_expiry: 2031", "bank_account: joint account with wife at SBI", "discord_username: neonpanda#4421").
Below the goal (none let through, at most 5% refused): the test holds it to what was measured.

Round ``classify45`` (issue 36, item 7): ``memory_secrets_blind.jsonl`` and ``memory_secrets_fresh.jsonl`` BECAME
TUNING SETS: their misses were read and the rules changed for them, as principles stated in
:mod:`board.language.secrets` (the answer to a security question is a secret; a bank branch's IFSC / SWIFT code and
a GSTIN are public; a key's last word "board", "speed", "issue" is about something else; a date under an expiry key
says when; one word under a username's key is a handle; "u/p x / y", "admin / admin" under an admin's key, a dial's
"L 24, R 11" turns, an EIN's key). Both are now held to the goal. Leave-one-set-out (the model trained on the other
sets; rules of this round): fresh 0 let through, 0/90 refused; blind 0 let through, 3/90 = 3.3% refused; before
(main's rules and model, the same folds): fresh 4 let through, 9/90 = 10.0%; blind 3 let through, 11/90 = 12.2%.
Those are tuning figures now; the next set written by someone who read nothing is the honest measure.

``memory_secrets_blind3.jsonl`` (90 secret, 90 harmless, a third of each sentences) is the HELD-OUT set of round
classify45: written by someone who had read nothing of the project, opened by the lead only after that round's
rules and weights were committed, measured ONCE and never tuned on: 4 let through (a phone's unlock pattern in
words, a gate code "star 1 9 7 0", a bike-lock combo in words, "the door code changed to 6621") and 8/90 = 8.9%
harmless refused (a login e-mail, an RTO token number, a map pin, a sort code, an IBAN, a travel pass, a bank's
name, a locker's fee); main before that round: 7 let through, 13/90 = 14.4%. Below the goal: the test holds it to
what was measured, so a regression fails; the next round may tune on it.

Round ``classify46`` (issue 36, item 7): ``memory_secrets_blind3.jsonl`` BECAME A TUNING SET: its misses were read and
the rules changed as principles (:mod:`board.language.secrets`: digits said as words, a keypad's "star", a code
given by any verb ("changed to"), a phone's unlock pattern; kept: a sort code, a map pin, a queue's token number, a
travel pass, an e-mail alone under a login's key, a bank's name, an amount of money). It reaches none let through
and 1/90 refused (its IBAN: a secret here, see ``LABELLED_BOTH_WAYS``). ``memory_secrets_tuning46.jsonl`` (51 secret,
71 harmless): written in that round from the principles (codes in words, Hinglish, a secret under a bland key; postal
PINs, map pins, coupon / IFSC / SWIFT / GSTIN / sort codes, a card's last four, a password manager, order and ticket
numbers, e-mails): 78 measured before any rule was changed for them, 44 probes written after; a weak set (its writer
wrote the rules).

``memory_secrets_blind4.jsonl`` (100 secret, 100 harmless) was measured ONCE by the lead on classify46's filter (written
by someone who had read nothing): 6 let through (answers to verification questions in any words, backup numbers, an
unlock pattern drawn or on a grid), 9/100 refused (postal PINs, HSN / SAC codes, a partial account number, a secret's
kind in an event: "changed my gmail password yesterday", a place pinned on a map). Round secrets46 tuned on it (a
TUNING set now): 0 let through, 0 refused. ``memory_secrets_tuning46b.jsonl`` (50 secret, 62 harmless): written
in that round from the principles, new shapes (76 measured once after blind4's fixes: 6 let through, 5 refused; then
tuned on; 36 probes written after, labelled and added): a weak set, its writer wrote the rules.

``memory_secrets_blind5.jsonl`` (100 secret, 100 harmless; its writer, who read nothing, was asked for Indian
English, Hinglish, Hindi in Latin script and some Tamil and Marathi, a third of the values whole sentences) is the
HELD-OUT set of round secrets46, measured ONCE by the lead after that round was committed and never tuned on: **20
let through, 8/100 = 8.0 % refused** (main before the two rounds: 20 let through, 14 %). The misses are codes in
Hindi / Tamil / Marathi sentences ("darwaze pe 9 0 0 9 dabana", "diary ka lock 0-6-1-5 pe khulta hai"), digits in
words that no key names ("six one nine nine two zero, that's what the bank app asks for"), a one-time code by its
SMS, a full Amex number in 4-6-5 groups, an authenticator seed, security answers phrased as "the answer to 'what
was your first school'"; the refusals masked numbers ("XXXX XXXX 9021"), a token of appreciation, an OTP complaint
in Hinglish, a policy number. Far from the goal: the test holds it to what was measured, so a regression fails; the
next round may tune on it (and then needs a set written apart to measure).

Round ``secrets47`` (issue 36, item 7): ``memory_secrets_blind5.jsonl`` BECAME A TUNING SET. Its misses were read as
principles of a secret's FORM and USE across languages (:mod:`board.language.secret_use`: a code given to open, type,
press or join, or set on a lock of any object, its digits joined, spaced, dashed or said in ten languages; a code
received by SMS or from a bank; "don't tell anyone" beside a code; card numbers and TOTP seeds by form; security
answers in any language; parental codes; kept: masked numbers, record numbers, events and talk about a secret's kind
with no code). It reaches the goal: none let through, none refused. ``memory_secrets_tuning47.jsonl`` (102 secret,
134 harmless) was written in that round from the principles, in five batches each measured once before the rules were
changed for it: 51 / 52 rows of new shapes (Bengali, Telugu, Kannada, Gujarati, Malayalam, Punjabi; parental locks;
received codes; TOTP seeds; masked numbers; events): 24 let through, 7/52 refused; 20 / 20 probes: 3 let through,
4/20 refused; 10 / 30 probes, mostly harmless facts with numbers beside verbs of opening and joining: 0 let through,
4/30 refused; 10 / 10 in the Indian scripts (Devanagari, Bengali, Tamil, Gujarati, Telugu, Kannada): 5 let through,
0 refused; 8 / 22 Hinglish household facts: 1 let through, 2/22 refused; then three rows written after a rule. A weak
set: its writer wrote the rules.

Round ``secrets48`` (issue 36, item 7): the lead measured secrets47 once on ``memory_secrets_blind6.jsonl`` (100 secret,
100 harmless, its writer read no code): 8 let through, 14 refused. It BECAME A TUNING SET, held to the goal. Its misses
and refusals were read as principles (:mod:`board.language.secret_use` principles 8 to 12, and the record rules of
:mod:`board.language.secrets`): national identity numbers of many countries by form, card verification codes in any
name or language, recovery phrases by the BIP-39 list, combination turns in more languages, keypads; kept by what they
are: postal PIN codes beside a place, routing and employee codes, a locker's number, dress codes, plans, logging in by
Google; and no rule firing on talk ("I handle sales and ops", "key-person insurance"). ``memory_secrets_tuning48.jsonl``
(60 secret, 73 harmless) was written in two batches, each measured once before the rules were changed for it: 45 / 48
rows written from the principles before any rule changed: 17 let through, 16/48 refused; 15 / 25 probes written after
the rules: 1 let through, 0 refused. One row of review1 was relabelled harmless ("routing: 021000021", Chase's
published routing number, which blind6 labels harmless).

``memory_secrets_blind7.jsonl`` (100 secret, 100 harmless; its writer, who read no code, was asked for founders in
India, Kenya, Nigeria, Indonesia, the Philippines, Brazil, Mexico, Germany, the US and the UK, mostly English with some
Hinglish, Swahili, Taglish, Bahasa, Portuguese, Spanish and German) is the HELD-OUT set of round secrets48, measured
ONCE by the lead after that round was committed and never tuned on: **18 let through, 1/100 = 1.0 % refused** (main
before the two rounds secrets47 and secrets48: 22 let through, 4 refused). The misses: national IDs of countries no
set had (Nigeria's NIN and BVN, Indonesia's NIK, Mexico's CURP, Germany's Personalausweis and Steuer-ID, Kenya's ID in
Swahili), a PIN in Swahili, Bahasa, Spanish, Portuguese and German words ("nambari ya siri", "kode akses", "NIP",
"senha", "Geheimzahl"), a password as "contraseña", and phrasings of shapes the rules read elsewhere ("the three
digits on the back of my HDFC Regalia are 482", "for the bank's 'name of your first pet' question I put Bruno",
"UPI ka 6 digit: 190475", "voicemail access 2211"); the one refusal an opinion about security questions. Below the
goal. Round ``secrets49`` BECAME IT A TUNING SET, held to the goal and in the trainer's sets, with principles meant to
hold beyond its words (board/language/secret_use.py, principles 13 to 17): a PIN's or a password's word of many
languages as one table; a short code by its use beside a bank's, a card's, an app's, a voicemail's or a door's name
with no record's word; identity numbers by checksum (Aadhaar's Verhoeff, TC kimlik, Steuer-ID) or shape (CURP, NIK)
or under an ID's word of any language; the digits on any card's back; an answer given to a security question by its
topic; an opinion of security questions kept. ``memory_secrets_tuning49.jsonl`` (50 secret, 51 harmless: Turkish,
Vietnamese, Tagalog, French, Italian, Polish, Dutch, Swedish, Malay, Arabic in Latin script; harmless phone, order,
invoice, VAT / GST, company and tracking numbers) was written from those principles BEFORE any rule changed and
measured once on secrets48's rules: 25 let through, 2/51 refused.

``memory_secrets_blind8.jsonl`` (100 secret, 100 harmless; its writer, who read no code, was asked for founders in
India, Pakistan, Bangladesh, Sri Lanka, Vietnam, Egypt, Turkey, France, Italy, Poland, Canada, Australia and South
Africa, with voice-note transcripts, some Urdu, Bengali, Sinhala, Vietnamese, Arabic, Turkish, French, Italian and
Polish) is the HELD-OUT set of round secrets49, measured ONCE by the lead after that round was committed and never
tuned on: **21 let through, 5/100 = 5.0 % refused** (main before the three rounds of this session: 32 let through, 11
refused). The misses: identity numbers of countries no set had (PESEL, codice fiscale, France's numero de secu,
Egypt's national ID), passwords inside sentences ("she uses sunflower_91 to get in", "Ammi's laptop opens with
'Karachi1965'", "Rohan can get into my email with Monsoon_Raga_77"), spoken digits and dial turns in voice-note
transcripts and in Polish, a digicode and a combinazione, a router's admin pair, a bare "Zara's iPad: 121212", a
Google verification SMS, a WhatsApp two-step PIN; the refusals a speaker pass, a gate pass, a cost per OTP SMS, a
custody rule for signing keys, a map pin.

Round ``secrets50`` (issue 36, item 7): ``memory_secrets_blind8.jsonl`` BECAME A TUNING SET, held to the goal. Its
misses were read as principles of form and use that do not name its words (:mod:`board.language.secret_use` principles
18 to 22): a credential-shaped token given as what one gets in with, beside a verb of getting in in any of ten
languages; a user / password pair by form beside a host or an admin device; a code right after a device's name; a
verification code by form; identity numbers by checksum or form (PESEL, CPF, NIR, Egypt's, South Africa's,
personnummer, RUT, codice fiscale) or by an ID's word in the key; digits of thirteen more languages in one table, a
dial's numbers in English words, fillers between spoken digits. Kept by principle: a pass for an event, a kind after
"per" (a price), a network's name, a port, who holds keys, a map pin's emoji. ``memory_secrets_tuning50.jsonl`` (80
secret, 115 harmless): batch 1 (51 / 47) written before any rule changed, measured once on secrets49's rules: 35 let
through, 6/47 refused; batch 2 (29 / 68) probes written after the rules (weak evidence): on secrets49's rules 13 let
through, 0 refused.

``memory_secrets_blind9.jsonl`` and ``memory_secrets_blind10.jsonl`` (100 secret, 100 harmless each; their writers read
no code: founders in Latin America, Africa, Asia and Northern Europe with some Yoruba, Amharic, Tagalog, Malay,
Japanese and Korean; English of every register about a small company's and a family's devices) were measured ONCE by
the lead on secrets50: 6 let through and 3 refused, 6 let through and 4 refused. Round ``secrets51`` made them TUNING
SETS, held to the goal, with principles 23 to 28 of :mod:`board.language.secret_use` (unnumbered wallet words, a code a
device or a transfer takes, a user "and then" a password, a credential after a service's name in any language, a
bank's named question, turns in any language, IDs with a birth date inside; kept: a policy naming a kind, where a
secret is kept, a PNR, a queue token with its slot, env lines and host lists). ``memory_secrets_tuning51.jsonl`` (55
secret, 54 harmless): batch 1 (39 / 38) written from those principles before any rule changed, measured once on
secrets50's rules: 28 let through, 7/38 refused; batch 2 (16 / 16) probes written after the rules (weak evidence): on
secrets50's rules 12 let through, 4 refused; on this round's first rules 0 let through, 3 refused (two fixed: a label's
colon before a policy, "I hate that ..."; one kept refused by an older English rule: "Turn 3 left and 2 right at the
roundabout" reads as a dial's turns).

``memory_secrets_blind11.jsonl`` and ``memory_secrets_blind12.jsonl`` (100 secret, 100 harmless each; their writers
read no code: small businesses and families in the USA, Canada, the UK, Ireland, Australia and New Zealand, English
only; founders in Thailand, Hungary, Greece, Romania, Iran, Czechia, Finland, Morocco, Peru, Uzbekistan, Georgia and
Tanzania, half in their languages in Latin script) are HELD OUT of round secrets51 and in no training set. Measured
once by the lead: main before secrets50 23 and 33 let through, 6 and 7 refused; secrets50 20 and 32, 7 and 7;
secrets51 19 and 30, 7 and 6; secrets52 12 and 24, 7 and 6 (pinned there).

``memory_secrets_blind13.jsonl`` and ``memory_secrets_blind14.jsonl`` (100 / 100 each, writers who read no code:
tradespeople, shops, students and families in Ireland, Scotland, Wales, South Africa, Nigeria, Ghana, Kenya,
Singapore, Jamaica, the US and the Philippines, English only; founders in Indonesia, Vietnam, Pakistan, Bangladesh,
Brazil, Turkey, Poland, Germany, the Netherlands, Ukraine, Ethiopia and Chile, half in their languages) are HELD OUT
of round secrets52 and in no training set. Measured once by the lead: secrets51 7 and 17 let through, 3 and 5
refused; secrets52 4 and 11, 3 and 5 (pinned there).

Round ``secrets52`` (issue 36, item 7) did not tune on them: the learned model now reads the fact's character
2-5-grams and word 1-2-grams beside its shapes (TF-IDF, logistic regression in pure Python), its threshold the lowest
at which every labelled set held out of training stays within 5 % refused. ``memory_secrets_tuning52.jsonl`` (44
secret, 41 harmless: everyday English credentials, a SIM's PUK, a host key, a bank's memorable information, IRD / PPS /
TFN / SIN / DVLA numbers and their look-alikes) was measured once on secrets51's filter before anything changed: 13 let
through, 4/41 refused; then tuned on (0 let through, 2/41 refused).

What counts as a secret: anything that opens
something or moves money if someone else reads it: passwords and passphrases, PINs, door / gate / alarm /
garage / lock / safe codes and combinations, one-time and backup codes, wallet seed or recovery words, API
keys and tokens, card numbers, expiry and CVV, bank account numbers and IBANs, government ID numbers, gift
card codes. Not a secret: postal codes (a ZIP, a UK postcode, an Indian PIN code of six digits with no card,
bank or lock nearby), area / country / airport codes, dress codes, promo and referral codes (meant to be
shared), addresses, phone numbers, e-mail addresses, a funding stage ("seed"), naming a password manager,
a provider, a method, a budget or an amount under a secret's word ("otp provider", "token budget").
"""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from board.language.secret_model import secret_model
from board.language.secrets import as_read
from board.language.statements import heard, secret_reason, sentence_reason
from board.storage.url import StateURL
from tests.board.memory.test_memory_extract import heard_facts, open_on, settings_with_cheap, settle
from tests.support.fakes.scripted_model import ScriptedModel
from tests.support.llm import envelope

DATA = Path(__file__).parents[2] / "data"
ROOT = Path(__file__).resolve().parents[3]
#: At most this share of harmless facts may be refused.
MAX_REFUSED = 0.05


#: The sets the rules were tuned on, and the one they never were (see the module docstring).
TUNING = ["memory_secrets.jsonl", "memory_secrets_tuning2.jsonl", "memory_secrets_tuning3.jsonl",
          "memory_secrets_review1.jsonl", "memory_secrets_heldout3.jsonl", "memory_secrets_tuning5.jsonl",
          "memory_secrets_tuning6.jsonl", "memory_secrets_tuning7.jsonl", "memory_secrets_blind.jsonl",
          "memory_secrets_fresh.jsonl", "memory_secrets_blind3.jsonl", "memory_secrets_tuning46.jsonl",
          "memory_secrets_blind4.jsonl", "memory_secrets_tuning46b.jsonl", "memory_secrets_blind5.jsonl",
          "memory_secrets_tuning47.jsonl", "memory_secrets_blind6.jsonl", "memory_secrets_tuning48.jsonl",
          "memory_secrets_blind7.jsonl", "memory_secrets_tuning49.jsonl", "memory_secrets_blind8.jsonl",
          "memory_secrets_tuning50.jsonl", "memory_secrets_blind9.jsonl", "memory_secrets_blind10.jsonl",
          "memory_secrets_tuning51.jsonl", "memory_secrets_tuning52.jsonl"]
#: memory3's probes (tuned on): held to no secret let through and these two refusals (see the docstring).
PROBES = "memory_secrets_tuning4.jsonl"
PROBES_REFUSED = {"pin: pinned the roadmap in the team channel", "credentials: certified AWS architect"}


def labelled(name: str) -> list[tuple[str | None, str, bool]]:
    rows = [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(r["key"], r["value"], bool(r["secret"])) for r in rows]


def reason(key: str | None, value: str) -> str | None:
    """Why the filter refuses a labelled row: a fact (key, value), or a sentence (no key) as heard() reads it."""
    return sentence_reason(value) if key is None else secret_reason(key, value)


def measure(name: str) -> tuple[list[str], list[str], str]:
    """(secrets let through, harmless facts refused, the printed figures) of the filter on one set."""
    facts = labelled(name)
    secrets = [(k, v) for k, v, s in facts if s]
    harmless = [(k, v) for k, v, s in facts if not s]
    missed = [f"{k}: {v}" for k, v in secrets if reason(k, v) is None]
    refused = [f"{k}: {v} ({reason(k, v)})" for k, v in harmless if reason(k, v) is not None]
    caught = len(secrets) - len(missed)
    precision = caught / (caught + len(refused)) if caught + len(refused) else 1.0
    recall = caught / len(secrets)
    figures = (f"{name}: {len(secrets)} secret, {len(harmless)} harmless; recall {recall:.3f} "
               f"({len(missed)} secret(s) let through), precision {precision:.3f}, harmless refused "
               f"{len(refused)}/{len(harmless)} = {len(refused) / len(harmless):.1%}")
    return missed, refused, figures


@pytest.mark.parametrize("name", TUNING)
def test_no_labelled_secret_passes_and_few_harmless_facts_are_refused(name: str) -> None:
    facts = labelled(name)
    assert sum(s for _k, _v, s in facts) >= 15 and sum(not s for _k, _v, s in facts) >= 15
    missed, refused, figures = measure(name)
    print(f"\n{figures}")
    for line in missed:
        print(f"  let through: {line}")
    for line in refused:
        print(f"  refused: {line}")
    assert not missed, figures
    assert len(refused) <= MAX_REFUSED * sum(not s for _k, _v, s in facts), figures


def test_blind3_is_held_to_what_this_round_reached() -> None:
    """``memory_secrets_blind3`` (see the module docstring): a tuning set since round classify46, which reached no
    secret let through and one harmless fact refused (its IBAN, a secret by this filter's definition)."""
    missed, refused, figures = measure("memory_secrets_blind3.jsonl")
    print(f"\n{figures}")
    assert len(labelled("memory_secrets_blind3.jsonl")) == 180
    assert not missed and len(refused) <= 1, figures


def test_blind5_reached_the_goal_as_a_tuning_set() -> None:
    """``memory_secrets_blind5`` (see the module docstring): measured once at 20 let through and 8 refused, tuned on
    in round secrets47 as principles of a secret's form and use; now held to the goal (none let through, no harmless
    fact refused)."""
    missed, refused, figures = measure("memory_secrets_blind5.jsonl")
    print(f"\n{figures}")
    assert len(labelled("memory_secrets_blind5.jsonl")) == 200
    assert not missed and not refused, figures


def test_blind6_reached_the_goal_as_a_tuning_set() -> None:
    """``memory_secrets_blind6`` (see the module docstring): measured once at 8 let through and 14 refused, tuned on in
    round secrets48 as principles (national IDs, card codes, wallet words by form; public numbers kept by what they
    are; no rule firing on talk); now held to the goal (none let through, no harmless fact refused)."""
    missed, refused, figures = measure("memory_secrets_blind6.jsonl")
    print(f"\n{figures}")
    assert len(labelled("memory_secrets_blind6.jsonl")) == 200
    assert not missed and not refused, figures


def test_blind7_reached_the_goal_as_a_tuning_set() -> None:
    """``memory_secrets_blind7`` (see the module docstring): measured once at 18 let through and 1 refused, tuned on in
    round secrets49 as principles beyond its words (a PIN's word of any language, a code by its use, IDs by checksum
    and shape); now held to the goal (none let through, no harmless fact refused)."""
    missed, refused, figures = measure("memory_secrets_blind7.jsonl")
    print(f"\n{figures}")
    assert len(labelled("memory_secrets_blind7.jsonl")) == 200
    assert not missed and not refused, figures


def test_blind8_reached_the_goal_as_a_tuning_set() -> None:
    """``memory_secrets_blind8`` (see the module docstring): measured once at 21 let through and 5 refused, tuned on in
    round secrets50 as principles of form and use that do not name its words (a credential-shaped token beside a verb
    of getting in, a number that is all a device's value, verification codes and IDs by form or checksum, digits said in
    any language); now held to the goal (none let through, no harmless fact refused)."""
    missed, refused, figures = measure("memory_secrets_blind8.jsonl")
    print(f"\n{figures}")
    assert len(labelled("memory_secrets_blind8.jsonl")) == 200
    assert not missed and not refused, figures


@pytest.mark.parametrize("name", ["memory_secrets_blind9.jsonl", "memory_secrets_blind10.jsonl"])
def test_blind9_and_blind10_reached_the_goal_as_tuning_sets(name: str) -> None:
    """``memory_secrets_blind9`` and ``blind10`` (see the module docstring): measured once by the lead on secrets50 at 6
    let through and 3 refused, 6 let through and 4 refused; tuned on in round secrets51 as principles (unnumbered wallet
    words, a code a device or a transfer takes, spaced digits, a credential after a service's name, a bank's question,
    turns in any language, an ID with a birth date; policies, places, PNRs, queue tokens, env lines and host lists
    kept); now held to the goal (none let through, no harmless fact refused)."""
    missed, refused, figures = measure(name)
    print(f"\n{figures}")
    assert len(labelled(name)) == 200
    assert not missed and not refused, figures


#: The held-out sets' figures (secrets let through, harmless facts refused), each measured once by the lead on the
#: filter of the round it was held out of: blind11 and blind12 on secrets52's (19 / 7 and 30 / 6 on secrets51's, when
#: they were written), blind13 and blind14 on secrets52's (7 / 3 and 17 / 5 on secrets51's). In no training set;
#: below the goal; held where they were.
HELD_OUT_MEASURED_ONCE = {"memory_secrets_blind11.jsonl": (12, 7), "memory_secrets_blind12.jsonl": (24, 6),
                          "memory_secrets_blind13.jsonl": (4, 3), "memory_secrets_blind14.jsonl": (11, 5)}


@pytest.mark.parametrize("name", sorted(HELD_OUT_MEASURED_ONCE))
def test_the_held_out_sets_hold_what_was_measured_once(name: str) -> None:
    """``memory_secrets_blind11`` to ``blind14`` (see the module docstring): held out of rounds secrets51 and
    secrets52 and in no training set; a later change may let through or refuse no more of them than was measured
    once."""
    let_through, refused_at_most = HELD_OUT_MEASURED_ONCE[name]
    missed, refused, figures = measure(name)
    print(f"\n{figures}")
    assert len(labelled(name)) == 200
    assert len(missed) <= let_through and len(refused) <= refused_at_most, figures


def test_the_third_rounds_probes_let_no_secret_through() -> None:
    """memory3's probes: no secret let through; only the two ambiguous harmless rows named in PROBES_REFUSED
    are refused (a leak is worse than a forgotten harmless fact)."""
    missed, refused, figures = measure(PROBES)
    print(f"\n{figures}")
    assert not missed, (figures, missed)
    assert {line.rsplit(" (", 1)[0] for line in refused} <= PROBES_REFUSED, (figures, refused)


@pytest.mark.parametrize("held", ["memory_secrets_fresh", "memory_secrets_blind3", "memory_secrets_blind4",
                                  "memory_secrets_blind5", "memory_secrets_blind6", "memory_secrets_blind7",
                                  "memory_secrets_tuning49", "memory_secrets_blind8", "memory_secrets_tuning50",
                                  "memory_secrets_blind9", "memory_secrets_blind10", "memory_secrets_tuning51"])
def test_a_model_trained_without_a_set_keeps_the_goal_on_it(held: str) -> None:
    """Leave-one-set-out on the fresh and blind3 sets: the learned model trained on every other set (``scripts/
    train_classifiers.py``), beside the rules, lets no secret of the set through and refuses at most 5% of its
    harmless facts (the rules were changed from their misses in rounds classify45 and classify46, so this guards
    that the rules, not the model's memory of the set, carry it)."""
    trainer = _trainer()
    model = trainer.train_secrets([n for n in trainer.SECRET_SETS if n.partition(":")[0] != held])
    missed, secrets, refused, harmless = trainer.measure_secrets(held, model)
    print(f"\n{held}, held out of training: let through {missed}/{secrets}, refused {refused}/{harmless}")
    assert missed == 0 and refused <= MAX_REFUSED * harmless


@functools.cache
def _trainer() -> ModuleType:
    """scripts/train_classifiers.py, imported as a module (once: its facts are read into features once for every
    fold)."""
    spec = importlib.util.spec_from_file_location("train_classifiers", ROOT / "scripts" / "train_classifiers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: The one fact two writers labelled apart: an IBAN, a secret in memory_secrets.jsonl and blind (this filter's
#: definition: it holds the account's number), harmless in blind3 (its writer read no definition). Kept a secret.
LABELLED_BOTH_WAYS = {("iban", "DE89 3704 0044 0532 0130 00")}


def test_the_sets_together_hold_at_least_60_of_each() -> None:
    """Every set the tests measure, counted as distinct facts (a row repeated in two sets counts once)."""
    every = {(k, v, s) for name in [*TUNING, PROBES] for k, v, s in labelled(name)}
    both = {(k, v) for k, v, s in every if (k, v, not s) in every}
    assert both == LABELLED_BOTH_WAYS, "a fact is labelled both ways"
    assert sum(s for _k, _v, s in every) >= 60 and sum(not s for _k, _v, s in every) >= 60


def test_a_sentence_is_read_for_what_it_says_not_as_a_key() -> None:
    """heard() read a whole sentence as a key too: "I work at Vault Capital." was dropped ("vault"), while
    "I work at Acme Capital." was kept; "near gate 122" was "a lock's code"."""
    for company in ("Vault Capital", "Unlock Ventures", "Acme Capital"):
        assert [s.value for s in heard(f"I work at {company}.")] == [company]
    assert sentence_reason("I live near gate 122 of the IIT campus.") is None
    assert heard("My card pin is 4455.") == [] and sentence_reason("My card pin is 4455.") is not None


def test_a_long_number_is_a_card_only_when_it_passes_luhn() -> None:
    """Any 13 to 19 digits were refused as "card-like", so the Luhn check decided nothing; a long order or
    tracking number is kept, a card's number (Luhn) never."""
    assert secret_reason("order id", "1234567890123456") is None
    assert secret_reason("tracking number", "9400111202555842761") is None
    assert secret_reason("note", "4111 1111 1111 1111") == "a card number"


def test_a_secret_is_read_by_its_form_and_its_use() -> None:
    """Round secrets47 (board/language/secret_use.py): "don't tell anyone" in any language makes the code beside it a
    secret, whatever else the sentence says; a phone's number written in groups is no code, even beside a verb of
    joining or opening (the groups are read together, not as two codes)."""
    assert sentence_reason("Share mat karna, 7319") == "a code kept from others"
    assert sentence_reason("Kisi ko mat batana: 5 0 8 8") == "a code kept from others"
    assert sentence_reason("Joined the society WhatsApp group; the admin is on 98450 12345") is None
    assert sentence_reason("Opened a Jio connection, number 98450 12345") is None


def test_a_secret_is_read_by_its_form_and_talk_is_not_round_secrets48() -> None:
    """Round secrets48 (board/language/secret_use.py, principles 8 to 12, and the record rules of secrets.py): national
    numbers by their form, masked ones kept; a locker's number is which locker, but a locker opened by a code is
    opened; an account's number said after "acct" is one whatever the key; a numbered list of ordinary words is no
    wallet's phrase; a word list its label names is kept; talk with a login's word keeps no password."""
    assert sentence_reason("CPF 123.456.789-09") == "a national identity number"
    assert secret_reason("note", "Emirates ID 784-1987-4821903-2") == "a national identity number"
    assert secret_reason("aadhaar", "Aadhaar XXXX XXXX 1126") is None
    assert secret_reason("note", "Locker 4471 se khulta hai") is not None
    assert secret_reason("note", "Locker 112 at Cult Koramangala is hers for the year.") is None
    assert secret_reason("note", "routing 021000021, acct 483920017") == "a bank account number"
    assert secret_reason("packing", "1. passport 2. charger 3. shoes 4. shirts 5. meds 6. tickets 7. sunscreen "
                                    "8. hat 9. book 10. snacks 11. towel 12. cash") is None
    assert secret_reason("note", "Spelling words: apple river orange table window garden pencil yellow rabbit "
                                 "candle ladder basket") is None
    assert secret_reason("note", "apple river orange table window garden pencil yellow rabbit candle ladder "
                                 "basket") is not None  # no label: a phrase by its form
    assert secret_reason("team", "Meera handles design; I handle finance and hiring.") is None
    assert secret_reason("note", "handle rohan_88 with Sunset#99") is not None
    assert secret_reason("pin", "400001") is not None  # six digits alone under a pin's key may be a UPI PIN


def test_a_secret_is_read_beyond_its_words_round_secrets49() -> None:
    """Round secrets49 (board/language/secret_use.py, principles 13 to 17): a PIN's word of a language no set had, a
    code by its use, an ID by its checksum with no word, an answer given by its topic; and what they must not read:
    a phone's, an order's or a company's number, a rating, an opinion of security questions."""
    assert sentence_reason("Ziraat mobil şifrem 482913") == "a code or PIN"
    assert sentence_reason("Swedbank kod 733019 för appen") == "a code or PIN"
    assert sentence_reason("Kaspi bank app: 118402") == "a code or PIN"
    assert sentence_reason("MARL850412MJCRPS00") == "a national identity number"  # CURP by shape
    assert sentence_reason("Ref 10000000146") == "a national identity number"  # TC kimlik by its two check digits
    assert sentence_reason("NIK istri saya 3273014507900002") == "a national identity number"
    assert sentence_reason("I told Commerzbank my first car was a Golf") == "the answer to a security question"
    assert sentence_reason("The three digits on the back of my HDFC Regalia are 482.") is not None
    assert sentence_reason("Kemal's number is +90 533 771 4402") is None
    assert sentence_reason("Call me on +49 151 23456789") is None
    assert sentence_reason("Li Wei's phone 13826186858") is None  # a Chinese mobile that passes TC kimlik's check
    assert sentence_reason("Li Wei: +86 13826186858") is None
    assert sentence_reason("The bank app has 4500 reviews") is None  # a count beside a service is no code
    assert sentence_reason("PT Maju Jaya company number 13861111440") is None  # a firm's number passing a checksum
    assert sentence_reason("USt-IdNr. DE123456789 on every invoice") is None
    assert sentence_reason("NPWP perusahaan 01.234.567.8-901.000") is None
    assert sentence_reason("Kaspi bank app got 4.8 stars in the store") is None
    assert sentence_reason("Ticket 7731 in Zendesk is the GCash refund") is None
    assert secret_reason("security_question_note", "Doesn't like banks that still use security questions") is None
    assert sentence_reason("Annoyed that Barclays still asks a memorable word") is None



def test_a_secret_is_read_by_its_form_beyond_its_words_round_secrets50() -> None:
    """Round secrets50 (board/language/secret_use.py, principles 18 to 22), on phrasings no set has: a credential-shaped
    token beside a verb of getting in, a user / password pair beside a host, a number that is all a device's value,
    a verification code by its form, an ID by its checksum, digits said in other languages; and their look-alikes
    kept: a network's name, a host, a port, a version, a model, a handle, a phone number, a serial, a price."""
    assert sentence_reason("Grandpa unlocks his Chromebook with Lilac_1949") is not None
    assert sentence_reason("para entrar no Nubank ela usa Girassol_88") is not None
    assert sentence_reason("switch panel 10.1.1.2 admin/admin1") is not None
    assert secret_reason("kindle", "Noor's Kindle: 7731") is not None
    assert sentence_reason("K-330914 is your Bolt verification code") is not None
    assert sentence_reason("Kinga 02270803624") == "a national identity number"  # a PESEL by its check digit
    assert sentence_reason("la caja fuerte: dos siete nueve cuatro") is not None
    assert sentence_reason("We join the Office_Guest_24 network on Fridays") is None
    assert sentence_reason("She logs in to db-03.prod on port 5432") is None
    assert sentence_reason("Mum's tablet: Galaxy Tab S9") is None
    assert sentence_reason("logs in to GitLab as ravi-ops") is None
    assert sentence_reason("Order 02270803624 left the warehouse") is None  # a record's number passing PESEL's check
    assert sentence_reason("Kinga's phone 0227 080 3624") is None
    assert sentence_reason("Vonage charges $0.05 per verification SMS") is None
    assert sentence_reason("Only the CFO holds the treasury signing keys.") is None
    # the guards, each pinned: one digit after a name is a model's, "_" alone joins a name; a year after a device
    assert sentence_reason("She logs in with Google on her Pixel8") is None
    assert sentence_reason("connect with Series_A investors") is None
    assert sentence_reason("Dad's iPhone 2019") is None
    assert sentence_reason("Lina's phone: 4500 mAh battery") is None  # a unit after a device's number
    assert sentence_reason("Confirmation number 448213 for the Lisbon hotel") is None  # a booking's record
    assert sentence_reason("She signs in with SSO to dev_portal77") is None  # what one signs in TO
    assert sentence_reason("Dropbox password hint aside, the laptop is Maple_Leaf_88") is not None  # all after a name
    assert sentence_reason("Instagram: ayesha_k_91") is None  # a social network's name is a handle's place
    assert sentence_reason("VPN: WireGuard_v2") is None  # a version's suffix
    amex = "the 4 tiny digits above the embossed ones on the Amex: 8820"
    assert sentence_reason(amex) == "a card's verification code"


def test_the_learned_model_reads_characters_and_words_round_secrets52() -> None:
    """Round secrets52: the learned model reads the fact's character and word n-grams (board/language/secret_model.py);
    phrasings no set has, which no rule reads, are refused by it alone, and their look-alikes are kept."""
    for key, value in [("hbo", "p/w for the HBO is dragonfire"), ("roku", "login is my email, Sunflower77"),
                       ("westpac_memorable", "Biscuit"), ("webex", "host key 719304")]:
        score = secret_model().score(key, as_read(value))
        assert secret_reason(key, value) == f"looks like a secret to the learned model ({score:.2f})", (key, value)
    for key, value in [("hbo", "the HBO plan went up to $16.99"), ("note", "Work laptop is a Dell XPS 13"),
                       ("westpac", "Westpac branch on George St closes at 4"), ("webex", "board call every Tuesday")]:
        assert secret_reason(key, value) is None, (key, value)


def test_the_rules_keep_a_network_an_order_and_read_a_licence_round_secrets52() -> None:
    """Round secrets52's three rules (board/language/secrets.py): a key naming a network or an order is no secret's key,
    a record's number beside a keypad is no code, a British driving licence number is read by its form."""
    assert secret_reason("wifi_network", "Loon_5G in the cabin, Loon_2G for the old TV") is None
    assert secret_reason("note", "Order number 304-8829174-5521 for the new keypad") is None
    assert secret_reason("keypad_order", "Order number 304-8829174-5521 for the new keypad") is None
    assert secret_reason("note", "keypad 4471 for the side door") is not None
    assert sentence_reason("my licence is SMITH901015J99AB") == "a national identity number"
    assert secret_reason("sku", "ABCDE123456ABCD") is None


def test_a_secret_is_read_by_its_form_beyond_its_words_round_secrets51() -> None:
    """Round secrets51 (board/language/secret_use.py, principles 23 to 29), on phrasings no set has, and the look-alikes
    each reading must keep."""
    assert sentence_reason("the rest is: ribbon hockey galaxy orbit spray velvet") is not None  # BIP-39 only, six
    assert sentence_reason("The gym's keypad takes 4471 after the star") is not None
    assert sentence_reason("override on the Toast till is 3321") is not None
    assert sentence_reason("mTAN 662190 für die Rechnung") is not None
    assert sentence_reason("the CVC behind the Wise card is 5 0 2") is not None
    assert sentence_reason("for Verizon it's dlopez and then Saguaro_21") is not None
    assert sentence_reason("Dropbox-kontoen er Fjell2020") is not None
    assert sentence_reason("Birth city, for the Chase question: Oaxaca") is not None
    assert sentence_reason("el candado: 30 a la derecha, 4 a la izquierda, 18 derecha") is not None
    assert sentence_reason("Hyun 880921-1234561") == "a national identity number"
    # kept
    assert sentence_reason("Six words on the mood board: ribbon hockey galaxy orbit spray velvet") is None
    assert sentence_reason("The coffee machine takes 4 minutes") is None
    assert sentence_reason("Needs a manager override for voids over $50") is None
    assert sentence_reason("The Wi-Fi password is written on the fridge whiteboard") is None
    assert sentence_reason("Every phone needs a 6-digit passcode by policy") is None
    assert sentence_reason("PNR 8KQ2ZT on Qatar Airways, Doha to Manila") is None
    assert sentence_reason("Token 112 at the passport office, slot 14:20") is None
    assert sentence_reason("APP_ENV=prod REPLICAS=3 REGION=eu-west-1") is None
    assert sentence_reason("db01 10.0.0.5:5432, cache01 10.0.0.6:6379") is None
    assert sentence_reason("Invoice 880921-1234561 paid") is None  # a record's number of an ID's shape
    assert sentence_reason("Order 240101-5512 shipped") is None  # nor a personnummer's
    # the guards, each pinned: a kind's policy or place only when nothing else has a secret's shape; a code taken
    # needs a thing that takes codes; turns to both sides; a bank's question needs a question's topic; a handle after
    # "at"; a version after "and then"; an override by name
    assert sentence_reason("Tiger_88 is a strong password") is not None
    assert sentence_reason("password is kept in the drawer, it is Tiger_88") is not None
    assert sentence_reason("The report uses 2023 figures") is None
    assert sentence_reason("12 links in the doc, 4 links broken") is None
    assert sentence_reason("Interview prep, for the Google question: use BigQuery") is None
    assert sentence_reason("the router is TP-Link Archer_C6") is None  # a brand's name between: a model
    assert secret_reason("access_points", "cam01 192.168.1.40:554, cam02 192.168.1.41:554") is None  # ports
    assert sentence_reason("Nọ́mbà àṣírí fóònù mi ni 7731") is not None  # a Yoruba word read without its tone marks
    assert sentence_reason("ping me on Skype at ravi_88") is None
    assert sentence_reason("We ship v1 and then v2_beta") is None
    assert sentence_reason("Ravi moves to Berlin and then Munich2025") is None  # a place's name, not a user
    assert sentence_reason("The old manager is 4412") is None
    assert sentence_reason("We want a simple clean bright happy family room") is None  # no mark, no part named
    assert sentence_reason("Ingredients: garlic onion tomato pepper salt oil") is None  # a list, not a part of one
    assert sentence_reason("The ATM only takes 2000 rupee notes") is None  # money after the number
    # what blind9 and blind10 left to the model alone, read by the rules too: a bank that asks, a pair after a label
    assert sentence_reason("Mum's maiden name, which Monzo asks for: Okafor") is not None
    assert sentence_reason("Priya asked about the first sprint: done by Friday") is None
    assert sentence_reason("Kids' homework portal: amir.s2030 / Sunshine44") is not None


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


async def test_the_reviews_secrets_proposed_after_a_real_turn_are_never_stored(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    """The secrets review1 saw stored (memory_secrets_review1.jsonl), proposed by the model after real turns
    (at most eight a turn, as extraction takes), with a harmless fact beside each batch: only those are kept."""
    secrets = [(k, v) for k, v, secret in labelled("memory_secrets_review1.jsonl") if secret and k is not None]
    batches = [secrets[i:i + 6] for i in range(0, len(secrets), 6)]
    harmless = [("otp provider", "MSG91"), ("sign in method", "Google"), ("location", "Pune")]
    model = ScriptedModel()
    async with await open_on(settings_with_cheap(workspace, data_dir, state_url, model, cheap=None), model) as b:
        for n, batch in enumerate(batches):
            facts = [*batch, harmless[n]]
            model.memory = json.dumps({"facts": [{"key": k, "value": v, "kind": "context"} for k, v in facts]})
            await b.handle(envelope(f"I'm in Pune, OTPs via MSG91, Google sign-in. My logins and codes, part {n}."))
            await settle(b)
        assert len(model.memory_requests) == len(batches)  # the model was asked each time
        marker = await b.handle(envelope("Q901 what next?"))
        assert marker.text == "general: Q901 what next?"
        await settle(b)
        kept = await heard_facts(b)
    assert kept == dict(harmless[:len(batches)]), kept


#: What the second round's filter did wrong on heldout3, as a model proposes it: secrets it stored, harmless
#: facts it refused (a tool named after a secret, a funding stage, a page).
HELDOUT3_STORED = [("wife's phone", "unlocks with 120588"), ("spare key", "lockbox by the meter, 1948")]
HELDOUT3_REFUSED = [("2fa app", "Google Authenticator"), ("sms gateway", "Twilio for OTP delivery"),
                    ("pre-seed", "closed $400k in March"), ("login page", "customers say it is slow")]


#: The same for tuning5's first measurement.
TUNING5_STORED = [("demat", "TPIN 445566"), ("wifi", "SSID RaoHome, key is monsoon")]
TUNING5_REFUSED = [("otp", "prefers OTP over email links"), ("passport", "renewing it in May"),
                   ("door number", "1203"), ("seed", "pre-seed done, seed in 2025")]
#: The same for tuning6's first measurement.
TUNING6_STORED = [("netflix", "meera.k@gmail.com Sunny@123"), ("office", "alarm is 5577"),
                  ("apartment", "4B, entry 2211#")]
TUNING6_REFUSED = [("bank account", "ends in 7712"), ("seed phrase location", "bank locker"),
                   ("alarm", "Godrej alarm installed in 2021"), ("locker number", "214 at the gym")]


#: The same for the fresh set's measurement (round classify): the answers to security questions it stored, and
#: public identifiers and plain facts it refused (a branch's IFSC / SWIFT code and a GSTIN are printed on cheques
#: and invoices; a handle under a username's key; a passport's expiry year; a joint account named in words). In two
#: turns: a model's answer is read for at most MAX_PROPOSED facts.
FRESH_STORED = [("security_answer_mothers_maiden_name", "Fernandes"),
                ("security_question_first_pet", "answer is Bruno"),
                ("security answer - childhood street", "MG Road")]
FRESH_REFUSED = [("gstin", "29ABCDE1234F1Z5"), ("ifsc_code", "HDFC0001234"), ("swift_code", "SBININBB104"),
                 ("password_manager", "uses 1Password"), ("passport_expiry", "2031"),
                 ("bank_account", "joint account with wife at SBI"), ("discord_username", "neonpanda#4421"),
                 ("pin_board", "uses a cork pin board for todo lists")]
#: The same for blind3's measurement (round classify45, measured once): the secrets it stored (the sentences as a
#: model would propose them, under a bland key) and the harmless facts it refused (its IBAN stays refused: a
#: secret by this filter's definition).
BLIND3_STORED = [("dads_phone_unlock_pattern", "L shape starting top left, down then right to the corner"),
                 ("building", "gate code for my building is star 1 9 7 0"),
                 ("bike", "my bike lock combo is nine three seven two"),
                 ("reminder", "remember the door code changed to 6621 from monday")]
BLIND3_REFUSED = [("work_login_email", "ravi@acme.in"), ("rto_token", "token no 37 at the RTO on tuesday"),
                  ("new_office_pin", "dropped a pin for the new office: Indiranagar 100ft road"),
                  ("sort_code", "20-00-00"), ("travel pass", "Eurail global pass, 15 days in july"),
                  ("netbanking_bank", "uses ICICI netbanking, not the app"),
                  ("locker", "the safe deposit locker fee went up to 3500 a year")]
#: The same for blind4's measurement (round classify46, measured once): answers to verification questions in any
#: words, backup numbers, an unlock pattern drawn or given as a grid's digits; and public codes, a partial account
#: number, a secret's kind named in an event ("changed my gmail password yesterday"), a place pinned on a map.
BLIND4_STORED = [("phone_gesture", "draws a Z starting top-left to get into the phone"),
                 ("first_pet_name", "Tommy — he uses it as the answer to the bank's verification question"),
                 ("authenticator_backup", "backup numbers 4471-2290, 8813-0056"),
                 ("school_name_for_verification", "Delhi Public School RK Puram (security question)"),
                 ("pattern", "1-5-9-6-3 on the 3x3 grid"),
                 ("father_birthplace_answer", "Kanpur — the answer I gave HDFC for verification")]
BLIND4_REFUSED = [("home_pin_code", "PIN 400050, Bandra West"),
                  ("password_change", "changed my gmail password yesterday"),
                  ("hsn_code", "HSN 2106 for the spice mixes"), ("sac_code", "998314 for IT consulting invoices"),
                  ("bank_account_number_partial", "account ending in ...7781"),
                  ("otp_issue", "customers complain that OTP SMS arrive late"),
                  ("pin_favorite_pizza", "Pizza Express, pinned on Google Maps"),
                  ("passcode_reset", "reset the iPad passcode at the Apple store last week"),
                  ("pin_code_delivery", "doesn't deliver to pincode 110092 yet")]

#: The same for blind5's measurement (round secrets46, measured once): codes given to open something in Hindi, Tamil
#: and Marathi, digits in words, one-time codes by their SMS, an Amex number in 4-6-5 groups, an authenticator seed,
#: answers to security questions in any words; and masked numbers, a policy number, events about a secret's kind
#: ("bhool gaya", "complaint kiya", "expires on 30 June"), a token of appreciation, a tweet pinned.
BLIND5_STORED = [("reminder", "The thing I type to open my phone is 190388"),
                 ("bank_app", "six one nine nine two zero, that's what the bank app asks for"),
                 ("amma_card", "Amma card-ku naalu ezhu onnu aaru podanum"),
                 ("first_school", "Answer to 'what was your first school' on the SBI site is St. Xavier's Ranchi"),
                 ("upi", "GPay ke liye 1 9 8 4 daalo"), ("verification", "The SMS said 771204, valid for 10 minutes"),
                 ("bank_sms", "HDFC ne bheja 093 551, kisi ko mat batana"),
                 ("diary", "Meri diary ka lock 0-6-1-5 pe khulta hai"), ("briefcase", "Briefcase: 4 2 0 on both sides"),
                 ("darwaza", "Chaabi nahi hai, darwaze pe 9 0 0 9 dabana"), ("amex", "3759 876543 21001"),
                 ("hotspot", "Mera hotspot 'Rahul iPhone' hai, join karne ke liye rahul1234 daalo"),
                 ("tijori_hindi", "Tijori kholne ke liye pehle 23 daayein, phir 11 baayein, phir 40"),
                 ("kids_ipad", "Kids' iPad Screen Time restriction: 5 5 1 2"),
                 ("zerodha", "Zerodha client ZX4412, authenticator seed KRUGKIDROVUWG2ZA"),
                 ("lock_screen", "Z shape draw karo: 1-2-3-5-7-8-9"),
                 ("activa", "Activa dikki ka lock 4-4-0 pe khulta hai"),
                 ("pet_question", "Bank ke 'first pet' sawaal ka jawab: Tommy"),
                 ("marathi_phone", "Majha phone cha lock 8 3 2 9 0 1 aahe"),
                 ("bank_question", "Childhood best friend (bank security): Kittu")]
BLIND5_REFUSED = [("github_token_expiry", "The GitHub token expires on 30 June; need to make a new one before that"),
                  ("otp_issue", "OTP SMS nahi aa raha tha, Airtel se complaint kiya"),
                  ("token_of_appreciation",
                   "Gave a Titan watch as a token of appreciation to Ramesh for his 10 years with us"),
                  ("aadhaar_last_four", "XXXX XXXX 9021 (masked, as printed on the e-Aadhaar)"),
                  ("account_number_masked", "A/c XXXXXX8812 at Kotak"),
                  ("password_bhool_gaya", "Netbanking ka password bhool gaya tha, branch jaake reset karwa liya"),
                  ("pin_tweet", "Pin the launch tweet to the company profile"),
                  ("insurance", "Health policy with HDFC Ergo, policy no. 2311 4455 6677, renews in June")]


#: The same for blind6's measurement (the lead's, once, on secrets47's filter): national IDs by form (NRIC, UK NI), a
#: card's code on its front or back in English and Kannada, Bengali turns, a car's keypad, numbered wallet words, a
#: bank's question; and postal PIN codes, routing and employee codes, a locker's number, a dress code, a plan to set a
#: passcode, logging in with Google, and two sentences of talk ("I handle sales and ops", "key-person insurance").
#: blind7's 18 misses and its one refusal (round secrets49's tuning).
BLIND7_STORED = [
    ('card_back_digits', 'The three digits on the back of my HDFC Regalia are 482.'),
    ('first_pet', "For the bank's 'name of your first pet' question I put Bruno, so don't change it"),
    ('mpesa_details', 'Safaricom line 0722 481 903, nambari ya siri 5590'),
    ('bca_mobile', 'm-BCA kode akses 118822'),
    ('personalausweis', 'L01X00T47, ausgestellt in München, gültig bis 2030'),
    ('steuer_id', 'Meine Steuer-ID ist 12 345 678 901'),
    ('curp', 'GODE561231HDFRRN09'),
    ('nin', 'NIN 48213906715'),
    ('bvn', 'My BVN is 22184759302, the bank asked for it again'),
    ('national_id', 'Kitambulisho changu ni namba 28841907'),
    ('nik', 'NIK 3174052308850003'),
    ('nip_tarjeta', 'NIP de la tarjeta Banorte: 3391'),
    ('senha_itau', 'senha do Itaú: 4 4 8 2 1 9'),
    ('geheimzahl', 'Meine Geheimzahl für die Sparkassen-Karte ist 7305.'),
    ('favorite_teacher', "Mrs Okafor - that's what I gave Barclays as the answer to the teacher question"),
    ('upi', 'UPI ka 6 digit: 190475'),
    ('voicemail', 'voicemail access 2211'),
    ('quickbooks', 'Quickbooks: finance@buildmx.mx, contraseña Chilaquiles_77'),
]
BLIND7_REFUSED = [
    ('security_question_note', "Doesn't like banks that still use security questions"),
]
#: blind8's 21 misses and its 5 refusals (round secrets50's tuning).
BLIND8_STORED = [
    ('first_pet', "the answer I give for 'name of your first pet' on every site is Biscuit99"),
    ('bike_immobiliser', 'nine four four one'),
    ('sinhala_note', 'mage phone eka arinna 1 9 8 4 gahanna, Nimal ta kiyanna epa'),
    ('immeuble', "Le digicode de l'immeuble c'est 4B27A, puis la porte à gauche"),
    ('cassaforte', 'la combinazione della cassaforte in ufficio è 36-12-07'),
    ('voice_note_transcript', 'uh so yeah, the, um, the dial on the safe in the bedroom cupboard goes like, '
                              'twenty-two, fourteen, and then, uh, ninety, right?'),
    ('childhood_street', 'Lakeview Road (what I answer when Chase asks which street I grew up on)'),
    ('sister_instagram', "Ayesha's Instagram is ayesha.k and she uses sunflower_91 to get in"),
    ('numero_secu', '1 85 05 78 006 084 36'),
    ('codice_fiscale', 'RSSMRA85T10A562S'),
    ('pesel', '85071503457'),
    ('egypt_national_id', '29001011234567'),
    ('router_admin', 'admin / admin123 on 192.168.1.1'),
    ('ipad', "Zara's iPad: 121212"),
    ('mom_laptop', "Ammi's laptop opens with 'Karachi1965'"),
    ('emergency_access', "If I'm ever in hospital, Rohan can get into my email with Monsoon_Raga_77."),
    ('sms', 'G-582014 is your Google verification code'),
    ('whatsapp_two_step', 'two-step verification six digits: 331907'),
    ('polish_voice_note', 'no więc, eee, kod do bramy to jeden dwa trzy cztery, krzyżyk'),
    ('card_in_words', 'four five three two, seven seven one zero, eight eight one nine, zero three four six'),
    ('italian_voice', 'allora, ehm, per entrare nel conto della banca uso lucadipietro e poi Vespa_1972, va bene?'),
]
BLIND8_REFUSED = [
    ('access_pass', 'Got a speaker pass for TechSparks in Bengaluru, 5 to 7 September.'),
    ('otp_cost', 'MSG91 charges ₹0.18 per OTP SMS'),
    ('private_key_custody', 'Only Imran, our CTO, holds the production signing keys; nobody else should ask for them.'),
    ('gate_pass', 'visitors need a gate pass from reception at the Noida tech park'),
    ('pin_map', '📍 Kahve Dünyas\u0131, Beşiktaş, usual meeting spot'),
]
#: blind9's and blind10's misses and refusals (round secrets51's tuning), as the lead measured them on secrets50.
BLIND9_STORED = [
    ('router', 'lösenordet till routern är Älgen4ever'),
    ('kaadi_mi', 'Nọ́mbà àṣírí káàdì mi ni 2208, ẹ má sọ fún ẹnikẹ́ni'),
    ('yemistir_qal', 'yemistir qal: Selam2015Addis'),
    ('memo', "Uh so yeah, for the Chase online thing it's jmartinez_ny and then, um, BrooklynBridge77 with a "
             "capital B."),
    ('jumin', 'jumin deungnok beonho: 850412-1234567'),
    ('born_city_for_bank', 'City where I was born, for the Wells Fargo question: Tegucigalpa'),
]
BLIND9_REFUSED = [
    ('booking_code', 'PNR QX7T2L, KLM Amsterdam to Nairobi on 14 March'),
    ('passcode_policy', 'Wants all company phones to have a 6-digit passcode with Face ID turned on.'),
    ('recovery_key_takeaways', 'Recovery after the outage: add a status page and a proper on-call rota.'),
]
BLIND10_STORED = [
    ('dvr_cctv', 'The CCTV DVR in the shop takes 3391 after you hit menu, the installer set it.'),
    ('pos_terminal_supervisor', 'supervisor override on the Clover is 2580'),
    ('trezor_words', 'first six: actor brisk canyon dolphin elbow fabric'),
    ('tan_list', 'TAN 482913 for the transfer to the landlord'),
    ('card_back_digits', 'the three digits on the back of the corporate Mastercard are 7 0 9'),
    ('cofre', 'O segredo do cofre é 38 para direita, 12 para esquerda, 5 direita'),
]
BLIND10_REFUSED = [
    ('env_vars_note', 'NODE_ENV=production PORT=8080 LOG_LEVEL=info REDIS_HOST=cache-01.internal'),
    ('wifi_password_location', 'The Wi-Fi password is printed on the sticker under the router.'),
    ('token_number', 'Passport Seva Kendra token number A-142, slot at 10:30'),
    ('sysadmin_hosts', 'nas01.home.lan 192.168.1.20, dvr01 192.168.1.30:8000, pihole 192.168.1.2'),
]
#: tuning52's thirteen secrets that secrets51's filter stored (measured once before this round changed anything: 13/44
#: let through, 4/41 refused), each under the key a model would give it, and two of its four refusals that the rules
#: keep now (a network's name under a key naming a network, an order's number beside a keypad) with three look-alikes
#: of its secrets (round secrets52: the learned model reads characters and words).
TUNING52_STORED = [
    ("imac", "Home iMac opens with bondibeach7"),
    ("zoom", "host key 552917"),
    ("lloyds_memorable_info", "Marmalade"),
    ("natwest", "The NatWest app wants characters from my memorable info: clementine"),
    ("dropbox", "Dropbox for the shop is shopfront_2020 with the gmail"),
    ("nest", "Nest thermostat account: homeowner, Chestnut55"),
    ("ird_number", "049-091-850"),
    ("pps", "My PPS number is 1234567TA"),
    ("licence", "Driver's licence number MORGA753116SM9IJ"),
    ("tfn", "123 456 782"),
    ("voicemail", "dial 121 then 5544"),
    ("cabin_wifi", "wifi at the cabin is LakeHouse2022 and the network is Loon"),
    ("netflix", "The shared Netflix is under nina's email with StrangerThings5"),
]
TUNING52_REFUSED = [
    ("wifi_network", "Loon_5G in the cabin, Loon_2G for the old TV"),
    ("keypad_order", "Order number 304-8829174-5521 for the new keypad"),
    ("email", "tayloranderson13@gmail.com"),
    ("zoom", "weekly standup Mondays 9:30, host is Priya"),
    ("username", "jessplays22 on Twitch"),
]
BLIND6_STORED = [
    ("amex_cid", "The 4 digit CID on the front of the Amex is 7261"),
    ("nric", "S8421973D"),
    ("uk_ni", "National Insurance QQ 12 34 56 C"),
    ("kannada_card", "Nanna debit card hinde iruva mooru ankhe 471"),
    ("bengali_locker", "Locker er combination ta holo baam dike 20, dan dike 5, abar baam dike 33"),
    ("car_keyless", "Keyless entry number on the Ford door pad: 5 3 1 1 7"),
    ("crypto_backup", "1. velvet 2. anchor 3. tribe 4. salmon 5. quiz 6. ladder 7. orphan 8. galaxy 9. hedge "
                      "10. mirror 11. wool 12. cactus"),
    ("favourite_teacher", "ICICI question, favourite teacher: Mrs. Dsouza"),
]
BLIND6_REFUSED = [
    ("delivery_pin_codes", "We only deliver to PIN codes starting with 400 and 411 for now."),
    ("passcode_reminder", "Remind me to set a passcode on the new iPad this weekend."),
    ("passport_renewal", "Passport expires in August 2026; renewal appointment at the Lower Parel PSK on 12 June."),
    ("employee_code", "Rohit's employee code is GL-0042."),
    ("routing_number", "Chase routing number 021000021"),
    ("telugu_office_pin", "Maa office pin code 500081, Hitech City daggara"),
    ("netbanking_portal",
     "We use the corporate net banking portal at netbanking.hdfcbank.com with a hardware token from the bank."),
    ("key_person_insurance", "Took key-person insurance of ₹2 crore on co-founder Arjun"),
    ("pin_gujarati", "Navu godown Sanand ma che, pin code 382110"),
    ("kannada_code", "Office ge dress code formal, Friday matra casual"),
    ("malayalam_login", "Login cheyyaan Google use cheyyunnu, separate password illa."),
    ("gym_locker_number", "Locker 112 at Cult Koramangala is hers for the year."),
    ("co_founder", "Arjun handles tech; I handle sales and ops."),
    ("pin", "Saket, New Delhi 110017"),
]


@pytest.mark.parametrize(("stored", "refused"), [(HELDOUT3_STORED, HELDOUT3_REFUSED),
                                                 (TUNING5_STORED, TUNING5_REFUSED), (TUNING6_STORED, TUNING6_REFUSED),
                                                 (FRESH_STORED, FRESH_REFUSED[:4]), ([], FRESH_REFUSED[4:]),
                                                 (BLIND3_STORED, BLIND3_REFUSED[:4]), ([], BLIND3_REFUSED[4:]),
                                                 (BLIND4_STORED[:4], BLIND4_REFUSED[:3]),
                                                 (BLIND4_STORED[4:], BLIND4_REFUSED[3:6]), ([], BLIND4_REFUSED[6:]),
                                                 (BLIND5_STORED[:6], BLIND5_REFUSED[:2]),
                                                 (BLIND5_STORED[6:12], BLIND5_REFUSED[2:4]),
                                                 (BLIND5_STORED[12:18], BLIND5_REFUSED[4:6]),
                                                 (BLIND5_STORED[18:], BLIND5_REFUSED[6:]),
                                                 (BLIND6_STORED[:4], BLIND6_REFUSED[:4]),
                                                 (BLIND6_STORED[4:], BLIND6_REFUSED[4:8]), ([], BLIND6_REFUSED[8:])],
                         ids=["heldout3", "tuning5", "tuning6", "fresh", "fresh-harmless", "blind3",
                              "blind3-harmless", "blind4-a", "blind4-b", "blind4-harmless", "blind5-a", "blind5-b",
                              "blind5-c", "blind5-d", "blind6-a", "blind6-b", "blind6-harmless"])
async def test_misses_proposed_after_a_real_turn_are_refused_and_the_harmless_facts_kept(
        workspace: Path, data_dir: Path, state_url: StateURL | None,
        stored: list[tuple[str, str]], refused: list[tuple[str, str]]) -> None:
    model = ScriptedModel()
    model.memory = json.dumps({"facts": [{"key": k, "value": v, "kind": "context"} for k, v in [*stored, *refused]]})
    async with await open_on(settings_with_cheap(workspace, data_dir, state_url, model, cheap=None), model) as b:
        await b.handle(envelope("I use Google Authenticator, Twilio sends our OTPs, we closed a pre-seed in March."))
        await settle(b)
        assert len(model.memory_requests) == 1  # the model was asked, and proposed all of them
        marker = await b.handle(envelope("Q902 what next?"))
        assert marker.text == "general: Q902 what next?"
        await settle(b)
        kept = await heard_facts(b)
    assert kept == dict(refused), kept


#: A secret of the blind set (tests/data/memory_secrets_blind.jsonl) the pattern rules let through, as a model
#: proposes it after a real turn, beside harmless facts the rules kept: the learned model beside the rules
#: (board/language/secret_model.py) refuses it; the harmless facts are still kept. The blind set's three other
#: misses are refused by rules since round classify45 (a "u/p" label, a dial's "L 24, R 11" turns, an EIN's key).
BLIND_STORED = [("router_admin", "admin:admin123"), ("quickbooks", "u/p priya.accounts / Ledger2023"),
                ("office_safe_combo", "L 24, R 11, L 37"), ("ein", "84-3920175")]
BLIND_KEPT = [("home_city", "Pune"), ("pin_code", "411038")]


async def test_blind_set_secrets_proposed_after_a_real_turn_are_never_stored(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = ScriptedModel()
    facts = [*BLIND_STORED, *BLIND_KEPT]
    model.memory = json.dumps({"facts": [{"key": k, "value": v, "kind": "context"} for k, v in facts]})
    async with await open_on(settings_with_cheap(workspace, data_dir, state_url, model, cheap=None), model) as b:
        await b.handle(envelope("I'm in Pune, 411038. The router login is admin:admin123."))
        await settle(b)
        assert len(model.memory_requests) == 1  # the model was asked, and proposed all of them
        marker = await b.handle(envelope("Q903 what next?"))
        assert marker.text == "general: Q903 what next?"
        await settle(b)
        kept = await heard_facts(b)
    assert kept == dict(BLIND_KEPT), kept
