"""The calendar the oracles' replays are written in (`tests/scenario_days.py`): pure."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from tests import scenario_days
from tests.scenario_days import at, on, today_between


def test_days_move_by_whole_months_and_keep_their_day() -> None:
    assert on(2026, 12, 24, shift=0) == date(2026, 12, 24)
    assert on(2026, 12, 24, shift=1) == date(2027, 1, 24)
    assert on(2026, 11, 28, shift=1) == date(2026, 12, 28)
    assert on(2025, 3, 29, shift=-4) == date(2024, 11, 29)
    assert on(2026, 1, 20, shift=25) == date(2028, 2, 20)
    assert at(2026, 12, 1, 13, shift=13) == datetime(2028, 1, 1, 13, tzinfo=UTC)


def test_a_day_a_shorter_month_lacks_is_its_last_day() -> None:
    assert on(2026, 12, 31, shift=2) == date(2027, 2, 28)
    assert on(2026, 12, 31, shift=14) == date(2028, 2, 29)  # a leap year
    assert on(2026, 12, 30, shift=4) == date(2027, 4, 30)


def test_the_shift_is_the_months_from_the_written_month_to_now() -> None:
    now = datetime.now(UTC)
    assert on(*scenario_days.WRITTEN_IN, 1) == date(now.year, now.month, 1)


def test_a_story_outside_its_days_of_the_month_is_skipped_with_the_reason() -> None:
    today = datetime.now(UTC).day
    today_between(today, today, "anything")  # inside: nothing happens
    with pytest.raises(pytest.skip.Exception, match=f"today is day {today}"):
        today_between(today + 1, today + 1, "beside the 1st")
