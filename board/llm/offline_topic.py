"""The offline model's reading of a meeting's question: the question turned into phrases it can speak.

A person asks "Should we open a Pune office?"; the offline model should not paste that back ("a small
pilot on should we open a Pune office"), but talk about *opening a Pune office*. :func:`topic_of` reads
the question by rule: "should/can/do we X" and "how can we X" give the action X; "what price should we
charge" gives "decide what price to charge"; a plain instruction ("Expand to Europe") is its own action;
a question of fact ("Is it worth hiring a CFO?", "Do we have enough runway?", "Should we be cheaper?") is
something to "find out whether" ("whether it is worth hiring a CFO"); anything else is something to
"decide on", alternatives kept ("Europe or Asia first"). The board speaks as "we": "my job" is "our job".
A proper noun or an acronym keeps its capital ("Europe", "AI"). The pilot the offline board recommends is
named after the action (:attr:`Topic.pilot`), so recommendation, predictions and statements all speak of
one thing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Topic", "topic_of"]

_SUBJECTS = r"(?:we|i|you|the company|the team|our team|our company|us)"
_AUX = r"(?:should|shall|can|could|do|does|would|will|must|might|may|ought to|need to|are|is)"
_ASK = re.compile(rf"^(?:so|and|but|ok|okay)?,?\s*{_AUX}\s+{_SUBJECTS}\s+(?:be\s+able\s+to\s+|still\s+)?(.+)$", re.I)
_HOW = re.compile(rf"^how\s+{_AUX}\s+{_SUBJECTS}\s+(.+)$", re.I)
_WH = re.compile(rf"^(what|which|where|when|who|how much|how many)(\s+[\w-]+)?\s+{_AUX}\s+{_SUBJECTS}\s+(.+)$", re.I)
#: "Is it ...?", "Are we ...?": a question of fact; its subject is a pronoun, a determiner and a word, or a Name
_BE = re.compile(r"^(is|are|am|was|were)\s+(it|there|this|that|we|they|i|you|(?:the|a|an|our|my|your|this|that)"
                 r"\s+[\w-]+|[A-Z][\w-]*)\s+(.+)$", re.I)
#: "Do we have ...?", "Should we be ...?": whether something holds, not an action to pilot
_HOLDS = re.compile(rf"^(?:so|and|but|ok|okay)?,?\s*({_AUX})\s+({_SUBJECTS})\s+((?:have|be|has)\b.+)$", re.I)
_LEAD = re.compile(r"^(?:board meeting on|topic|question|decide|decision)\s*:\s*", re.I)
#: verbs an instruction ("Expand to Europe?") starts with: read as the action itself
_VERBS = frozenset(re.split(
    r"\s+", "open launch expand enter hire raise build buy sell start stop cut move change switch add drop price "
    "charge "
    "partner sign invest spend close acquire rebrand pivot test run offer go make take use adopt outsource merge "
    "reach grow double halve lower increase reduce ship release hold keep replace automate fund join leave "
    "rent lease relocate license franchise sponsor publish target focus try pause delay quit accept"))


@dataclass(frozen=True)
class Topic:
    """What a meeting is about, in phrases: ``action`` a verb phrase ("open a Pune office")."""

    action: str
    question: str = ""  # "whether it is worth hiring a CFO", for a question of fact

    @property
    def pilot(self) -> str:
        """The trial the offline board talks about: "the pilot to open a Pune office"."""
        return f"the pilot to {self.action}"

    @property
    def whether(self) -> str:
        """What is to be decided: "whether to open a Pune office", "what price to charge"."""
        if self.question:
            return self.question
        if self.action.startswith("decide "):
            return self.action.removeprefix("decide ").removeprefix("on ")
        return f"whether to {self.action}"


def _first_question(text: str) -> str:
    """The first sentence or question of ``text``, its lead-in ("Topic:") and end mark dropped."""
    text = _LEAD.sub("", " ".join(text.split()))
    head = re.split(r"(?<=[?.!])\s", text, maxsplit=1)[0]
    return head.rstrip("?.! ").strip()


def _trim(phrase: str, words: int = 10, *, alternatives: bool = False) -> str:
    """At most ``words`` words of the first alternative ("open X or stay remote": "open X"); with
    ``alternatives`` every one ("Europe or Asia first")."""
    cut = r"[;:,(]" if alternatives else r",?\s+(?:or|instead of|rather than)\s+|[;:,(]"
    phrase = re.split(cut, phrase, maxsplit=1)[0]
    return " ".join(phrase.split()[:words]).rstrip(" -")


_PRONOUNS = frozenset({"it", "there", "this", "that", "we", "they", "i", "you"})
_WE = {"your": "our", "you": "we", "my": "our", "i": "we", "me": "us", "mine": "ours", "yours": "ours",
       "myself": "ourselves", "yourself": "ourselves", "am": "are"}


def _own(phrase: str) -> str:
    """Who speaks: the board, as "we": "our", not "your" or "my"; "we", not "you" or "I"."""
    return re.sub(r"\b(your|yours|yourself|you|my|mine|myself|me|I)\b",
                  lambda m: _WE[m.group(1).lower()], phrase, flags=re.I)


def _lower_first(phrase: str) -> str:
    """``phrase`` as the middle of a sentence: its first letter lowercased, unless the word is an acronym
    ("AI plans") or a name, which an alternative with a capital shows ("Europe or Asia")."""
    if phrase[1:2].islower() and not re.search(r"\b(?:or|and|vs\.?|versus)\s+[A-Z]", phrase):
        return phrase[:1].lower() + phrase[1:]
    return phrase


def _fact(subject: str, verb: str, rest: str) -> Topic:
    """A question of fact: what to find out ("whether it is worth hiring a CFO")."""
    subject = _own(subject.lower() if subject.lower() in _PRONOUNS else subject)
    verb = "are" if subject == "we" and verb.lower() in ("is", "am", "are") else verb.lower()
    clause = " ".join(x for x in (subject, verb, _own(_trim(rest))) if x)
    return Topic(f"find out whether {clause}", f"whether {clause}")


def topic_of(question: str) -> Topic:
    """The action a meeting's question is about (see the module's rules); never the question pasted."""
    text = _first_question(question)
    if match := _BE.match(text):
        return _fact(match.group(2), match.group(1), match.group(3))
    if match := _HOLDS.match(text):
        aux, rest = match.group(1).lower(), match.group(3)
        if aux == "does":  # "does the team have X": "the team has X"
            rest = re.sub(r"^have\b", "has", rest, flags=re.I)
        return _fact(match.group(2), "" if aux in ("do", "does") else aux, rest)
    if match := _HOW.match(text):
        return Topic(_own(_trim(match.group(1))))
    if match := _WH.match(text):
        wh, noun, rest = match.group(1).lower(), (match.group(2) or "").strip(), _trim(match.group(3))
        return Topic(_own(" ".join(x for x in ("decide", wh, noun, "to", rest) if x)))
    if match := _ASK.match(text):
        return Topic(_own(_trim(match.group(1))))
    words = text.split()
    if words and words[0].lower() in _VERBS:
        return Topic(_own(_trim(words[0].lower() + " " + " ".join(words[1:]))))
    subject = _own(_trim(text, alternatives=True))
    return Topic(f"decide on {_lower_first(subject)}" if subject else "decide the question")
