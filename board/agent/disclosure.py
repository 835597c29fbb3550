"""What says which model is behind an answer (seed 001: "never reveal the model").

Owns :func:`configured_names` (the configured model ids and their bare names, the ones an answer
must never show), :func:`own_names` (the answering model's family and vendor names) and
:func:`disclosure_pattern` / :func:`scrub_disclosures` (which sentences give the model away).

The guarantee is privacy; a withheld word costs less than a leaked model. So, sentence by sentence:

- a **self-description** (the answer says what it is, runs on, was made by or is called: "I'm GPT-4o
  by OpenAI", "You're talking to Claude.", "This is Gemini speaking.", "Gemini is the model behind
  this board.", "Being Claude, I ...", "Hello from Claude!", "Sure — Claude Sonnet 4.5 here.", "As an
  AI language model developed by OpenAI, I ...", "je suis un modèle développé par Mistral AI") loses
  every vendor and family name in it;
- any other sentence that names the **answering model's own** family or vendor loses those names,
  unless it clearly treats them as the user's topic: another vendor or family beside them, a
  comparison ("compare", "than", "versus", "both"), a pick or use for the user ("for your app",
  "your invoices", "use", "try", "consider"), or a business fact about them (pricing, API, tiers,
  tokens, a launch, a vendor's product: "Google Workspace"); the answering model's name as the subject
  of what it cannot see, reach or keep ("Honestly, Claude can't see your bank account.") is the
  answer speaking of itself in the third person, withheld whatever topic words stand beside it;
- other vendors and families (not the answering model's) stay, except in self-descriptions.

A configured model id as written (``gemini-2.0-flash``, ``acme-brain-7``) is no topic anyone else
brings up, so :func:`configured_names` are scrubbed wherever they appear (by the guardrail).

The expressions are compiled on first use (:class:`_Lazy`): compiling them costs about 60 ms of CPU,
which neither the daemon's start nor a ``sabha ask`` on the offline model (whose answers are not
scrubbed) should pay.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["FAMILY", "VENDORS", "configured_names", "disclosure_pattern", "own_names", "scrub_disclosures"]


class _Lazy:
    """A regular expression compiled the first time one of its methods is used."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        """The compiled expression."""
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled(), name)


#: Who makes models, as an answer would name them.
VENDORS = (
    "openai", "open ai", "anthropic", "google deepmind", "google ai", "google", "deepmind", "meta ai", "meta",
    "mistral ai", "microsoft", "xai", "cohere", "alibaba cloud", "alibaba", "hugging face", "huggingface", "nvidia",
    "amazon bedrock", "aws", "ibm", "ai21 labs", "zhipu", "moonshot ai",
)
_VERSION = r"\d+(?:\.\d+)*[a-z]*"
#: Model families with an optional version and variant (GPT-4o mini, Claude 3.5 Sonnet, Llama 3.1, o3-mini).
FAMILY = (
    r"(?:(?:chat)?gpt|claude|llama|mistral|mixtral|gemini|gemma|qwen|deepseek|grok|falcon|vicuna|codestral|"
    r"nemotron|olmo|granite|phi|command[\s-]r)"
    rf"(?:[\s-]*{_VERSION})?(?:[\s-]+(?:opus|sonnet|haiku|instant|mini|nano|turbo|pro|flash|plus|{_VERSION}))*"
    r"|o[134](?:-(?:mini|pro|preview))?"
)
_NAME = "(?:" + "|".join(re.escape(v).replace(r"\ ", r"[\s-]") for v in VENDORS) + "|" + FAMILY + ")"
# Who speaks of itself, in a few languages: "I am", "this advisor is", "je suis", "soy", "ich bin".
_APOS = "['\u2019]"
_SELF = (
    rf"\bI(?:{_APOS}m| am| was|{_APOS}ve been| have been)|\b(?:this|the) (?:assistant|advisor|board|bot|agent|ai|"
    rf"chatbot|system)(?:{_APOS}s| is| was| runs| uses)|\bje suis|\bj{_APOS}ai été|\bsoy|\bestoy|\bich bin|"
    r"\bich wurde|\bsono|\bsou"
)
# Words that may stand between "I am" and the name in a statement of what the answer runs on.
_FILLER = (
    r"a|an|the|just|actually|really|basically|simply|only|large|big|language|ai|artificial|intelligence|model|"
    r"assistant|chatbot|bot|llm|version|variant|of|based|built|made|trained|developed|created|powered|designed|"
    r"running|run|on|by|from|with|using|atop|called|named|known|as|top|un|une|modèle|modele|de|du|la|le|langage|"
    r"développé|developpe|créé|cree|entraîné|entraine|conçu|par|basé|base|sur|modelo|lenguaje|desarrollado|creado|"
    r"entrenado|por|basado|en|ein|eine|modell|sprachmodell|von|entwickelt|trainiert|auf|basierend|di|da|sviluppato|"
    r"part|one|member|family|instance|product|version|edition|flavou?r"
)
# "My underlying model is Claude" (not "my financial model assumes Google Ads").
_MINE = (r"\bmy\s+(?:(?:underlying|base|own|core|language|ai|current)\s+){0,2}(?:model|llm|engine|brain|backend|"
         r"maker|creator|developer|provider|vendor|architecture|training)s?\s*(?:is|was|are|comes|came|:|=)")
_GREET = r"(?:(?:hi|hello|hey|sure|yes|ok|okay|well|greetings)[\s,!.]*)?"
_DISCLOSURE = _Lazy(
    rf"(?:(?:{_SELF})[\s,]+(?:(?:{_FILLER})[\s,]+)*{_NAME}(?!\w))"
    rf"|{_MINE}"
    rf"|(?:\bI\s+(?:run|am running|rely|was built|use|am using)\s+on\s+(?:the\s+)?{_NAME}(?!\w))"
    rf"|(?:(?<!\w){_NAME}\s+(?:\w+\s+){{0,2}}?(?:made|built|trained|created|developed|designed|powers|runs)\s+me\b)"
    # "As a Gemini model, I ...", "As ChatGPT I would", "As an AI language model developed by OpenAI, I"
    rf"|(?:(?<!\w)as\s+(?:(?:{_FILLER})[\s,]+)*{_NAME}(?:[\s-]+(?:based\s+)?(?:model|llm|ai|assistant|chatbot|bot))?"
    rf"\s*,?\s*(?:I|I{_APOS}m|I{_APOS}d|I{_APOS}ll|my|me)(?!\w))"
    # "Gemini here, happy to help.", "Sure — Claude Sonnet 4.5 here.", "Claude speaking", "Claude, at your service"
    rf"|(?:(?:^|[\u2014\u2013:]|\s-)\s*{_GREET}(?:{FAMILY})\s*,?\s+(?:here|speaking|at\s+your\s+service|reporting)\b)"
    # "You're talking to Claude.", "This is Gemini speaking.", "My name is Claude", "Being Claude, I"
    rf"|(?:\byou(?:{_APOS}re|\s+are)\s+(?:now\s+|currently\s+)?(?:talking|chatting|speaking|writing|interacting)"
    rf"\s+(?:to|with)\s+(?:(?:{_FILLER})[\s,]+)*{_NAME}(?!\w))"
    rf"|(?:(?:^|[\u2014\u2013:,]|\s-)\s*{_GREET}this\s+is\s+{_NAME}(?!\w)(?=\s*(?:[.!,;:\u2014\u2013-]|$|\s+(?:speaking|"
    rf"here|talking|answering|writing))))"
    rf"|(?:\b(?:my\s+name\s+is|call\s+me|I\s+go\s+by|I\s+identify\s+as|I{_APOS}m\s+called|I\s+am\s+called|"
    rf"speaking\s+as|being)\s+(?:(?:{_FILLER})[\s,]+)*{_NAME}(?!\w))"
    rf"|(?:\b(?:hello|hi|hey|greetings|regards|cheers)\s+from\s+(?:the\s+)?{_NAME}(?!\w))"
    # "Made by Google, I ...", "Built on Claude, this board ..." opening a sentence
    rf"|(?:^\s*{_GREET}(?:made|built|trained|created|developed|designed|powered|running|based)\s+(?:by|on|with|from)"
    rf"\s+(?:the\s+)?{_NAME}(?!\w))",
    re.IGNORECASE,
)
# Words that make a sentence about this answer itself: any vendor or family name in it is withheld.
_SELF_CUE = _Lazy(
    r"\b(?:behind|powering|powers|running|runs|drives)\s+(?:this|these|me|you|the\s+(?:board|answers?|replies|"
    r"advisor|assistant|chat))\b|\bunder\s+the\s+hood\b|\b(?:answering|talking\s+to|chatting\s+with)\s+you\b"
    rf"|\byou(?:{_APOS}re|\s+are)\s+(?:now\s+)?(?:talking|chatting|speaking|interacting|using)\b"
    r"|\bthe\s+(?:assistant|model|ai|bot|engine|llm|system|advisor)\s+(?:you|answering|behind|here|writing|replying)"
    r"\b|\b(?:this|these|my|our)\s+(?:answers?|repl(?:y|ies)|responses?|messages?|words|advice|text|chat|"
    r"conversation)\s+(?:is|are|was|were|comes?|came|runs?)\b|\beverything\s+I\s+(?:say|write|tell)\b"
    r"|\b(?:made|built|trained|created|developed|designed|programmed|engineered)\s+me\b"
    rf"|\b(?:that|this|it)(?:{_APOS}s|\s+is)\s+me\b"
    r"|\bmy\s+(?:creators?|makers?|developers?|trainers?|parent\s+company|training|weights|architecture|family|"
    r"lineage)\b|\b(?:your|this|the)\s+(?:advisor|assistant)\b|\b(?:reporting\s+for\s+duty|at\s+your\s+service)\b",
    re.IGNORECASE,
)
# What makes a sentence treat the answering model's names as the user's topic (only outside self-descriptions).
_TOPIC = _Lazy(
    r"\b(?:compar\w*|vs|versus|than|alternatives?|instead|either|both|switch\w*|migrat\w*|beats?|outperform\w*|"
    r"rivals?|competitors?|use[sd]?|using|pick|choose|try|trying|consider|adopt|integrat\w*|deploy\w*|recommend\w*|"
    r"pay|paying|buy|subscribe|budget|pric\w+|costs?|costing|cheap\w*|expensive|free|tiers?|plans?|subscriptions?|"
    r"tokens?|rate\s+limits?|context\s+window|api|sdk|benchmarks?|releas\w+|launch\w*|announc\w+|raised|acquired|"
    r"outages?|polic(?:y|ies)|features?|sells|resells|offers|charges)\b"
    r"|\bfor\s+(?:your|you|the|a|an|this|that|these|those|each|every|[a-z]+ing)\b"
    r"|\byour\s+(?!advisor|assistant|board|service|question|request|answer|repl|chat|conversation|model|ai\b|helper"
    r"|guide|host)[a-z]",
    re.IGNORECASE,
)
#: The families by their leading word, with the vendors that make them (for :func:`own_names`).
_MAKERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("claude", "claude", ("anthropic",)),
    ("chatgpt|gpt|o[134]", r"(?:chat)?gpt|o[134](?:-(?:mini|pro|preview))?", ("openai", "open ai")),
    ("gemini|gemma", "gemini|gemma", ("google deepmind", "google ai", "google", "deepmind")),
    ("llama", "llama", ("meta ai", "meta")),
    ("mistral|mixtral|codestral", "mistral|mixtral|codestral", ("mistral ai", "mistral")),
    ("qwen", "qwen", ("alibaba cloud", "alibaba")),
    ("deepseek", "deepseek", ()),
    ("grok", "grok", ("xai",)),
    ("phi", "phi", ("microsoft",)),
    ("command", r"command[\s-]r", ("cohere",)),
    ("granite", "granite", ("ibm",)),
    ("nemotron", "nemotron", ("nvidia",)),
)
_VARIANT = rf"(?:[\s-]*{_VERSION})?(?:[\s-]+(?:opus|sonnet|haiku|instant|mini|nano|turbo|pro|flash|plus|{_VERSION}))*"
# A vendor's product named after it ("Google Workspace", "OpenAI's API"): the company as a topic.
_PRODUCT_AFTER = _Lazy(r"^(?:['\u2019]s)?\s+(?:[A-Z][A-Za-z]+|API)\b")
_ANY_NAME = _Lazy(rf"(?<!\w){_NAME}(?!\w)", re.IGNORECASE)
# An assistant telling the user what it cannot do with their things speaks of itself, in the third person too:
# the answering model's name as the subject of a negated seeing, reaching or keeping verb ("Honestly, Claude
# can't see your bank account", "ChatGPT doesn't remember ...") is a self-description whatever topic words follow.
_CANNOT = _Lazy(
    rf"^\s+(?:can{_APOS}?t|cannot|can\s+not|doesn{_APOS}?t|does\s+not|won{_APOS}?t|will\s+not|will\s+never|never"
    rf"|(?:is\s+not|isn{_APOS}t)\s+able\s+to)\s+(?:\w+\s+)?(?:see|access|read|open|browse|remember|store|keep|save"
    r"|share|view|check|log\s+into|recall|retain)\b", re.IGNORECASE)
_BOUNDARY = _Lazy(r"(?<=[.!?;])\s+|\n+")
_ID_LIKE = _Lazy(r"[\d._-]")


def configured_names(models: Iterable[str]) -> tuple[str, ...]:
    """The names of ``models`` (``provider:name`` ids) an answer must never show: each id's name and
    its bare name (after a ``vendor/`` path and before an ``:tag``), when it looks like an id (has a
    digit, dot, dash or underscore: ``acme-brain-7``, not ``main``). The offline model has none."""
    found: dict[str, None] = {}
    for model in models:
        provider, _, name = model.partition(":")
        if provider == "offline" or not name:
            continue
        base = name.rsplit("/", 1)[-1]
        for candidate in (name, base, base.split(":", 1)[0]):
            if len(candidate) >= 3 and _ID_LIKE.search(candidate):
                found[candidate] = None
    return tuple(found)


def disclosure_pattern() -> re.Pattern[str]:
    """What marks a sentence as saying which model or vendor the answer runs on."""
    return _DISCLOSURE.compiled()


def _sentences(text: str) -> Iterable[tuple[int, int]]:
    start = 0
    for boundary in _BOUNDARY.finditer(text):
        yield start, boundary.start()
        start = boundary.end()
    yield start, len(text)


def own_names(model: str) -> re.Pattern[str] | None:
    """The names that give ``model`` (``provider:name``) away: its family ("Claude Sonnet 4.5", "GPT-4o",
    "ChatGPT") and the vendor that makes it ("Anthropic", "OpenAI"), known by the name's leading word (after a
    ``vendor/`` path). None for a model of no known family (``acme-brain-7``, ``offline``)."""
    base = model.partition(":")[2].rsplit("/", 1)[-1].lower()
    for lead, family, vendors in _MAKERS:
        if re.match(rf"(?:{lead})(?![a-z])", base):
            alternatives = [rf"(?:{family}){_VARIANT}", *(re.escape(v).replace(r"\ ", r"[\s-]") for v in vendors)]
            return re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)", re.IGNORECASE)
    return None


def _a_topic(sentence: str, own: re.Pattern[str]) -> bool:
    """Whether ``sentence`` treats the answering model's names (``own``) as the user's topic (module docstring)."""
    if _TOPIC.search(sentence):
        return True
    mine = [m.span() for m in own.finditer(sentence)]
    for m in _ANY_NAME.finditer(sentence):
        if not any(a < m.end() and m.start() < b for a, b in mine):
            return True  # another vendor or family beside it
    for _, end in mine:
        product = _PRODUCT_AFTER.match(sentence[end:])
        if product and not _ANY_NAME.match(sentence[end:].lstrip("'\u2019s ")):
            return True  # "Google Workspace", not "Google Gemini"
    return False


def _scrub_sentence(sentence: str, replacement: str, own: re.Pattern[str] | None) -> tuple[str, list[str]]:
    """``sentence`` with the names it must not show replaced, and those names."""
    if (_DISCLOSURE.search(sentence) or _SELF_CUE.search(sentence)) and _ANY_NAME.search(sentence):
        return _ANY_NAME.sub(replacement, sentence), [m.group(0) for m in _ANY_NAME.finditer(sentence)]
    if own is not None and any(_CANNOT.match(sentence[m.end():]) for m in own.finditer(sentence)):
        return own.sub(replacement, sentence), [m.group(0) for m in own.finditer(sentence)]
    if own is not None and own.search(sentence) and not _a_topic(sentence, own):
        return own.sub(replacement, sentence), [m.group(0) for m in own.finditer(sentence)]
    return sentence, []


def scrub_disclosures(text: str, replacement: str, own: re.Pattern[str] | None = None) -> tuple[str, list[str]]:
    """``text`` with every vendor and model-family name replaced in the sentences that describe the answer
    itself, and the answering model's own names (``own``, see :func:`own_names`) in every sentence that does
    not treat them as the user's topic (see the module docstring); the names replaced."""
    pieces: list[str] = []
    names: list[str] = []
    last = 0
    for start, end in _sentences(text):
        sentence, found = _scrub_sentence(text[start:end], replacement, own)
        if found:
            names.extend(found)
            pieces.append(text[last:start] + sentence)
            last = end
    pieces.append(text[last:])
    return "".join(pieces), names
