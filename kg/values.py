"""Values as the driver returns them, turned into Python's own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def native(value: Any) -> Any:
    """A driver temporal (`neo4j.time.Date`, `DateTime`, ...) as Python's; others as they are."""
    return value.to_native() if hasattr(value, "to_native") else value


def instant(micros: int) -> datetime:
    """An instant a query returned as epoch microseconds (`t.epochSeconds * 1000000 +
    t.microsecond`), as a UTC datetime: exact, and cheap to decode. The driver decodes a
    `DateTime` in pure Python, and the first one of a process imports pytz for its zone
    (~2 ms of a `kg` command)."""
    return EPOCH + timedelta(microseconds=micros)
