"""The offline model's reading of a meeting's question: the question turned into phrases it can speak.

A person asks "Should we open a Pune office?"; the offline model should not paste that back ("a small
pilot on should we open a Pune office"), but talk about *opening a Pune office*. :func:`topic_of` reads
the question by rule: "should/can/do we X" and "how can we X" give the action X; "what price should we
charge" gives "decide what price to charge"; a plain instruction ("Expand to Europe") is its own action;
anything else is something to "decide on". The pilot the offline board recommends is named after the
action (:attr:`Topic.pilot`), so recommendation, predictions and statements all speak of one thing.
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

    @property
    def pilot(self) -> str:
        """The trial the offline board talks about: "the pilot to open a Pune office"."""
        return f"the pilot to {self.action}"

    @property
    def whether(self) -> str:
        """What is to be decided: "whether to open a Pune office", "what price to charge"."""
        if self.action.startswith("decide "):
            return self.action.removeprefix("decide ").removeprefix("on ")
        return f"whether to {self.action}"


def _first_question(text: str) -> str:
    """The first sentence or question of ``text``, its lead-in ("Topic:") and end mark dropped."""
    text = _LEAD.sub("", " ".join(text.split()))
    head = re.split(r"(?<=[?.!])\s", text, maxsplit=1)[0]
    return head.rstrip("?.! ").strip()


def _trim(phrase: str, words: int = 10) -> str:
    """At most ``words`` words of the first alternative ("open X or stay remote": "open X")."""
    phrase = re.split(r",?\s+(?:or|instead of|rather than)\s+|[;:,(]", phrase, maxsplit=1)[0]
    return " ".join(phrase.split()[:words]).rstrip(" -")


def _own(phrase: str) -> str:
    """Who speaks: "our", not "your"; "we", not "you"."""
    phrase = re.sub(r"\byour\b", "our", phrase, flags=re.I)
    return re.sub(r"\byou\b", "we", phrase, flags=re.I)


def topic_of(question: str) -> Topic:
    """The action a meeting's question is about (see the module's rules); never the question pasted."""
    text = _first_question(question)
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
    subject = _trim(text)
    return Topic(f"decide on {subject[:1].lower() + subject[1:]}" if subject else "decide the question")
