"""The calendar the oracles' replays were written in, moved to the month they run in.

The store's system time is its own (docs/time.md): a test cannot set the clock, and a
value told "today" begins at the store's instant. The replays of the reference models
tell values today beside fixed days, and were written in December 2026: a month event
"in December" placed a value told today inside its window, a value "from 24 December"
began after it. Run a month later, the same fixed days told another story: a strict
xfail passed (failing CI), and replays that pin a fix tested something else.

So every fixed day of those modules is written as in December 2026 and moved here by
whole months to the month of the store's clock (UTC, when the tests start): each day
keeps its day of the month (the last day of a shorter month where there is none), and
each month window holds what it held. What still moves is the day of the month of
"today" itself: `today_between` skips a replay whose story needs it in a range.
"""

from __future__ import annotations

from calendar import monthrange
from datetime import UTC, date, datetime

import pytest

#: The month the replays were written in: (year, month).
WRITTEN_IN = (2026, 12)


def _months_since_written(now: datetime) -> int:
    return (now.year - WRITTEN_IN[0]) * 12 + now.month - WRITTEN_IN[1]


#: Whole months from the month the replays were written in to the month of this run.
SHIFT = _months_since_written(datetime.now(UTC))


def on(year: int, month: int, day: int, shift: int | None = None) -> date:
    """The day `year-month-day` of the written calendar, in this run's calendar."""
    y, m = divmod(year * 12 + month - 1 + (SHIFT if shift is None else shift), 12)
    return date(y, m + 1, min(day, monthrange(y, m + 1)[1]))


def at(year: int, month: int, day: int, hour: int = 0, minute: int = 0,
       shift: int | None = None) -> datetime:
    """The instant `year-month-day hour:minute` (UTC) of the written calendar, in this
    run's calendar."""
    d = on(year, month, day, shift)
    return datetime(d.year, d.month, d.day, hour, minute, tzinfo=UTC)


def today_between(first: int, last: int, why: str) -> None:
    """Skip unless today's day of the month (UTC) is from `first` to `last`: a replay
    that tells values today beside fixed days of this month tells its story only then."""
    today = datetime.now(UTC).day
    if not first <= today <= last:
        pytest.skip(f"the replay tells values today {why}: its story holds on days "
                    f"{first}-{last} of a month, and today is day {today}")
