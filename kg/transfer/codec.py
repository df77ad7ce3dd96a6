"""The exact text forms of Neo4j's DateTime and Date, and which record fields hold them."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import Annotated, Any, get_args

import pytz  # type: ignore[import-untyped]  # the driver's own time zone library
from pydantic import AfterValidator, BaseModel

_DATETIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
    r"(Z|[+-]\d{2}:\d{2}(?::\d{2})?)(?:\[([A-Za-z0-9_+\-/]+)\])?$"
)
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


def _offset(text: str) -> timedelta:
    """`Z`, `+01:00` or `-03:30:15` as a timedelta east of UTC."""
    if text == "Z":
        return timedelta(0)
    parts = [int(p) for p in text[1:].split(":")]
    offset = timedelta(hours=parts[0], minutes=parts[1],
                       seconds=parts[2] if len(parts) > 2 else 0)
    return -offset if text[0] == "-" else offset


def _offset_text(offset: timedelta) -> str:
    seconds = int(offset.total_seconds())
    if seconds == 0:
        return "Z"
    sign = "+" if seconds > 0 else "-"
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}{hours:02d}:{minutes:02d}" + (f":{secs:02d}" if secs else "")


@functools.lru_cache(maxsize=65536)  # an order's facts share their timestamps
def canonical_datetime(text: str) -> str:
    """Check a datetime text and give its one canonical form; ValueError otherwise.

    Import sends this text to the server, which turns it into a DateTime with
    `datetime()`: exact to the nanosecond, with its offset or zone.
    """
    m = _DATETIME.match(text)
    if not m:
        raise ValueError(
            f"{text!r} is not an ISO datetime with offset, e.g. 2026-11-29T18:00:00Z"
        )
    year, month, day, hour, minute = (int(g) for g in m.groups()[:5])
    second = int(m.group(6) or 0)
    local = datetime(year, month, day, hour, minute, second)  # ValueError when out of range
    fraction = (m.group(7) or "").rstrip("0")
    off, zone = m.group(8), m.group(9)
    offset = _offset(off)
    if offset >= timedelta(hours=18) or offset <= -timedelta(hours=18):
        raise ValueError(f"{text!r}: offset {off} is out of range")
    if offset.total_seconds() % 60:
        # Neo4j's datetime() parses no offset with seconds: such a file passed this check
        # and failed on the server's words, exit 1 (a stranger's attack).
        raise ValueError(f"{text!r}: offset {off} has seconds; Neo4j takes an offset in "
                         "hours and minutes, e.g. +01:00")
    try:
        local - offset  # the instant in UTC, where the store compares it
    except OverflowError:
        raise ValueError(f"{text!r} lies outside the years 1-9999 once converted to UTC") from None
    if zone:
        try:
            tz = pytz.timezone(zone)
        except pytz.UnknownTimeZoneError:
            raise ValueError(f"{text!r}: unknown time zone {zone!r}") from None
        held = [tz.normalize(tz.localize(local, is_dst=dst)) for dst in (False, True)]
        if not any(h.utcoffset() == offset and h.replace(tzinfo=None) == local for h in held):
            raise ValueError(f"{text!r}: that time with offset {off} does not exist in {zone}")
    return (local.isoformat() + (f".{fraction}" if fraction else "") + _offset_text(offset)
            + (f"[{zone}]" if zone else ""))


def instant(text: str) -> datetime:
    """The instant of a datetime text in `canonical_datetime`'s form (checked already:
    the record models check every one), aware, in its offset. A `[Zone]` after the
    offset names where it was told and agrees with the offset, so the instant needs only
    the offset (`datetime.fromisoformat` reads no zone); digits past the microsecond are
    dropped, as Python holds no more."""
    return datetime.fromisoformat(text.partition("[")[0])


def canonical_date(text: str) -> str:
    m = _DATE.match(text)
    if not m:
        raise ValueError(f"{text!r} is not a date YYYY-MM-DD")
    return date(*(int(g) for g in m.groups())).isoformat()


class _Kind:
    """Marks a field whose text becomes a Neo4j temporal value on import."""

    def __init__(self, name: str) -> None:
        self.name = name


ZEIT, TAG = _Kind("datetime"), _Kind("date")
Zeit = Annotated[str, AfterValidator(canonical_datetime), ZEIT]
Tag = Annotated[str, AfterValidator(canonical_date), TAG]


def _find_marker(metadata: Iterable[Any], annotation: Any) -> _Kind | None:
    for m in [*metadata, *getattr(annotation, "__metadata__", ())]:
        if isinstance(m, _Kind):
            return m
    for arg in get_args(annotation):
        found = _find_marker((), arg)
        if found is not None:
            return found
    return None


@functools.cache
def temporal_fields(cls: type[BaseModel]) -> dict[str, _Kind | None]:
    """Each field of a record class → ZEIT, TAG or None (also inside `Zeit | None`)."""
    return {name: _find_marker(f.metadata, f.annotation) for name, f in cls.model_fields.items()}
