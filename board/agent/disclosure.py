"""What says which model is behind an answer (seed 001: "never reveal the model").

Owns :func:`configured_names` (the configured model ids and their bare names, the ones an answer
must never show) and :func:`disclosure_pattern` / :func:`scrub_disclosures` (vendor and model-family
names in a sentence where the answer says what it is, runs on or was made by).

A vendor or family name is a disclosure only there: "I'm GPT-4o by OpenAI", "I am a model trained by
Anthropic", "this advisor is built on Gemini", "my underlying model is Claude", "as a Gemini model,
I ...", "Gemini here, ...", "je suis un modèle développé par Mistral AI". The same names as the
user's topic ("OpenAI's pricing for your support bot", "compare Claude and Gemini for your app")
are left alone, the configured model's own family included. A configured model id as written
(``gemini-2.0-flash``, ``acme-brain-7``) is no topic anyone else brings up, so
:func:`configured_names` are scrubbed wherever they appear.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["FAMILY", "VENDORS", "configured_names", "disclosure_pattern", "scrub_disclosures"]

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
    r"entrenado|por|basado|en|ein|eine|modell|sprachmodell|von|entwickelt|trainiert|auf|basierend|di|da|sviluppato"
)
# "My underlying model is Claude" (not "my financial model assumes Google Ads").
_MINE = (r"\bmy\s+(?:(?:underlying|base|own|core|language|ai|current)\s+){0,2}(?:model|llm|engine|brain|backend|"
         r"maker|creator|developer|provider|vendor|architecture|training)s?\s*(?:is|was|are|comes|came|:|=)")
_DISCLOSURE = re.compile(
    rf"(?:(?:{_SELF})[\s,]+(?:(?:{_FILLER})[\s,]+)*{_NAME}(?!\w))"
    rf"|{_MINE}"
    rf"|(?:\bI\s+(?:run|am running|rely|was built)\s+on\s+(?:the\s+)?{_NAME}(?!\w))"
    rf"|(?:(?<!\w){_NAME}\s+(?:\w+\s+){{0,2}}?(?:made|built|trained|created|developed|designed|powers|runs)\s+me\b)"
    # "As a Gemini model, I ...", "As Claude, I would ..." (not "as Gemini gets cheaper")
    rf"|(?:(?<!\w)as\s+(?:an?\s+)?{_NAME}(?:[\s-]+(?:based\s+)?(?:model|llm|ai|assistant|chatbot|bot))?\s*,\s*"
    rf"(?:I|I{_APOS}m|I{_APOS}d|I{_APOS}ll|my|me)(?!\w))"
    # "Gemini here, happy to help." opening a sentence (a family: "Anthropic here" may be its people speaking)
    rf"|(?:^\s*(?:{FAMILY})\s+here\s*[,!.:\u2014-])",
    re.IGNORECASE,
)
_ANY_NAME = re.compile(rf"(?<!\w){_NAME}(?!\w)", re.IGNORECASE)
_BOUNDARY = re.compile(r"(?<=[.!?;])\s+|\n+")
_ID_LIKE = re.compile(r"[\d._-]")


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
    return _DISCLOSURE


def _sentences(text: str) -> Iterable[tuple[int, int]]:
    start = 0
    for boundary in _BOUNDARY.finditer(text):
        yield start, boundary.start()
        start = boundary.end()
    yield start, len(text)


def scrub_disclosures(text: str, replacement: str) -> tuple[str, list[str]]:
    """``text`` with every vendor and model-family name replaced in the sentences that disclose the
    model (see the module docstring), and the names replaced; other sentences are untouched."""
    pieces: list[str] = []
    names: list[str] = []
    last = 0
    for start, end in _sentences(text):
        sentence = text[start:end]
        if _DISCLOSURE.search(sentence) and _ANY_NAME.search(sentence):
            names.extend(m.group(0) for m in _ANY_NAME.finditer(sentence))
            pieces.append(text[last:start] + _ANY_NAME.sub(replacement, sentence))
            last = end
    pieces.append(text[last:])
    return "".join(pieces), names
