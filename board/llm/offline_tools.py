"""The offline model looking something up: a read-only tool the question plainly asks for, called once.

When the question plainly asks for something (:data:`INTENTS`: the time or the date, the last commits,
the files in a folder, a file's text) and the request offers a tool that only reads
(:attr:`board.llm.base.ToolSpec.read_only`) whose name and description fit it, :func:`intent_call` calls
that tool once, with arguments built from its schema (:func:`arguments_for`: a required argument from the
question where it is plain, a timezone or a path; else the schema's default; no call when a required one
cannot be filled; ``sabha tools test`` passes the server's folder for a path). :func:`cited_answer` then
words the answer around the result (an outside tool's quoted data read back line by line), cited as
``[server.tool]`` (:attr:`~board.llm.base.ToolSpec.cite`).

Nothing is hard-coded about a server: the table names what a question asks and the words a fitting
tool's name or description carries. A tool that is not read-only is never called; nothing is called
when nothing fits plainly.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from board.llm.base import ChatMessage, ToolCall, ToolSpec

__all__ = ["CITIES", "INTENTS", "INTENT_PREFIX", "Intent", "arguments_for", "cited_answer", "intent_call", "match",
           "unknown_place"]

#: The id prefix of a call the offline model made on its own (so the answer after it cites the result).
INTENT_PREFIX = "offline-look-"


@dataclass(frozen=True)
class Intent:
    """Something a question may plainly ask for, and how a tool that offers it reads."""

    name: str
    asked: re.Pattern[str]  # the question asks for it
    needs: tuple[str, ...]  # every one of these is in the tool's name or description
    prefers: tuple[str, ...] = ()  # each one found makes a tool a better fit
    avoids: tuple[str, ...] = ()  # each one found makes a tool a worse fit (convert_time for "what time")


INTENTS: tuple[Intent, ...] = (
    Intent("time", re.compile(r"\b(what time|time is it|current time|time now|the time in|what(?:'s| is) "
                              r"(?:the |today'?s )?date|what day is it|today'?s date)\b", re.IGNORECASE),
           needs=("time",), prefers=("current", "now", "get"), avoids=("convert",)),
    Intent("last commit", re.compile(r"\b((?:last|latest|recent|newest) commits?|commit (?:log|history)|git log|"
                                     r"who committed)\b", re.IGNORECASE),
           needs=("log",), prefers=("commit",), avoids=("reflog",)),
    Intent("list files", re.compile(r"\b((?:list|show|which|what) (?:the |all |me )?(?:files|folders|directories)|"
                                    r"what(?:'s| is) in (?:the |this |that )?(?:folder|directory))\b", re.IGNORECASE),
           needs=("list",), prefers=("directory", "files", "dir"), avoids=("tree", "allowed")),
    Intent("read file", re.compile(r"\b((?:read|open|show|print) (?:me )?(?:the )?(?:file|contents? of)|"
                                   r"what(?:'s| is| does) (?:in |written in )?(?:the )?file)\b", re.IGNORECASE),
           needs=("read",), prefers=("file", "text"), avoids=("media", "multiple", "image")),
)

_PATH = re.compile(r"(?<![\w/])((?:~|\.{1,2})?/[^\s\"'`?,;:()]+|[\w.-]+/[\w./-]+|[\w-]+\.[A-Za-z0-9]{1,6})(?![\w/])")
_ZONE = re.compile(r"\b([A-Z][A-Za-z_]+(?:/[A-Za-z_+-]+)+)\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z'_-]*")
#: A place a question names: "in Pune", "for San Francisco" (capitalised words after in / at / for).
_PLACE = re.compile(r"\b(?:in|at|for)\s+([A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*){0,3})")
#: Cities people ask about whose IANA zone is named after another city (the zone database names one city per
#: zone: Pune, Mumbai and Bangalore are Asia/Kolkata). Cities that name a zone (Tokyo, New York) need no row.
CITIES: dict[str, str] = {
    **dict.fromkeys(("pune", "mumbai", "bombay", "delhi", "new delhi", "bangalore", "bengaluru", "chennai", "madras",
                     "hyderabad", "ahmedabad", "jaipur", "lucknow", "goa", "noida", "gurgaon", "gurugram", "india"),
                    "Asia/Kolkata"),
    **dict.fromkeys(("san francisco", "silicon valley", "palo alto", "san jose", "san diego", "seattle", "portland",
                     "las vegas"), "America/Los_Angeles"),
    **dict.fromkeys(("washington", "boston", "philadelphia", "atlanta", "miami", "nyc"), "America/New_York"),
    **dict.fromkeys(("austin", "dallas", "houston"), "America/Chicago"),
    **dict.fromkeys(("munich", "frankfurt", "hamburg", "cologne"), "Europe/Berlin"),
    **dict.fromkeys(("manchester", "edinburgh", "birmingham", "uk"), "Europe/London"),
    "barcelona": "Europe/Madrid", "milan": "Europe/Rome", "geneva": "Europe/Zurich", "abu dhabi": "Asia/Dubai",
    "beijing": "Asia/Shanghai", "shenzhen": "Asia/Shanghai", "tel aviv": "Asia/Jerusalem",
    "lahore": "Asia/Karachi", "osaka": "Asia/Tokyo", "kyoto": "Asia/Tokyo", "canberra": "Australia/Sydney",
    "montreal": "America/Toronto", "ottawa": "America/Toronto", "rio de janeiro": "America/Sao_Paulo",
}


def _words(spec: ToolSpec) -> str:
    return f"{spec.name} {spec.description}".lower().replace("_", " ")


def _fit(intent: Intent, spec: ToolSpec) -> int | None:
    """How well ``spec`` offers ``intent`` (None: not at all)."""
    words = _words(spec)
    if not all(w in words for w in intent.needs):
        return None
    return sum(w in words for w in intent.prefers) - 2 * sum(w in words for w in intent.avoids)


def match(question: str, tools: Sequence[ToolSpec]) -> tuple[Intent, ToolSpec] | None:
    """The intent ``question`` plainly asks for and the read-only tool that fits it best (None: none)."""
    for intent in INTENTS:
        if not intent.asked.search(question):
            continue
        fits = [(score, -i, spec) for i, spec in enumerate(tools)
                if spec.read_only and (score := _fit(intent, spec)) is not None]
        if fits:
            return intent, max(fits, key=lambda f: (f[0], f[1]))[2]
    return None


@functools.lru_cache(maxsize=1)
def _zones() -> dict[str, str]:
    """city (lower case, spaces for underscores) -> IANA zone, from the system's zone database."""
    try:
        from zoneinfo import available_timezones

        names = available_timezones()
    except Exception:  # noqa: BLE001 - no zone database: only names written out in full are understood
        return {}
    return {name.rsplit("/", 1)[-1].replace("_", " ").lower(): name
            for name in sorted(names) if "/" in name and not name.startswith(("Etc/", "SystemV/"))}


def _timezone(question: str) -> str | None:
    """The zone a question names: ``Asia/Tokyo`` written out, UTC / GMT, a city of :data:`CITIES` (Pune, San
    Francisco; any case), or a city a zone is named after, capitalised (Tokyo, New York)."""
    if found := _ZONE.search(question):
        return found.group(1)
    words = _WORD.findall(question)
    if any(w.upper() in ("UTC", "GMT", "Z") for w in words):
        return "UTC"
    zones = _zones()
    for size in (3, 2, 1):
        for start in range(len(words) - size + 1):
            name = " ".join(words[start:start + size]).lower()
            if name in CITIES:
                return CITIES[name]
            if name in zones and (words[start][0].isupper() or size > 1):
                return zones[name]
    return None


def unknown_place(question: str) -> str | None:
    """A place ``question`` names ("in Xanadu") whose timezone is not known (None: none, or it is known)."""
    found = _PLACE.search(question)
    if found is None or _timezone(question) is not None:
        return None
    return found.group(1).rstrip(".")


def _path(question: str) -> str | None:
    found = _PATH.search(question)
    return found.group(1).rstrip(".") if found else None


def _value(name: str, prop: dict[str, Any], question: str, folder: str | None) -> Any:
    """A value for one argument: from the question where it is plain, else the schema's default (a path:
    else ``folder``); None: none."""
    key = name.lower()
    if "timezone" in key or key in ("tz", "zone"):
        return _timezone(question) or prop.get("default") or "UTC"
    if "path" in key or key in ("file", "filename", "repo", "directory", "dir"):
        return _path(question) or prop.get("default") or folder
    if isinstance(prop.get("enum"), list):
        named = [v for v in prop["enum"] if isinstance(v, str) and v.lower() in question.lower()]
        return named[0] if named else prop.get("default")
    return prop.get("default")


def arguments_for(spec: ToolSpec, question: str, *, folder: str | None = None) -> dict[str, Any] | None:
    """The arguments of a call of ``spec`` for ``question``: each required one filled (None: one cannot
    be), the optional ones left to the tool's own defaults. ``folder``: a path the question does not name
    (``sabha tools test``: the folder the server works on)."""
    schema = spec.parameters or {}
    props: dict[str, Any] = schema.get("properties") or {}
    args: dict[str, Any] = {}
    for name in schema.get("required") or []:
        value = _value(str(name), props.get(name) or {}, question, folder)
        if value is None:
            return None
        args[str(name)] = value
    return args


def intent_call(question: str, tools: Sequence[ToolSpec], *, call_id: str) -> ToolCall | None:
    """The one call the offline model makes for ``question`` (None: nothing fits plainly)."""
    found = match(question, tools)
    if found is None:
        return None
    _intent, spec = found
    args = arguments_for(spec, question)
    if args is None:
        return None
    return ToolCall(f"{INTENT_PREFIX}{call_id}", spec.name, args, raw_arguments=json.dumps(args))


def _value_of(content: str) -> tuple[bool, str]:
    """(ok, the result as one short text) from a tool message."""
    try:
        body = json.loads(content)
    except (json.JSONDecodeError, ValueError):
        return True, content
    if not isinstance(body, dict):
        return True, content
    if body.get("ok") is False:
        return False, str(body.get("error") or "it failed")
    result = body.get("result", body)
    if isinstance(result, dict) and isinstance(result.get("quoted_data"), str):  # an outside tool's, quoted
        return True, " ".join(_unquoted(line) for line in result["quoted_data"].splitlines())
    return True, result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _unquoted(line: str) -> str:
    """One line of quoted data (a JSON string) as the text it quotes."""
    try:
        value = json.loads(line)
    except (json.JSONDecodeError, ValueError):
        return line
    return value if isinstance(value, str) else line


def cited_answer(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], *, limit: int = 400) -> str | None:
    """The answer after the offline model's own call: what the tool returned, cited (None: it made none)."""
    if not messages or messages[-1].role != "tool" or not (messages[-1].tool_call_id or "").startswith(INTENT_PREFIX):
        return None
    message = messages[-1]
    spec = next((t for t in tools if t.name == message.name), None)
    cite = f"[{spec.cite}]" if spec is not None and spec.cite else f"[{message.name}]"
    ok, value = _value_of(message.content)
    flat = " ".join(value.split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    if not ok:
        return f"I tried to look it up with {cite}, but it failed: {flat}"
    return f"{_guessed_utc(messages)}I looked it up with {cite}: {flat}"


def _guessed_utc(messages: Sequence[ChatMessage]) -> str:
    """What to say first when the call asked for UTC because the place the question names is not known."""
    call_id = messages[-1].tool_call_id
    asked = next((c for m in reversed(messages) for c in m.tool_calls if c.id == call_id), None)
    question = next((m.content for m in reversed(messages) if m.role == "user"), "")
    place = unknown_place(question)
    if asked is None or place is None or "UTC" not in asked.arguments.values():
        return ""
    return (f"I do not know which timezone {place} is in, so I used UTC (name its zone, e.g. Asia/Kolkata or "
            "America/New_York, for its local time). ")
