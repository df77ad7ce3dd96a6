"""Values as the driver returns them, turned into Python's own."""

from __future__ import annotations

from typing import Any


def native(value: Any) -> Any:
    """A driver temporal (`neo4j.time.Date`, `DateTime`, ...) as Python's; others as they are."""
    return value.to_native() if hasattr(value, "to_native") else value
