"""What a person says about themselves, read by rule; and what may never be kept about them.

Two pure helpers of user memory (no I/O, no model; the offline model and the fact store use them):

- :func:`heard` reads simple first-person statements out of a user's message, deterministically:
  "I'm based in Pune" (location), "call me Asha" / "my name is Asha" (name), "I prefer short
  answers" (a preference), "I work at Infosys" / "I work as a designer" (employer / occupation),
  "I'm the founder of Zeta" (role), "I'll send the deck by Friday" (a commitment), "my <thing> is
  <value>" / "our <thing> is <value>" (that thing), "we have 12 employees". "Actually, I moved to
  Mumbai" is a correction: it yields the same key as the fact it replaces. It passes over
  questions, hypotheticals ("if I were based in Delhi"), negations, and what others said
  ("you said I'm ..."). It is the offline model's extractor (so ``make run`` shows memory writing
  itself) and the scripted extractor the evaluation measures.
- :func:`secret_reason` (from :mod:`board.language.secrets`, which owns the secret filter) says why a
  fact may not be stored, or None. :func:`heard` also keeps nothing from a sentence that would be
  refused as a whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["FactKind", "StatedFact", "heard", "secret_reason", "sentence_reason", "worth_hearing"]


def secret_reason(key: str, value: str) -> str | None:
    """Why the fact (key, value) may not be stored, or None: :func:`board.language.secrets.secret_reason`, imported on
    first use. The filter compiles some hundreds of patterns (~50 ms); a command or a turn that stores nothing
    (``sabha ask ... hi``, ``sabha souls``) should not pay for them."""
    from board.language.secrets import secret_reason as reason

    return reason(key, value)


def sentence_reason(text: str) -> str | None:
    """Why a sentence may not be kept (it tells a secret), or None: :func:`board.language.secrets.sentence_reason`,
    imported on first use (see :func:`secret_reason`)."""
    from board.language.secrets import sentence_reason as reason

    return reason(text)


class FactKind(StrEnum):
    """What kind of durable fact a statement is."""

    PROFILE = "profile"          # name, location, work, role
    PREFERENCE = "preference"
    CONTEXT = "context"          # their company, team, budget, family...
    COMMITMENT = "commitment"    # something they said they will do
    CORRECTION = "correction"    # replaces an earlier fact (same key)


@dataclass(frozen=True)
class StatedFact:
    """One fact read from a message: ``key`` a short label, ``value`` one line."""

    key: str
    value: str
    kind: FactKind


# -- statements ----------------------------------------------------------------------------

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_FILLER = re.compile(r"^(?:(?:and|also|oh|well|so|btw|by the way|ok|okay|hi|hey|hello|fyi)\b[,:]?\s*)+", re.IGNORECASE)
_CORRECTION = re.compile(r"^(?:actually|correction|sorry|update|no|wait|scratch that)\b[,:!]?\s*|"
                         r"\b(?:now|anymore|any more|these days|instead)\b", re.IGNORECASE)
_QUESTION_START = re.compile(
    r"^(?:what|how|why|when|where|who|which|should|shall|can|could|would|will|do|does|did|is|are|am|was|were|"
    r"may|might)\b", re.IGNORECASE)
_HYPOTHETICAL = re.compile(
    r"\b(?:if|suppose|supposing|imagine|imagining|hypothetically|pretend|assuming|unless|whether|wish|"
    r"in theory|let's say|lets say|say that|what if|would be|were i)\b", re.IGNORECASE)
_OTHERS = re.compile(r"\b(?:you said|you say|you told|you mentioned|you think|you wrote|he said|she said|they said|"
                     r"my friend|someone|somebody|a friend|my colleague said|quote|quoting)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|never|no longer|don't|do not|didn't|doesn't|isn't|aren't|wasn't|won't|can't)\b|"
                       r"n't\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|my|me|we|we're|our)\b", re.IGNORECASE)

_NAME = r"(?P<v>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})"
_PLACE = r"(?P<v>[A-Z][\w.'-]*(?:(?:\s+|,\s*)[A-Z][\w.'-]*)*)"
_ORG = r"(?P<v>[A-Z0-9][\w&.'-]*(?:\s+(?:[A-Z0-9&][\w&.'-]*|of|and|de))*)"
_FREE = r"(?P<v>[^.;!?]{2,120})"
_I_AM = r"(?i:\bi(?:'m|\s+am|m)\s+)"

#: (pattern, key or None for "from the match", kind); tried in order, each at most once per sentence.
_RULES: tuple[tuple[re.Pattern[str], str | None, FactKind], ...] = (
    (re.compile(r"(?i:\b(?:call me|my name is|my name's|i go by|you can call me)\s+)" + _NAME), "name",
     FactKind.PROFILE),
    (re.compile(_I_AM + r"(?i:(?:based|located|living|settled)\s+(?:in|out of)\s+)" + _PLACE), "location",
     FactKind.PROFILE),
    (re.compile(r"(?i:\bi\s+(?:live|stay|reside)\s+in\s+)" + _PLACE), "location", FactKind.PROFILE),
    (re.compile(r"(?i:\b(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+)?(?:moved|relocated|shifted)\s+to\s+)"
                + _PLACE), "location", FactKind.CORRECTION),
    (re.compile(_I_AM + r"(?i:from\s+)" + _PLACE), "hometown", FactKind.PROFILE),
    (re.compile(r"(?i:\bi\s+work\s+(?:at|for|with)\s+)" + _ORG), "employer", FactKind.PROFILE),
    (re.compile(r"(?i:\bi\s+work\s+as\s+(?:an?\s+|the\s+)?)" + _FREE), "occupation", FactKind.PROFILE),
    (re.compile(_I_AM + r"(?i:(?:the\s+|an?\s+)?)(?P<v>(?i:co-?founder|founder|ceo|cto|cfo|coo|owner|director|"
                r"manager|head|partner|consultant|freelancer|student)\b[^.;!?]{0,80})"), "role", FactKind.PROFILE),
    (re.compile(_I_AM + r"(?i:(?:a\s+|strictly\s+)?)(?P<v>(?i:vegetarian|vegan|pescatarian|teetotal|"
                r"left-handed))\b"), "diet", FactKind.PREFERENCE),
    (re.compile(r"(?i:\bi(?:\s+would|'d)?\s+prefer\s+(?:to\s+)?)" + _FREE), None, FactKind.PREFERENCE),
    (re.compile(r"(?i:\b(?:i|we)\s+(?:run|own|founded|started|co-?founded)\s+(?:an?\s+|the\s+)?)" + _FREE),
     "business", FactKind.CONTEXT),
    (re.compile(r"(?i:\b(?:i|we)\s+have\s+)(?P<v>\d[\d,.]*\s+[a-z][\w-]*(?:\s+[a-z][\w-]*)?)"), None,
     FactKind.CONTEXT),
    (re.compile(r"(?i:\b(?:i(?:'ll|\s+will)|i(?:'m|\s+am)\s+going\s+to|i\s+(?:promised|committed|plan|intend)\s+to)"
                r"\s+)" + _FREE), None, FactKind.COMMITMENT),
    (re.compile(r"(?i:\b(?P<whose>my|our)\s+)(?P<k>(?i:[a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,2}?))"
                r"(?i:\s+(?:is|are|was)\s+(?:called\s+|named\s+)?)" + _FREE), None, FactKind.CONTEXT),
)

_NOT_KEYS = {"question", "point", "guess", "concern", "worry", "doubt", "idea", "thought", "understanding", "answer",
             "issue", "problem", "bad", "fault", "pleasure", "feeling", "sense", "hope", "bet", "take", "view",
             "opinion", "gut", "reply", "message", "last message", "request", "ask", "name"}
_DULL_COMMITMENTS = re.compile(r"^(?:think|see|try|check|consider|let you know|get back|be back|keep|need|have|"
                               r"probably|maybe|just)\b", re.IGNORECASE)
_CUT = re.compile(r"\s+(?:and then|but|because|so that|since|though|although)\s+|,\s+(?:and|but|so)\s+", re.IGNORECASE)
_PREFERENCE_TOPICS = (
    ("preferred contact", r"e-?mail|call|calls|phone|whatsapp|telegram|text|sms|message|messages"),
    ("preferred language", r"english|hindi|marathi|tamil|telugu|kannada|bengali|gujarati|french|spanish|german"),
    ("preferred currency", r"inr|rupees?|usd|dollars?|euros?|eur|gbp|pounds?"),
    ("answer style", r"short|brief|concise|detailed|long|bullet|bullets|answers?|replies|summaries|numbers|tables?"),
    ("meeting time", r"mornings?|evenings?|afternoons?|weekends?|weekdays?"),
)


_SLUG_SKIP = {"a", "an", "the", "to", "my", "our", "you", "me", "him", "her", "them"}


def _tidy(value: str) -> str:
    value = _CUT.split(value, maxsplit=1)[0]
    value = re.sub(r"\s+(?:please|thanks|thank you)$", "", value.strip(), flags=re.IGNORECASE)
    return " ".join(value.split()).strip(" ,:-'\".")


def _slug(value: str, words: int = 3) -> str:
    kept = [w for w in re.findall(r"[a-z0-9']+", value.lower()) if w not in _SLUG_SKIP]
    return " ".join(kept[:words])


def _key_for(rule_key: str | None, kind: FactKind, match: re.Match[str], value: str) -> str | None:
    if rule_key is not None:
        return rule_key
    if kind is FactKind.PREFERENCE:
        low = value.lower()
        for key, words in _PREFERENCE_TOPICS:
            if re.search(rf"\b(?:{words})\b", low):
                return key
        return f"prefers {_slug(value, 2)}" if _slug(value) else None
    if kind is FactKind.COMMITMENT:
        if _DULL_COMMITMENTS.match(value):
            return None
        return f"plans to {_slug(value, 2)}"
    groups = match.groupdict()
    if groups.get("k"):
        thing = " ".join(groups["k"].lower().split())
        if thing in _NOT_KEYS or thing.split()[-1] in _NOT_KEYS:
            return None
        return thing if groups.get("whose", "").lower() == "my" else f"our {thing}"
    noun = value.split(maxsplit=1)[-1].lower()  # "12 employees" -> "employees"
    return f"number of {noun}"


def _candidate(sentence: str) -> str | None:
    """The sentence stripped of filler, or None when nothing in it may be kept."""
    s = _FILLER.sub("", sentence.strip()).strip()
    if not s or s.endswith("?") or _QUESTION_START.match(s):
        return None
    if _HYPOTHETICAL.search(s) or _OTHERS.search(s) or _NEGATION.search(s):
        return None
    return s


def heard(text: str) -> list[StatedFact]:
    """The durable first-person facts stated in ``text``, in order (see the module docstring)."""
    found: dict[str, StatedFact] = {}
    for raw in _SENTENCE.split(text):
        sentence = _candidate(raw)
        if sentence is None or sentence_reason(sentence):
            continue  # nothing is kept from a sentence that tells a secret ("my netbanking login is ...")
        correction = bool(_CORRECTION.search(sentence))
        sentence = re.sub(r"^(?:actually|correction|sorry|update|no|wait|scratch that)\b[,:!]?\s*", "", sentence,
                          flags=re.IGNORECASE)
        used: list[tuple[int, int]] = []
        for pattern, rule_key, kind in _RULES:
            match = pattern.search(sentence)
            if match is None or any(match.start() < end and start < match.end() for start, end in used):
                continue  # no match, or words an earlier rule already read
            value = _tidy(match.group("v"))
            key = _key_for(rule_key, kind, match, value)
            if not value or key is None or secret_reason(key, value):
                continue
            used.append(match.span())
            found[key] = StatedFact(key=key, value=value, kind=FactKind.CORRECTION if correction else kind)
    return list(found.values())


#: A clause whose subject is the writer: "I ...", "we ...", "my/our <thing> ..." at the start of a sentence
#: or of a clause (after a comma, a colon, "and", "but", "because"...). "Give me the risks of our plan" and
#: "summarise where we landed" name the writer only inside a request: nothing to remember there.
_WRITER_CLAUSE = re.compile(
    r"(?:^|[,:;(\-]\s*|\b(?:and|but|so|because|since|as|actually|also|now|then|though|although|while|btw)\s+)"
    r"(?:i|i'm|im|i've|i'd|i'll|we|we're|we've|we'd|we'll|my|our|mine|ours)\b", re.IGNORECASE)
#: Naming oneself inside a request: "please call me Asha", "you can call me Raj".
_NAMING = re.compile(r"\b(?:call me|know me as|i go by|my name)\b", re.IGNORECASE)
#: A whole sentence of small talk about the writer: "I agree.", "I'm fine, thanks!", "We'll see."
_SMALL_TALK = re.compile(
    r"^(?:(?:i|we)(?:'m|\s+am|'re|\s+are)?\s+(?:good|fine|ok|okay|great|well|alright|glad|happy|sure|not\s+sure|"
    r"back|here|done|ready|with\s+you|curious|listening)|(?:i|we)(?:'ll|\s+will)\s+see|"
    r"i\s+(?:agree|see|know|guess|think\s+so|understand|hope\s+so|suppose|get\s+it|appreciate\s+it|wonder)|"
    r"me\s+too|my\s+bad|my\s+pleasure|i\s+don't\s+know|i\s+dunno)\b(?:[\s,]+\w+){0,3}[\s.!,]*$", re.IGNORECASE)


def worth_hearing(text: str) -> bool:
    """Whether ``text`` may say something about its writer: a sentence that is no question, whose own
    clause is about the writer ("I ...", "we ...", "my ...", "our ..."; or names them: "call me ...")
    and is more than small talk ("I agree", "I'm fine, thanks"). The cheap local test before any model
    is asked to extract facts from it: a chat of questions, requests and pleasantries asks none."""
    for raw in _SENTENCE.split(text):
        sentence = _FILLER.sub("", raw.strip()).strip()
        if not sentence or sentence.endswith("?") or _SMALL_TALK.match(sentence):
            continue
        if _NAMING.search(sentence) or (_WRITER_CLAUSE.search(sentence) and not _QUESTION_START.match(sentence)):
            return True
    return False
