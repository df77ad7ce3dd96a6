"""Validation errors in plain words: the field, what is wrong, what to do.

Pydantic's own text names its internals (`function-after[_no_control(), ...]`, union
branches like `ById`, links to errors.pydantic.dev). Nothing of that reaches a caller:
every message the library or the CLI shows about invalid input comes through here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import ValidationError

_FIELD = re.compile(r"^[a-z_][a-z0-9_]*$")
#: Location parts that are pydantic's names for union branches, not fields.
_NOT_FIELDS = frozenset({"str", "int", "float", "bool", "list", "dict", "none", "json"})
_PREFIXES = ("Value error, ", "Assertion failed, ")
#: Pydantic's wording → what a caller can act on.
_WORDING = {
    "missing": "is required",
    "extra_forbidden": "is not a field here; remove it",
    "string_too_short": "must not be empty",
}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input."""

    where: str  # dotted field path, e.g. tripel.0.subjekt ('' for the whole input)
    field: str  # the first field of the path ('' for the whole input)
    kind: str  # pydantic's error type, for mapping to reason codes
    message: str  # what is wrong, in plain words

    def __str__(self) -> str:
        return f"{self.where or 'input'}: {self.message}"


def _path(loc: tuple[int | str, ...]) -> list[str]:
    parts: list[str] = []
    for part in loc:
        if isinstance(part, int):
            parts.append(str(part))
        elif _FIELD.match(part) and part not in _NOT_FIELDS:
            parts.append(part)
    return parts


def _message(kind: str, text: str, ctx: dict[str, object] | None) -> str:
    if kind in _WORDING:
        return _WORDING[kind]
    if kind == "string_too_long" and ctx and "max_length" in ctx:
        return f"is too long (at most {ctx['max_length']} characters)"
    for prefix in _PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix):]
    return text[:1].lower() + text[1:]


def problems(error: ValidationError) -> list[Problem]:
    """The problems of a validation error, one per field (the first branch's reason
    when a value fits none of a union's forms)."""
    found: dict[str, Problem] = {}
    for item in error.errors(include_url=False):
        parts = _path(tuple(item["loc"]))
        where = ".".join(parts)
        if where in found:
            continue
        field = next((p for p in parts if not p.isdigit()), "")
        message = _message(item["type"], item["msg"], item.get("ctx"))
        if item["type"] == "missing" and parts[-1:] == ["herkunft"]:
            from kg.models import HERKUNFT  # (kg.models imports this module)

            message += f": who says so, one of {', '.join(HERKUNFT)} (there is no default)"
        found[where] = Problem(where, field, item["type"], message)
    return list(found.values())


def describe(error: ValidationError, limit: int = 5) -> str:
    """All problems (up to `limit`) as one line."""
    found = problems(error)
    text = "; ".join(str(p) for p in found[:limit])
    if len(found) > limit:
        text += f"; and {len(found) - limit} more"
    return text
