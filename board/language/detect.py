"""Which language the user writes in (seed 001: "answer in the language the user writes in").

A small, dependency-free detector, good enough for the languages users of a board write in:

* by script: Devanagari (Hindi), Arabic, Cyrillic (Russian), Hangul (Korean), kana (Japanese),
  Han without kana (Chinese), Greek, Hebrew, Thai;
* among Latin-script languages by common function words and a few telling letters: English,
  French, German, Spanish, Portuguese, Italian, Dutch.

It says :data:`UNKNOWN` rather than guess on very short text or a tie; the caller then keeps the
conversation's previous language (:func:`choose_language`). ``USER.md`` may fix the language
(a line ``Language: English`` or front matter ``language: English``): :func:`language_in_user_md`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["UNKNOWN", "LanguageChoice", "LanguageSource", "choose_language", "detect_language",
           "language_in_user_md"]

#: What :func:`detect_language` says when it cannot tell.
UNKNOWN = "unknown"

#: Scripts that name a language by themselves (first character's script wins by count).
_SCRIPTS: tuple[tuple[str, str], ...] = (
    ("DEVANAGARI", "Hindi"), ("ARABIC", "Arabic"), ("CYRILLIC", "Russian"), ("HANGUL", "Korean"),
    ("HIRAGANA", "Japanese"), ("KATAKANA", "Japanese"), ("CJK", "Chinese"), ("GREEK", "Greek"),
    ("HEBREW", "Hebrew"), ("THAI", "Thai"), ("BENGALI", "Bengali"), ("TAMIL", "Tamil"),
    ("TELUGU", "Telugu"), ("KANNADA", "Kannada"), ("GUJARATI", "Gujarati"), ("GURMUKHI", "Punjabi"),
    ("MALAYALAM", "Malayalam"),
)

#: Common words (lower case) telling each Latin-script language apart. Words shared by several
#: languages count for each of them.
def _vocabulary(words: str) -> frozenset[str]:
    return frozenset(words.split())


_WORDS: dict[str, frozenset[str]] = {
    "English": _vocabulary(
        "the and is are was were what which who how why when where do does did our your we you it this "
        "that of to in for with have has not can should would will be my i me please our runway cash "
        "there their about from"
    ),
    "French": _vocabulary(
        "le la les un une des est et que qui quoi quelle quel quels quelles comment pourquoi notre nos "
        "votre vos nous vous je tu il elle ce cette sont avec pour dans sur pas de en combien avons avez "
        "sommes du au aux mais ou où faut-il faut doit peut très bien merci bonjour oui non"
    ),
    "German": _vocabulary(
        "der die das und ist sind nicht wie was warum wann wo wir ihr sie ich du unser unsere unseren ein "
        "eine einen mit für auf zu den dem des auch noch sollen sollten können kann bitte danke hallo ja "
        "nein wird werden haben hat"
    ),
    "Spanish": _vocabulary(
        "el la los las un una es y que qué cuál cuáles cómo por porqué cuándo dónde nuestro nuestra "
        "nuestros nosotros usted ustedes yo tú con para en del al pero está están debemos deberíamos hola "
        "gracias sí muy también hay cuánto cuánta cuántos de en nos queda tenemos tiene hacer"
    ),
    "Portuguese": _vocabulary(
        "o a os as um uma é e que qual quais como por quando onde nosso nossa nossos nós você vocês eu "
        "com para em do da dos das no na não mas está estão devemos deveríamos olá obrigado obrigada sim "
        "muito também há isso quanto quantos temos fazer nossa de"
    ),
    "Italian": _vocabulary(
        "il lo la gli le un una è e che qual quale quali come perché quando dove nostro nostra nostri noi "
        "voi io tu con per in del della dei delle non ma sono dovremmo ciao grazie sì molto anche c'è "
        "questo questa quanto quanti quante ci abbiamo fare"
    ),
    "Dutch": _vocabulary(
        "de het een en is zijn niet wat hoe waarom wanneer waar wij we jullie ik jij ons onze met voor op "
        "te van in ook nog moeten kunnen kan alsjeblieft dank hallo ja nee wordt heeft hebben kun je jouw "
        "hoeveel zijn"
    ),
}

#: Letters that lean to one language (a weak hint, counted once per occurrence).
_LETTERS: dict[str, str] = {"ß": "German", "ä": "German", "ö": "German", "ü": "German", "ñ": "Spanish",
                            "¿": "Spanish", "¡": "Spanish", "ã": "Portuguese", "õ": "Portuguese",
                            "ç": "French", "è": "French", "ê": "French", "à": "French", "œ": "French",
                            "ì": "Italian", "ò": "Italian", "ĳ": "Dutch"}

_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)?")
#: Fewer letters than this (or fewer words than :data:`_MIN_WORDS`) is too short to tell.
_MIN_LETTERS = 8
_MIN_WORDS = 3


def _script_language(text: str) -> str | None:
    counts: dict[str, int] = {}
    latin = 0
    for ch in text:
        if not ch.isalpha():
            continue
        name = unicodedata.name(ch, "")
        if name.startswith("LATIN"):
            latin += 1
            continue
        for prefix, language in _SCRIPTS:
            if name.startswith(prefix):
                counts[language] = counts.get(language, 0) + 1
                break
    if not counts:
        return None
    if counts.get("Japanese"):  # kana with kanji is Japanese, not Chinese
        counts["Japanese"] += counts.pop("Chinese", 0)
    language, n = max(counts.items(), key=lambda kv: kv[1])
    if n >= max(2, latin):
        return language
    return None


def detect_language(text: str) -> str:
    """The language ``text`` is written in (an English name such as ``"French"``), or
    :data:`UNKNOWN` when the text is too short or the evidence ties."""
    text = re.sub(r"https?://\S+|[@/]\w+", " ", text or "")  # links, @mentions and /commands say nothing
    by_script = _script_language(text)
    if by_script is not None:
        return by_script
    lowered = text.lower()
    words = _WORD.findall(lowered)
    if len(words) < _MIN_WORDS or sum(len(w) for w in words) < _MIN_LETTERS:
        return UNKNOWN
    scores = dict.fromkeys(_WORDS, 0.0)
    for word in words:
        for language, vocabulary in _WORDS.items():
            if word in vocabulary:
                scores[language] += 1.0
    for ch in lowered:
        hint = _LETTERS.get(ch)
        if hint is not None:
            scores[hint] += 0.5
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
    (best, top), (_, second) = ranked[0], ranked[1]
    if top < 1.5 or top - second < 1.0:
        return UNKNOWN
    return best


class LanguageSource(StrEnum):
    """Why a turn's language is what it is."""

    USER_MD = "USER.md"  # the owner fixed it
    MESSAGE = "message"  # detected in the user's message
    EARLIER = "earlier"  # the message was too short to tell: the conversation's previous language
    REQUEST = "request"  # a meeting: the language its topic was asked in


@dataclass(frozen=True)
class LanguageChoice:
    """The language to answer in, and why."""

    language: str
    source: LanguageSource

    @property
    def instruction(self) -> str:
        """The line the per-turn block carries."""
        why = {LanguageSource.USER_MD: "as USER.md asks",
               LanguageSource.MESSAGE: "the language of the user's message",
               LanguageSource.EARLIER: "the language of this conversation so far",
               LanguageSource.REQUEST: "the language the meeting was asked in"}[self.source]
        return f"Reply in {self.language} ({why})"


def choose_language(message: str, earlier: Iterable[str] = (), *, fixed: str | None = None) -> LanguageChoice | None:
    """The language to answer ``message`` in: ``fixed`` (from USER.md) when given, else the
    message's, else that of the latest of ``earlier`` (the user's previous messages, oldest first)
    whose language can be told; None when nothing can be told."""
    if fixed:
        return LanguageChoice(fixed, LanguageSource.USER_MD)
    found = detect_language(message)
    if found != UNKNOWN:
        return LanguageChoice(found, LanguageSource.MESSAGE)
    for text in reversed(list(earlier)):
        found = detect_language(text)
        if found != UNKNOWN:
            return LanguageChoice(found, LanguageSource.EARLIER)
    return None


_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.S)
_LINE = re.compile(r"^\s*(?:[-*]\s*)?\**language\**\s*:\s*\**\s*([^\n]{1,120})$", re.I | re.M)
#: What a ``Language:`` line may say for "no fixed language: mirror the user".
_AUTO = frozenset({"auto", "detect", "any", "mirror", "automatic"})


def language_in_user_md(text: str) -> str | None:
    """The language USER.md fixes (front matter ``language:`` or a line ``Language: English``),
    cleaned to a short plain name; None when it fixes none, says ``auto`` or is still the
    template's ``<placeholder>``. What follows the name (``English (also Hindi)``) is dropped."""
    front = _FRONT.match(text or "")
    for where in ((front.group(1),) if front else ()) + (text or "",):
        match = _LINE.search(where)
        if match is None:
            continue
        raw = match.group(1).strip().strip("*").strip()
        if raw.startswith("<"):
            return None
        name = re.split(r"[(,;:.]| - | \u2014 ", raw, maxsplit=1)[0]
        name = re.sub(r"[^\w \-]", "", name).strip()[:40]
        if not name or name.split()[0].lower() in _AUTO:
            return None
        return name
    return None
