"""Reading due dates people write: small and strict, relative to the board's clock.

Understood (case and extra spaces do not matter; a leading ``by``, ``on``, ``due`` or ``until``
is dropped):

- relative: ``+10m``, ``+2h``, ``+3d``, ``+1w``, ``+30s``; ``in 10 minutes``, ``in an hour``,
  ``in two weeks``, ``in 3 days`` (numbers as digits or words up to twelve);
- days: ``today``, ``tonight``, ``tomorrow``, a weekday (``friday``, ``fri``, ``next friday``, ``this
  friday``: the coming one, never today), ``next week`` (its Monday), ``next month`` (its 1st);
- dates: ``2026-12-15``, ``15 Dec``, ``15 December 2026``, ``Dec 15``, ``December 15, 2026`` (a
  date without a year is the next one to come);
- a time after a day or date: ``17:00``, ``at 9:30``, ``5pm``, ``9am``; without one a day means
  :data:`DEFAULT_HOUR` (09:00) in the time zone.

Days and times are read in the owner's time zone (``board.timezone``, default UTC) and the
answer says which. Anything else is refused with :class:`DateProblem`, saying what is
understood: ``soonish``, ``12/11`` (day or month first?), a date in the past, an impossible
date (``2026-02-30``), a moment more than :data:`MAX_AHEAD` (ten years) ahead (``+99999999999d``,
``9999-12-31``: "too far ahead"). Durations for ``/snooze`` (``2h``, ``1d``, ``30m``, ``1 day``) are read by
:func:`parse_duration`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from board.clock import utc

__all__ = ["DEFAULT_HOUR", "LATE_AFTER", "MAX_AHEAD", "UNDERSTOOD", "DateProblem", "When", "describe", "late_by",
           "parse_duration", "parse_when", "span"]

#: The hour a day without a time means (a morning nudge on the day).
DEFAULT_HOUR = 9
#: The farthest ahead a due date, a snooze or a review may be (about ten years).
MAX_AHEAD = timedelta(days=3653)
#: What a refusal lists as understood.
UNDERSTOOD = ("+10m, +2h, +3d, in two weeks, tomorrow, friday, next friday, next week, 2026-12-15, 15 Dec "
              "(optionally with a time: friday 17:00, tomorrow 9am)")

_UNITS = {"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1, "m": 60, "min": 60, "mins": 60, "minute": 60,
          "minutes": 60, "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600, "d": 86400,
          "day": 86400, "days": 86400, "w": 604800, "wk": 604800, "week": 604800, "weeks": 604800}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3}
_WEEKDAYS = {name: i for i, names in enumerate((("monday", "mon"), ("tuesday", "tue", "tues"),
                                                 ("wednesday", "wed"), ("thursday", "thu", "thurs"),
                                                 ("friday", "fri"), ("saturday", "sat"), ("sunday", "sun")))
             for name in names}
_MONTHS = {name: i for i, names in enumerate((("january", "jan"), ("february", "feb"), ("march", "mar"),
                                               ("april", "apr"), ("may",), ("june", "jun"), ("july", "jul"),
                                               ("august", "aug"), ("september", "sep", "sept"),
                                               ("october", "oct"), ("november", "nov"), ("december", "dec")),
                                              start=1) for name in names}
_PLUS = re.compile(r"^\+\s*(\d+(?:\.\d+)?)\s*([a-z]+)$")
_IN = re.compile(r"^in\s+(\d+(?:\.\d+)?|a couple of|a few|[a-z]+)\s+([a-z]+)$")
_TIME = re.compile(r"(?:\s+at)?\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$")
_ISO = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")
_DAY_MONTH = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)?\s+([a-z]+)\.?(?:,?\s+(\d{4}))?$")
_MONTH_DAY = re.compile(r"^([a-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?$")
_NUMERIC = re.compile(r"^\d{1,2}[/.]\d{1,2}(?:[/.]\d{2,4})?$")


class DateProblem(ValueError):
    """A due date that cannot be read (or is in the past); ``str()`` says what is understood."""


@dataclass(frozen=True)
class When:
    """A due moment as read: ``at`` (aware UTC) and how it reads back in the time zone (``said``)."""

    at: datetime
    said: str


def describe(moment: datetime, zone: tzinfo = UTC) -> str:
    """``Fri 2026-11-27 09:00 UTC``: ``moment`` in ``zone``, the zone named."""
    try:
        local = utc(moment).astimezone(zone)
    except OverflowError:  # the edge of the calendar in another zone: say it in UTC
        local, zone = utc(moment), UTC
    name = getattr(zone, "key", None) or local.tzname() or "UTC"
    seconds = f":{local.second:02d}" if local.second else ""
    return f"{local:%a %Y-%m-%d %H:%M}{seconds} {name}"


#: Past its moment by less than this, a thing is on time (a reminder sent at its due moment is not "overdue").
LATE_AFTER = timedelta(minutes=1)


def span(length: timedelta) -> str:
    """``2 days``, ``1 hour``, ``5 minutes``: ``length`` in its largest whole unit (rounded down), in words."""
    seconds = max(0, int(length.total_seconds()))
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{seconds} second{'' if seconds == 1 else 's'}"


def late_by(due: datetime, now: datetime) -> str | None:
    """How long past ``due`` it is at ``now`` in words (``2 days``), or None when it is not late
    (:data:`LATE_AFTER`)."""
    late = utc(now) - utc(due)
    return span(late) if late >= LATE_AFTER else None


def parse_duration(text: str) -> timedelta:
    """``2h``, ``+2h``, ``30m``, ``1 day``, ``in 2 hours``, ``a week``; :class:`DateProblem` otherwise."""
    words = " ".join(text.lower().split()).removeprefix("in ").removeprefix("+").strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?|a couple of|a few|[a-z]+)\s*([a-z]+)", words)
    if match:
        amount = _amount(match.group(1))
        unit = _UNITS.get(match.group(2))
        if amount is not None and unit is not None and amount > 0:
            return _ahead(amount * unit, text)
    raise DateProblem(f"I can't read {text.strip()!r} as a length of time; write e.g. 30m, 2h, 1d, 1w or "
                      "\"2 hours\"")


def _ahead(seconds: float, text: str, end: str = "") -> timedelta:
    """``seconds`` as a length of time; :class:`DateProblem` (its text ending in ``end``) when it is
    more than :data:`MAX_AHEAD`."""
    if seconds > MAX_AHEAD.total_seconds():
        raise DateProblem(f"{text.strip()!r} is too far ahead: give at most ten years{end}")
    return timedelta(seconds=seconds)


def _amount(word: str) -> float | None:
    if re.fullmatch(r"\d+(?:\.\d+)?", word):
        return float(word)
    return _NUMBERS.get(word)


def parse_when(text: str, now: datetime, zone: tzinfo = UTC) -> When:
    """The moment ``text`` names, read at ``now`` in ``zone``; see the module docstring."""
    words = " ".join(text.lower().replace(",", ", ").split()).replace(" ,", ",")
    for prefix in ("by ", "on ", "due ", "until ", "till "):
        words = words.removeprefix(prefix)
    if not words:
        raise DateProblem(f"Give a date or a time, e.g. {UNDERSTOOD}.")
    now = utc(now)
    relative = _relative(words)
    if relative is not None:
        at = now + relative
    else:
        try:
            at = _absolute(words, text, now, zone)
        except OverflowError as exc:  # the edge of the calendar (9999-12-31 west of UTC)
            raise DateProblem(f"{text.strip()!r} is out of range: give a moment within the next ten years.") from exc
        if at - now > MAX_AHEAD:
            raise DateProblem(f"{text.strip()!r} is too far ahead: give at most ten years.")
        if at <= now:
            raise DateProblem(f"{text.strip()!r} is {describe(at, zone)}, which has passed (it is now "
                              f"{describe(now, zone)}); give a moment still to come.")
    return When(at, describe(at, zone))


def _relative(words: str) -> timedelta | None:
    match = _PLUS.match(words) or _IN.match(words)
    if match is None:
        return None
    amount, unit = _amount(match.group(1)), _UNITS.get(match.group(2))
    if amount is None or unit is None or amount <= 0:
        return None
    return _ahead(amount * unit, words, ".")


def _split_time(words: str, original: str) -> tuple[str, time | None]:
    """(the day part, the time of day or None) of ``friday 17:00`` / ``tomorrow at 9am``."""
    match = _TIME.search(words)
    if match is None or (match.group(2) is None and match.group(3) is None):  # "15 dec 2026": a year, not a time
        return words, None
    hour, minute = int(match.group(1)), int(match.group(2) or 0)
    if match.group(3):
        if not 1 <= hour <= 12:
            raise DateProblem(f"{original.strip()!r}: {hour}{match.group(3)} is not a time of day")
        hour = hour % 12 + (12 if match.group(3) == "pm" else 0)
    if hour > 23 or minute > 59:
        raise DateProblem(f"{original.strip()!r}: {match.group(0).strip()} is not a time of day")
    return words[: match.start()].strip(), time(hour, minute)


def _absolute(words: str, original: str, now: datetime, zone: tzinfo) -> datetime:
    rest, at_time = _split_time(words, original)
    today = now.astimezone(zone).date()
    day = _day(rest, original, today) if rest else today if at_time is not None else None
    if day is None:
        raise DateProblem(f"I can't read {original.strip()!r} as a date. I understand: {UNDERSTOOD}.")
    if rest == "tonight" and at_time is None:
        at_time = time(20, 0)
    moment = datetime.combine(day, at_time or time(DEFAULT_HOUR, 0)).replace(tzinfo=zone)
    if at_time is not None and rest in ("", "today") and moment <= now:
        raise DateProblem(f"{original.strip()!r} today has passed (it is now {describe(now, zone)}); "
                          "say tomorrow, or give a date.")
    return moment.astimezone(UTC)


def _day(rest: str, original: str, today: date) -> date | None:
    if rest in ("today", "tonight"):
        return today
    if rest == "tomorrow":
        return today + timedelta(days=1)
    if rest == "next week":
        return today + timedelta(days=7 - today.weekday())
    if rest == "next month":
        return date(today.year + today.month // 12, today.month % 12 + 1, 1)
    weekday = _weekday(rest)
    if weekday is not None:
        ahead = (weekday - today.weekday()) % 7 or 7
        return today + timedelta(days=ahead)
    if _NUMERIC.match(rest):
        raise DateProblem(f"{original.strip()!r} is ambiguous (day or month first?); write it as YYYY-MM-DD "
                          "or with the month's name (15 Dec).")
    return _calendar_date(rest, original, today)


def _weekday(rest: str) -> int | None:
    for prefix in ("next ", "this ", "coming ", "this coming ", ""):
        if rest.startswith(prefix) and rest[len(prefix):] in _WEEKDAYS:
            return _WEEKDAYS[rest[len(prefix):]]
    return None


def _calendar_date(rest: str, original: str, today: date) -> date | None:
    iso = _ISO.match(rest)
    if iso:
        return _date(int(iso.group(1)), int(iso.group(2)), int(iso.group(3)), original)
    for pattern, day_first in ((_DAY_MONTH, True), (_MONTH_DAY, False)):
        match = pattern.match(rest)
        if match is None:
            continue
        day_word, month_word = (match.group(1), match.group(2)) if day_first else (match.group(2), match.group(1))
        month = _MONTHS.get(month_word)
        if month is None:
            return None
        if match.group(3):
            return _date(int(match.group(3)), month, int(day_word), original)
        found = _date(today.year, month, int(day_word), original)
        return found if found > today else _date(today.year + 1, month, int(day_word), original)
    return None


def _date(year: int, month: int, day: int, original: str) -> date:
    try:
        return date(year, month, day)
    except ValueError as exc:
        raise DateProblem(f"{original.strip()!r} is not a date on the calendar ({exc}).") from exc
