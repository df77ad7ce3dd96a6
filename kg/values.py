"""Values as the driver returns them, turned into Python's own."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from neo4j.time import Date, DateTime

from kg.errors import StoredDataError

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def native(value: Any) -> Any:
    """A driver temporal (`neo4j.time.Date`, `DateTime`, ...) as Python's; others as they are."""
    return value.to_native() if hasattr(value, "to_native") else value


def stored_day(value: Any, kind: str, ident: object, prop: str) -> date:
    """A stored day (a driver `Date`) as Python's (a Python date as it is: the pure
    tests' rows). Anything else, or none, was stored outside the library: a
    StoredDataError that names `kind` `ident` and `prop`."""
    if isinstance(value, Date):
        return value.to_native()
    if type(value) is date:
        return value
    raise StoredDataError.of(kind, ident, prop, value, None if value is None else "not a date")


def stored_instant(value: Any, kind: str, ident: object, prop: str) -> datetime | None:
    """A stored instant (a driver `DateTime` with a zone) as an aware UTC datetime; None
    stays None. Anything else (text, a local datetime) was stored outside the library: a
    StoredDataError that names `kind` `ident` and `prop`."""
    if value is None:
        return None
    native = value.to_native() if isinstance(value, DateTime) else value
    if isinstance(native, datetime) and native.tzinfo is not None:
        return native.astimezone(UTC)
    raise StoredDataError.of(kind, ident, prop, value, "not a datetime with a zone")


def instant(micros: int) -> datetime:
    """An instant a query returned as epoch microseconds (`t.epochSeconds * 1000000 +
    t.microsecond`), as a UTC datetime: exact, and cheap to decode. The driver decodes a
    `DateTime` in pure Python, and the first one of a process imports pytz for its zone
    (~2 ms of a `kg` command)."""
    return EPOCH + timedelta(0, 0, micros)  # (positional: a third faster than by keyword)
