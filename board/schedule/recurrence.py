"""Reading standing work people set in words: ``/every monday 9am brief``, small and strict like
:mod:`board.schedule.dates` (the ``/due`` reader).

A phrase is ``<when> <what> [topic]``: *what* is ``brief``, ``meeting`` or ``roundtable`` (a meeting and
a roundtable need a topic: ``/every other friday roundtable growth ideas for Q1``); *when* is one of

- ``day`` / ``daily``; ``weekday`` / ``weekdays`` (Monday to Friday);
- a weekday (``monday``, ``mon``, ``mondays``); ``other friday`` (every second Friday, from the coming one);
- ``1st of month``, ``15th of the month``, ``last day of month``;
- ``first monday of the month`` (also second, third, fourth), ``last friday`` (of the month);

optionally with a time (``9am``, ``9:30pm``, ``08:30``, ``17:00``, ``at 9am``, ``noon``, ``midnight``; 09:00
when none is given) and a time zone after it as an IANA name (``9am Europe/Berlin``, ``9am UTC``); without
one the times are the board's (``board.timezone``). A leading ``every`` is dropped (``sabha schedule add``).
Anything else is refused with :class:`RecurrenceProblem`, saying what is understood: a standing item runs at
most once a day (``every hour`` is refused: an idle heartbeat is what costs money for nothing), a bare ``9``
(am or pm?), ``CET`` (ambiguous: give an IANA name), the 29th to the 31st (not every month has one: say
``last day of month``).

:meth:`Recurrence.next_after` gives the next moment: the local date and time in the item's zone turned
into UTC (so 09:00 stays 09:00 across a daylight-saving change).
"""

from __future__ import annotations

import json
import re
from calendar import monthrange
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from board.clock import utc
from board.schedule.dates import DateProblem

__all__ = ["EVERY_UNDERSTOOD", "Cadence", "EveryRequest", "Recurrence", "RecurrenceProblem", "StandingKind",
           "read_every"]

#: What a refusal lists as understood.
EVERY_UNDERSTOOD = ("/every monday 9am brief, /every day 8:30 brief, /every weekday 08:00 brief, "
                    "/every other friday roundtable <topic>, /every 1st of month meeting <topic>, "
                    "/every last friday 16:00 meeting <topic> (a time zone may follow the time: 9am Europe/Berlin)")


class RecurrenceProblem(DateProblem):
    """A standing-work phrase that cannot be read; ``str()`` says what is understood."""


class StandingKind(StrEnum):
    """What a standing item does when it is due."""

    BRIEF = "brief"  # what changed since the last one (board.schedule.brief)
    MEETING = "meeting"  # a board meeting on the topic (board.room.standing)
    ROUNDTABLE = "roundtable"  # a roundtable on the topic (board.room.standing)


class Cadence(StrEnum):
    """How often a standing item runs."""

    DAILY = "daily"
    WEEKDAYS = "weekdays"
    WEEKLY = "weekly"
    FORTNIGHTLY = "fortnightly"  # "every other friday": every 14 days from ``anchor``
    MONTHLY = "monthly"  # on ``day`` of each month (-1: its last day)
    MONTHLY_WEEKDAY = "monthly_weekday"  # the ``nth`` ``weekday`` of each month (-1: the last)


_WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_WEEKDAYS = {name: i for i, names in enumerate((("monday", "mon"), ("tuesday", "tue", "tues"),
                                                 ("wednesday", "wed"), ("thursday", "thu", "thurs"),
                                                 ("friday", "fri"), ("saturday", "sat"), ("sunday", "sun")))
             for name in names}
_NTH = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": -1}
_KINDS = {"brief": StandingKind.BRIEF, "briefing": StandingKind.BRIEF, "meeting": StandingKind.MEETING,
          "roundtable": StandingKind.ROUNDTABLE}
_TIME = re.compile(r"^(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$")
_MONTH_DAY = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)?\s+of\s+(?:the\s+|each\s+|every\s+)?month$")
_TOO_OFTEN = re.compile(r"^(?:\d+\s*|an?\s+)?(?:hours?|hourly|minutes?|mins?|seconds?|secs?|half\s+hour)$")
_IANA = re.compile(r"[A-Za-z_]+(?:/[A-Za-z0-9_+\-]+)+")
_ABBREVIATED_ZONE = re.compile(r"^[A-Za-z]{2,5}$")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True)
class Recurrence:
    """When a standing item runs: its cadence, the local time of day, the zone (an IANA name)."""

    cadence: Cadence
    at: time
    zone: str = "UTC"
    weekday: int | None = None  # 0 = Monday (weekly, fortnightly, monthly_weekday)
    day: int | None = None  # 1..28 or -1 (monthly)
    nth: int | None = None  # 1..4 or -1 (monthly_weekday)
    anchor: date | None = None  # the first run's local date (fortnightly)

    def tz(self) -> tzinfo:
        return ZoneInfo(self.zone)

    def matches(self, day: date) -> bool:
        """Whether the item runs on the local ``day``."""
        if self.cadence is Cadence.DAILY:
            return True
        if self.cadence is Cadence.WEEKDAYS:
            return day.weekday() < 5
        if self.cadence is Cadence.WEEKLY:
            return day.weekday() == self.weekday
        if self.cadence is Cadence.FORTNIGHTLY:
            return day.weekday() == self.weekday and self.anchor is not None and (day - self.anchor).days % 14 == 0
        last = monthrange(day.year, day.month)[1]
        if self.cadence is Cadence.MONTHLY:
            return day.day == (last if self.day == -1 else self.day)
        if day.weekday() != self.weekday:
            return False
        return day.day + 7 > last if self.nth == -1 else (day.day - 1) // 7 + 1 == self.nth

    def next_after(self, moment: datetime) -> datetime:
        """The first run strictly after ``moment`` (aware UTC)."""
        moment = utc(moment)
        zone = self.tz()
        day = moment.astimezone(zone).date()
        if self.anchor is not None and day < self.anchor:
            day = self.anchor
        for _ in range(800):  # two years of days covers every cadence
            if self.matches(day):
                at = datetime.combine(day, self.at).replace(tzinfo=zone).astimezone(UTC)
                if at > moment:
                    return at
            day += timedelta(days=1)
        raise RecurrenceProblem(f"{self.said()} never comes")  # unreachable for a rule read_every made

    def said(self) -> str:
        """``every Monday at 09:00 (Europe/Berlin)``."""
        when = f"{self.at:%H:%M} ({self.zone})"
        weekday = _WEEKDAY_NAMES[self.weekday] if self.weekday is not None else ""
        match self.cadence:
            case Cadence.DAILY:
                return f"every day at {when}"
            case Cadence.WEEKDAYS:
                return f"every weekday (Monday to Friday) at {when}"
            case Cadence.WEEKLY:
                return f"every {weekday} at {when}"
            case Cadence.FORTNIGHTLY:
                return f"every other {weekday} at {when}"
            case Cadence.MONTHLY:
                day = "the last day" if self.day == -1 else f"the {_ordinal(self.day or 1)}"
                return f"{day} of every month at {when}"
        nth = {1: "first", 2: "second", 3: "third", 4: "fourth"}.get(self.nth or 1, "last")
        return f"the {nth} {weekday} of every month at {when}"

    def to_json(self) -> str:
        """The rule as stored (``standing_items.rule``)."""
        return json.dumps({"cadence": self.cadence.value, "at": f"{self.at:%H:%M}", "zone": self.zone,
                           "weekday": self.weekday, "day": self.day, "nth": self.nth,
                           "anchor": self.anchor.isoformat() if self.anchor else None}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Recurrence:
        data = json.loads(text)
        hour, minute = (int(x) for x in str(data["at"]).split(":"))
        return cls(Cadence(data["cadence"]), time(hour, minute), str(data.get("zone") or "UTC"),
                   data.get("weekday"), data.get("day"), data.get("nth"),
                   date.fromisoformat(data["anchor"]) if data.get("anchor") else None)


@dataclass(frozen=True)
class EveryRequest:
    """A phrase as read: when, what, and the topic (a meeting's or a roundtable's; a brief's focus, or "")."""

    recurrence: Recurrence
    kind: StandingKind
    topic: str


def _refuse(text: str, why: str) -> RecurrenceProblem:
    return RecurrenceProblem(f"I can't read {text.strip()!r} as standing work: {why}. I understand: "
                             f"{EVERY_UNDERSTOOD}.")


def read_every(text: str, now: datetime, zone: str = "UTC") -> EveryRequest:
    """The standing work ``text`` (what follows ``/every``) asks for, its times in ``zone`` unless it names
    one; :class:`RecurrenceProblem` otherwise (see the module docstring)."""
    words = text.replace(",", " ").split()
    if words and words[0].lower() == "every":
        words = words[1:]
    found = next((i for i, w in enumerate(words) if w.lower() in _KINDS), None)
    if found is None:
        raise _refuse(text, "say what to do: brief, meeting <topic> or roundtable <topic>")
    kind, topic = _KINDS[words[found].lower()], " ".join(words[found + 1:]).strip()
    if kind is not StandingKind.BRIEF and not topic:
        raise _refuse(text, f"a standing {kind.value} needs a topic, e.g. /every monday 9am {kind.value} "
                            "review our burn")
    when = words[:found]
    if not when:
        raise _refuse(text, "say when, e.g. every monday 9am")
    zone_name, when = _zone(when, zone, text)
    at, when = _time(when, text)
    recurrence = _cadence(" ".join(w.lower() for w in when), at, zone_name, text, now)
    return EveryRequest(recurrence, kind, topic)


def _zone(words: list[str], default: str, text: str) -> tuple[str, list[str]]:
    """(the zone the phrase names, or ``default``; the words without it)."""
    last = words[-1]
    if _IANA.fullmatch(last) or last.upper() in ("UTC", "GMT"):
        name = "UTC" if last.upper() in ("UTC", "GMT") else last
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise _refuse(text, f"{last} is not a time zone I know (write an IANA name such as Europe/Berlin "
                                "or Asia/Kolkata)") from exc
        return name, words[:-1]
    if (len(words) > 1 and _ABBREVIATED_ZONE.match(last) and last.isupper() and not _TIME.match(last.lower())
            and last.lower() not in _WEEKDAYS):
        raise _refuse(text, f"{last} is ambiguous as a time zone: write an IANA name such as Europe/Berlin "
                            "(or leave it out for the board's zone)")
    return default, words


def _time(words: list[str], text: str) -> tuple[time, list[str]]:
    """(the time of day at the end of ``words``, or 09:00; the words before it)."""
    lowered = [w.lower() for w in words]
    if lowered and lowered[-1] in ("noon", "midday", "midnight"):
        rest = lowered[:-1][:-1] if len(lowered) > 1 and lowered[-2] == "at" else lowered[:-1]
        return (time(0, 0) if lowered[-1] == "midnight" else time(12, 0)), rest
    for size in (2, 1):  # "9 am", "at 9am", "9am"
        if len(lowered) < size:
            continue
        tail = " ".join(lowered[-size:]).replace(" am", "am").replace(" pm", "pm")
        match = _TIME.match(tail)
        if match is None:
            continue
        rest = lowered[:-size]
        if rest and rest[-1] == "at":
            rest = rest[:-1]
        return _clock(match, tail, text), rest
    return time(9, 0), lowered


def _clock(match: re.Match[str], tail: str, text: str) -> time:
    hour, minute, half = int(match.group(1)), match.group(2), match.group(3)
    if minute is None and half is None:
        raise _refuse(text, f"{tail} is not clear as a time: write 9am, 9pm or 09:00")
    if half:
        if not 1 <= hour <= 12:
            raise _refuse(text, f"{tail} is not a time of day")
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or int(minute or 0) > 59:
        raise _refuse(text, f"{tail} is not a time of day")
    return time(hour, int(minute or 0))


def _cadence(when: str, at: time, zone: str, text: str, now: datetime) -> Recurrence:
    if not when:
        raise _refuse(text, "say which day, e.g. every day 9am or every monday noon")
    if when in ("day", "daily", "everyday", "morning", "day in the morning"):
        return Recurrence(Cadence.DAILY, at, zone)
    if when in ("weekday", "weekdays", "working day", "workday", "business day"):
        return Recurrence(Cadence.WEEKDAYS, at, zone)
    if _TOO_OFTEN.match(when):
        raise _refuse(text, "a standing item runs at most once a day (an idle heartbeat pays for nothing); "
                            "say e.g. every day 9am")
    weekday = _weekday(when)
    if weekday is not None:
        return Recurrence(Cadence.WEEKLY, at, zone, weekday=weekday)
    if when.startswith(("other ", "second ")) and _weekday(when.split(" ", 1)[1]) is not None:
        weekday = _weekday(when.split(" ", 1)[1])
        local = utc(now).astimezone(ZoneInfo(zone))
        ahead = ((weekday or 0) - local.weekday()) % 7
        if ahead == 0 and datetime.combine(local.date(), at).replace(tzinfo=ZoneInfo(zone)) <= local:
            ahead = 7
        return Recurrence(Cadence.FORTNIGHTLY, at, zone, weekday=weekday, anchor=local.date() + timedelta(days=ahead))
    return _monthly(when, at, zone, text)


def _weekday(word: str) -> int | None:
    word = word.removeprefix("week on ").removeprefix("week ")
    return _WEEKDAYS.get(word, _WEEKDAYS.get(word.removesuffix("s")) if word.endswith("s") else None)


def _monthly(when: str, at: time, zone: str, text: str) -> Recurrence:
    if re.fullmatch(r"last\s+day\s+of\s+(?:the\s+|each\s+|every\s+)?month", when):
        return Recurrence(Cadence.MONTHLY, at, zone, day=-1)
    match = _MONTH_DAY.match(when) or re.fullmatch(r"month\s+on\s+the\s+(\d{1,2})(?:st|nd|rd|th)?", when)
    if match:
        day = int(match.group(1))
        if not 1 <= day <= 31:
            raise _refuse(text, f"a month has no day {day}")
        if day > 28:
            raise _refuse(text, f"not every month has a {_ordinal(day)}: say 28th of month or last day of month")
        return Recurrence(Cadence.MONTHLY, at, zone, day=day)
    nth = re.fullmatch(r"(first|1st|second|2nd|third|3rd|fourth|4th|last)\s+([a-z]+)"
                       r"(?:\s+of\s+(?:the\s+|each\s+|every\s+)?month)?", when)
    if nth and _weekday(nth.group(2)) is not None:
        return Recurrence(Cadence.MONTHLY_WEEKDAY, at, zone, weekday=_weekday(nth.group(2)), nth=_NTH[nth.group(1)])
    if when in ("month", "monthly", "week", "weekly", "other week", "fortnight"):
        raise _refuse(text, f"say which day of the {'month' if 'month' in when else 'week'}, e.g. every "
                            f"{'1st of month' if 'month' in when else 'monday'} 9am")
    raise _refuse(text, f"{when!r} is not a day I know")
