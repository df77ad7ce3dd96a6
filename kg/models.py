"""Pydantic models in and out of the library: orders, results, entities.

Inputs are validated here before any Cypher is built. Values are frozen.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from datetime import UTC, date, datetime, time
from functools import cache, lru_cache
from typing import Annotated, Any, Literal, NamedTuple, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    GetJsonSchemaHandler,
    StringConstraints,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from kg.canon import Typ
from kg.errors import InvalidInput, StoredDataError
from kg.plain import describe

Herkunft = Literal["mensch", "nova", "modell", "recherche"]
HERKUNFT: tuple[str, ...] = ("mensch", "nova", "modell", "recherche")

MAX_NAME = 200
MAX_WERT = 2000
MAX_ID = 200


#: Line and paragraph separators (U+2028, U+2029; NEL U+0085 is a control character):
#: they would start a new line in the prompt text that the chat model reads.
LINE_SEPARATORS = frozenset("\u2028\u2029")
#: The bidi controls (embeddings, overrides, isolates, marks): they reorder what a
#: reader sees without changing the text.
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


class DuplicateKey(ValueError):
    """A JSON object that names a key twice."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`json.loads`'s object_pairs_hook: an object with a key twice is refused, where
    JSON parsers differ on which one counts (Python's takes the last, silently: an order
    with "auftrag_id" twice was written under the second)."""
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise DuplicateKey(f"the key {key!r} is given twice in one object")
        seen.add(key)
    raise AssertionError("unreachable: fewer keys than pairs means one repeats")


def normalize_text(text: str) -> str:
    """A name, value or id as written: line separators become a space, bidi controls go,
    whitespace is stripped at the ends (what the validators store)."""
    if any(c in LINE_SEPARATORS or c in BIDI_CONTROLS for c in text):
        text = "".join(
            " " if c in LINE_SEPARATORS else c for c in text if c not in BIDI_CONTROLS
        )
    return text.strip()


def _no_control(text: str) -> str:
    """Names, values and ids at write time (`normalize_text`); control characters are
    refused."""
    if any(c in LINE_SEPARATORS or c in BIDI_CONTROLS for c in text):
        text = normalize_text(text)
        if not text:
            raise ValueError("is empty once line separators and bidi controls are removed")
    bad = [c for c in text if unicodedata.category(c) in ("Cc", "Cs")]
    if bad:
        raise ValueError(
            f"contains control characters ({', '.join(repr(c) for c in bad[:3])}); remove them"
        )
    return text


def one_line(text: str) -> str:
    """Text that stays on its line: every line break, separator or control character
    becomes a space and bidi controls go (for data written before the validators did
    this; `str.splitlines` is the measure of what breaks a line)."""
    if text.isprintable() and len(text.splitlines()) <= 1:
        return text
    return "".join(
        " " if (unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp")) else c
        for c in text
        if c not in BIDI_CONTROLS
    )


#: How much longer than its bound a name or value may arrive: its bound counts what is
#: stored (without what shows as nothing, a value composed), so "Jürgen" with a
#: variation selector fits where "Jürgen" does; this bounds the rest.
RAW = 10


class StoredBound(NamedTuple):
    """The bound of a text as stored, which a validator holds it to (pydantic ignores
    this mark; `kg check`'s bounds are read from it, as from a plain `max_length`)."""

    max_length: int
    min_length: int = 1


def too_long(n: int, limit: int, how: str) -> PydanticCustomError:
    """A text over its bound, as pydantic's own `string_too_long` (the reason codes
    name_zu_lang and wert_zu_lang read that type)."""
    return PydanticCustomError(
        "string_too_long", "is too long: {n} characters{how}; at most {limit} characters fit",
        {"n": n, "how": how, "limit": limit},
    )


def raw_bound(limit: int) -> AfterValidator:
    """A text within RAW times its bound `limit` as given (another validator holds it to
    the bound as stored: `_name_fits`, `_still_short`); checked before any work on it."""

    def fits(text: str) -> str:
        if len(text) > RAW * limit:
            raise too_long(len(text), limit, "")
        return text

    return AfterValidator(fits)


def _name_fits(text: str) -> str:
    """An entity's name fits its bound as stored (`clean_name`), however many invisible
    characters it arrived with; measured once `_no_control` has made it the text the
    planner cleans."""
    if len(text) > MAX_NAME and (n := len(clean_name(text))) > MAX_NAME:
        raise too_long(n, MAX_NAME, " without invisible ones")
    return text


#: An entity's name as given (stored as `clean_name` makes it).
Name = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1),
    StoredBound(MAX_NAME),
    raw_bound(MAX_NAME),
    AfterValidator(_no_control),
    AfterValidator(_name_fits),
]
#: A timeline entry's title: stored as given.
Titel = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NAME),
    AfterValidator(_no_control),
]
@lru_cache(maxsize=4096)
def clean_value(text: str) -> str:
    """A value as stored: composed (NFC), without what shows as nothing (`strip_format`),
    outer whitespace stripped. "Ärztin" typed decomposed (A and U+0308, as macOS sends
    it) or with a zero-width space in it is stored as "Ärztin"."""
    return unicodedata.normalize("NFC", strip_format(text)).strip()


@lru_cache(maxsize=4096)
def value_key(text: str) -> str:
    """A value as compared: as stored (`clean_value`), in lower case. "Schach",
    "schach" and "SCHACH" are one hobby, and "ärztin" no change of job from "Ärztin".
    Lower case (`str.lower`), not case folding: the order's state query finds a value
    by Cypher's `toLower`, which does not fold "ß" to "ss". Neo4j's Java lowers by an
    older Unicode and leaves about 40 letters added in Unicode 14 as they are (U+A7D0,
    Vithkuqi): a value with one is found as written, and in another case is another
    value. Inner spacing still counts."""
    return clean_value(text).lower()


def _still_short(text: str) -> str:
    """Composed, a value can grow (U+0958 is one character decomposed into two): it must
    still fit, or no export could carry it."""
    if len(text) > MAX_WERT:
        raise too_long(len(text), MAX_WERT, " once composed (NFC) and without invisible ones")
    return text


def _visible(text: str) -> str:
    """A value someone can read: not made of what shows as nothing alone (a zero-width
    space would show as „​“, an empty value)."""
    if not strip_format(text).strip():
        raise ValueError("is empty once invisible characters (e.g. U+200B) are removed")
    return text


Wert = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_WERT),
    AfterValidator(_no_control),
]
#: A value to write: one a person can read, stored as `clean_value` makes it. (A stored
#: value that is not, from before these rules, can still be named by a correction,
#: exported and imported as `Wert`.)
NeuerWert = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1),
    StoredBound(MAX_WERT),
    raw_bound(MAX_WERT),
    AfterValidator(_no_control),
    AfterValidator(_visible), AfterValidator(clean_value), AfterValidator(_still_short),
]
Ident = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_ID),
    AfterValidator(_no_control),
]



@cache
def _ident_adapter() -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(Ident)


def ident(value: object, name: str) -> str:
    """An id given outside a model (a user's or a character's, to any call of the
    library), held to the rule of every id in an order (outer whitespace stripped, no
    control characters): InvalidInput says what is wrong. Every surface reads its ids
    through it: " u1 " names the same user in a read as in a write."""
    from kg.plain import problems

    try:
        return str(_ident_adapter().validate_python(value))
    except ValidationError as exc:
        raise InvalidInput(f"{name} {str(value)[:60]!r}: {problems(exc)[0].message}") from None


def pair_ids(user_id: object, character_id: object) -> tuple[str, str]:
    """A pair's two ids, each as `ident` reads it."""
    return ident(user_id, "user_id"), ident(character_id, "character_id")


def user_scope(user_id: object, character_id: object | None) -> tuple[str, str | None]:
    """A user's id, and a character's where one is given (a whole user's export, purge or
    audit names none), each as `ident` reads it."""
    character = None if character_id is None else ident(character_id, "character_id")
    return ident(user_id, "user_id"), character

#: The code points Unicode says to show as nothing that are not format characters (Cf):
#: Default_Ignorable_Code_Point of DerivedCoreProperties.txt (Unicode 15.1) is Cf, these,
#: and less than Cf (whitespace, which no name holds inside unseen, and a few Cf that do
#: show: the prepended concatenation marks, the interlinear annotation and Egyptian
#: format controls, which go as Cf anyway). Python's `unicodedata` does not carry the
#: property, so the ranges are written out: the combining grapheme joiner, the Hangul
#: fillers, the Khmer inherent vowels, the variation selectors (Mongolian, U+FE00-FE0F,
#: U+E0100-E01EF) and the code points reserved as ignorable. The Braille blank (U+2800,
#: a cell of no dots) is no such character but shows as a space, and is read as one.
IGNORABLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180D),
    (0x180F, 0x180F), (0x2065, 0x2065), (0x3164, 0x3164), (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0xE0000, 0xE0FFF),
)
#: The ranges but the last as a set (the last, 4,096 code points, is compared: building
#: it as a set cost half a millisecond of every command's start).
_IGNORABLE = frozenset(chr(i) for lo, hi in IGNORABLE_RANGES[:-1] for i in range(lo, hi + 1))
_TAGS = chr(IGNORABLE_RANGES[-1][0]), chr(IGNORABLE_RANGES[-1][1])
BRAILLE_BLANK = "\u2800"


def invisible(c: str) -> bool:
    """Whether the character `c` shows as nothing: a format character (Unicode category
    Cf) or another default-ignorable code point (`IGNORABLE_RANGES`)."""
    return (c in _IGNORABLE or _TAGS[0] <= c <= _TAGS[1]
            or unicodedata.category(c) == "Cf")


#: `invisible` as a Java regular expression's character class, for the check's Cypher
#: (Neo4j's Java knows Cf, not Default_Ignorable_Code_Point). Not the Braille blank,
#: which the writer reads as a space.
INVISIBLE_CLASS = "[\\p{Cf}" + "".join(
    f"\\x{{{lo:X}}}" + (f"-\\x{{{hi:X}}}" if hi > lo else "") for lo, hi in IGNORABLE_RANGES
) + "]"


def shown(text: str) -> str:
    """`text` quoted for a person to read, as `repr` does, with what shows as nothing
    (and the Braille blank) written as its escape: `'Jürgen\\ufe0f'`, not a second
    `'Jürgen'` that looks the same."""
    def escaped(c: str) -> str:
        if not (invisible(c) or c == BRAILLE_BLANK):
            return c
        return f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}"

    return "".join(escaped(c) for c in repr(text))


#: Invisible characters that make an emoji what it is, kept where they do: the zero-width
#: joiner between two pictographs (👨‍👩‍👧 is one family, 👨👩👧 three people), and the tag
#: characters of a flag's tag sequence after the black flag (🏴 with the tags "gbsct" and
#: the cancel tag is Scotland's, with "gbwls" Wales'; without them a black flag).
ZWJ = "\u200d"
BLACK_FLAG = "\U0001f3f4"
TAG_FIRST, TAG_LAST, CANCEL_TAG = "\U000e0020", "\U000e007e", "\U000e007f"
#: The emoji modifiers (skin tones), which a joiner may follow.
MODIFIERS = ("\U0001f3fb", "\U0001f3ff")


#: Extended_Pictographic of Unicode's emoji-data.txt (15.1), which Python's `unicodedata`
#: does not carry: what a zero-width joiner joins into one emoji (🙂‍↔️: ↔ is one; box
#: drawing, Braille and ° are symbols too, but none, so "─‍─" is "──").
PICTOGRAPHS: tuple[tuple[int, int], ...] = (
    (0x00A9, 0x00A9), (0x00AE, 0x00AE), (0x203C, 0x203C), (0x2049, 0x2049),
    (0x2122, 0x2122), (0x2139, 0x2139), (0x2194, 0x2199), (0x21A9, 0x21AA),
    (0x231A, 0x231B), (0x2328, 0x2328), (0x2388, 0x2388), (0x23CF, 0x23CF),
    (0x23E9, 0x23F3), (0x23F8, 0x23FA), (0x24C2, 0x24C2), (0x25AA, 0x25AB),
    (0x25B6, 0x25B6), (0x25C0, 0x25C0), (0x25FB, 0x25FE), (0x2600, 0x2605),
    (0x2607, 0x2612), (0x2614, 0x2685), (0x2690, 0x2705), (0x2708, 0x2712),
    (0x2714, 0x2714), (0x2716, 0x2716), (0x271D, 0x271D), (0x2721, 0x2721),
    (0x2728, 0x2728), (0x2733, 0x2734), (0x2744, 0x2744), (0x2747, 0x2747),
    (0x274C, 0x274C), (0x274E, 0x274E), (0x2753, 0x2755), (0x2757, 0x2757),
    (0x2763, 0x2767), (0x2795, 0x2797), (0x27A1, 0x27A1), (0x27B0, 0x27B0),
    (0x27BF, 0x27BF), (0x2934, 0x2935), (0x2B05, 0x2B07), (0x2B1B, 0x2B1C),
    (0x2B50, 0x2B50), (0x2B55, 0x2B55), (0x3030, 0x3030), (0x303D, 0x303D),
    (0x3297, 0x3297), (0x3299, 0x3299), (0x1F000, 0x1F0FF), (0x1F10D, 0x1F10F),
    (0x1F12F, 0x1F12F), (0x1F16C, 0x1F171), (0x1F17E, 0x1F17F), (0x1F18E, 0x1F18E),
    (0x1F191, 0x1F19A), (0x1F1AD, 0x1F1E5), (0x1F201, 0x1F20F), (0x1F21A, 0x1F21A),
    (0x1F22F, 0x1F22F), (0x1F232, 0x1F23A), (0x1F23C, 0x1F23F), (0x1F249, 0x1F3FA),
    (0x1F400, 0x1F53D), (0x1F546, 0x1F64F), (0x1F680, 0x1F6FF), (0x1F774, 0x1F77F),
    (0x1F7D5, 0x1F7FF), (0x1F80C, 0x1F80F), (0x1F848, 0x1F84F), (0x1F85A, 0x1F85F),
    (0x1F888, 0x1F88F), (0x1F8AE, 0x1F8FF), (0x1F90C, 0x1F93A), (0x1F93C, 0x1F945),
    (0x1F947, 0x1FAFF), (0x1FC00, 0x1FFFD),
)
_PICTOGRAPH_STARTS = [lo for lo, _ in PICTOGRAPHS]


def _pictograph(c: str) -> bool:
    """A character a joiner joins into one emoji: an extended pictograph
    (`PICTOGRAPHS`) or a skin tone."""
    i = bisect_right(_PICTOGRAPH_STARTS, ord(c)) - 1
    return (i >= 0 and ord(c) <= PICTOGRAPHS[i][1]) or MODIFIERS[0] <= c <= MODIFIERS[1]


def _flag_tags(text: str, at: int) -> int:
    """The end of the tag sequence after the black flag at `text[at]`: the index after
    its cancel tag, or `at + 1` when none follows that names a subdivision as Unicode's
    flags do (a region of two letters and one to four letters or digits, in tag
    characters: "gbsct"). Other tags go as what shows as nothing: they could carry
    text no reader sees ("ignore previous instructions") into a prompt."""
    end = at + 1
    while end < len(text) and TAG_FIRST <= text[end] <= TAG_LAST:
        end += 1
    spec = "".join(chr(ord(c) - 0xE0000) for c in text[at + 1:end])
    if text[end:end + 1] == CANCEL_TAG and _SUBDIVISION.fullmatch(spec):
        return end + 1
    return at + 1


#: A subdivision in a flag's tags (CLDR's unicode_subdivision_id, lower case).
_SUBDIVISION = re.compile(r"[a-z]{2}[a-z0-9]{1,4}")


def strip_format(text: str) -> str:
    """`text` without what shows as nothing (`invisible`: zero-width space and joiners,
    bidi controls such as U+202E, soft hyphen, BOM, the combining grapheme joiner,
    variation selectors, the Hangul fillers), and the Braille blank read as a space;
    but for what makes an emoji: a joiner between two pictographs, a flag's tags."""
    if text.isascii():  # no ASCII character is Cf or ignorable
        return text
    kept: list[str] = []
    at = 0
    while at < len(text):
        c = text[at]
        if c == BLACK_FLAG:
            end = _flag_tags(text, at)
            kept.append(text[at:end])
            at = end
            continue
        if c == BRAILLE_BLANK:
            kept.append(" ")
        elif not invisible(c) or (
            c == ZWJ and kept and _pictograph(kept[-1][-1]) and _pictograph_next(text, at)
        ):
            kept.append(c)
        at += 1
    return "".join(kept)


def _pictograph_next(text: str, at: int) -> bool:
    """Whether the next character after `text[at]` that shows is a pictograph: what
    shows as nothing between is looked past, as it goes (so a joiner's fate does not
    depend on which side of it a stray format character stood)."""
    for c in text[at + 1:]:
        if c == BRAILLE_BLANK or not invisible(c):
            return _pictograph(c)
    return False


def clean_name(name: str) -> str:
    """A name as stored: without what shows as nothing (`strip_format`), outer
    whitespace stripped.

    `Le\u200bna` and `Lena` are one name: what cannot be seen must not make a second
    entity. (What makes an emoji stays: a flag's tags, a joiner between pictographs.)
    """
    return strip_format(name).strip()


#: The audit's bounds: a result's message is clipped to MAX_MELDUNG characters, an
#: ambiguous name lists at most MAX_KANDIDATEN candidates (each with at most 3 merkmale).
MAX_MELDUNG = 500
MAX_KANDIDATEN = 20


def clip(text: str, limit: int) -> str:
    """At most `limit` characters; a clipped text ends with '…'."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def normalize_name(name: str) -> str:
    """The lookup key of a name: what shows as nothing removed (`strip_format`), NFKC,
    case-folded, inner whitespace collapsed. Empty when the name has nothing visible.

    Remembered for names up to MAX_NAME characters: the writer normalises each name of
    an order about five times, character by character (the bench's order: 26 calls,
    0.055 ms; remembered, 0.002 ms)."""
    if len(name) > MAX_NAME:  # never a stored name: not worth remembering
        return _normalized(name)
    return _normalized_remembered(name)


def _normalized(name: str) -> str:
    folded = unicodedata.normalize("NFKC", strip_format(name)).casefold()
    return " ".join(strip_format(folded).split())


_normalized_remembered = lru_cache(maxsize=4096)(_normalized)


def utcnow() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("needs a time zone, e.g. 2026-11-29T18:00:00Z")
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError(
            f"{value.isoformat()} is out of range once converted to UTC (years 1 to 9999)"
        ) from None


def quoted(value: object, most: int = 40) -> str:
    """A value a caller sent, as an error message quotes it: cut after `most` characters
    (a message names what was wrong, not the whole of a long value)."""
    if not isinstance(value, str):
        text = repr(value)
        return text if len(text) <= most else text[:most] + "…"
    return repr(value) if len(value) <= most else repr(value[:most]) + "…"


def _iso_only(value: object) -> object:
    """An instant is ISO 8601 text or a datetime, never a number: pydantic would read 0,
    1e10 or "1700000000" as Unix seconds (1970, 2286, 2023)."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ValueError(
        f"{quoted(value)} is not an ISO 8601 instant with a time zone, e.g. 2026-11-29T18:00:00Z"
    )


AwareDatetime = Annotated[datetime, BeforeValidator(_iso_only), AfterValidator(_aware)]


def _day_start(value: object) -> object:
    """A day alone is the start of that day (`start_of`); an instant stays as it is,
    and still needs its time zone (never guessed)."""
    if not _a_day(value):
        return value
    try:
        return start_of(value, "zeitpunkt")  # type: ignore[arg-type]  # _a_day: date or str
    except InvalidInput as exc:
        raise ValueError(str(exc).removeprefix("zeitpunkt ")) from None


def _a_day(value: object) -> bool:
    """A day alone: a `date` (not a datetime), or text of a day's length."""
    if isinstance(value, str):
        return len(value.strip()) == 10
    return isinstance(value, date) and not isinstance(value, datetime)


#: When something began: an instant with its time zone, or a day (its start, UTC).
StartDatetime = Annotated[AwareDatetime, BeforeValidator(_day_start)]

#: A point of an as-of read: an instant, a date (the end of that day, UTC) or ISO text.
When = datetime | date | str


_POINT_OF_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}.*)?")


def start_of(value: When | None, role: str) -> datetime | None:
    """When something began (an order's `zeitpunkt`, `kg write --zeitpunkt`): a day alone
    (a date, or YYYY-MM-DD) is the start of that day, UTC ("she moved on 1 November"
    begins at its midnight); anything else as `instant` reads it."""
    moment = instant(value, role)
    if moment is None or not _a_day(value):
        return moment
    return datetime.combine(moment.date(), time.min, tzinfo=UTC)


def instant(value: When | None, role: str) -> datetime | None:
    """An as-of point as an aware UTC instant. A bare date means the end of that day
    (UTC): everything that held or was recorded on that day counts."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            # Only the forms the docs write: YYYY-MM-DD, or an instant after it (Python
            # also reads ISO basic 20261130 and week dates 2026-W48, as midnight).
            if not _POINT_OF_TIME.fullmatch(text):
                raise ValueError(text)
            value = date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
        except ValueError:
            raise InvalidInput(
                f"{role} {quoted(text)} is neither a date (2026-11-30) nor an ISO 8601 instant "
                "with a time zone (2026-11-30T18:00:00+01:00)"
            ) from None
    if not isinstance(value, date):  # a datetime is a date too
        raise InvalidInput(
            f"{role} must be a date, an instant or ISO 8601 text, not {type(value).__name__}"
        )
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise InvalidInput(
                f"{role} {value.isoformat()} has no time zone; give one, e.g. "
                f"{value.isoformat()}Z or {value.isoformat()}+01:00"
            )
        try:
            return value.astimezone(UTC)
        except (OverflowError, ValueError):
            raise InvalidInput(
                f"{role} {value.isoformat()} lies outside the years 1-9999"
            ) from None
    return datetime.combine(value, time.max, tzinfo=UTC)


class Frozen(BaseModel):
    # Each model's validator is built on its first use, not at import: a command that
    # only reads a Mappe does not build the order models (~5 ms of `kg mappe`).
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


M = TypeVar("M", bound=BaseModel)

#: The kind of a stored thing by the model field that holds it (a Mappe's facts, and the
#: entities a fact or an entry names).
_HELD_AS = {"fakten": "fact", "historie": "fact", "entitaet": "entity", "subjekt": "entity",
            "objekt": "entity"}
#: A stored property by the model field that holds it, where the names differ.
_STORED_AS = {"staerke": "staerke_decay"}


def stored_invalid(exc: ValidationError, data: Any, kind: str, ident: object) -> StoredDataError:
    """A model built from stored values (`data`, as validated) that does not validate:
    a StoredDataError that names the thing — the innermost object with an id on the
    error's path, its kind by the field that holds it (`_HELD_AS`), else `kind` `ident`
    — and its property. pydantic's own error would read as a fault of the caller's
    input (exit 2), and names neither the thing nor its id."""
    error = exc.errors()[0]
    loc = error["loc"]
    node, field = data, None
    for step in loc[:-1]:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(step, str):
            field = step
        if isinstance(node, dict) and "id" in node:
            kind, ident = _HELD_AS.get(field or "", kind), node["id"]
    prop = ".".join(str(p) for p in loc[-2:]) if loc and isinstance(loc[-1], int) else (
        str(loc[-1]) if loc else "value")
    prop = _STORED_AS.get(prop, prop)
    value = None if error["type"] == "missing" else error.get("input")
    why = str(error["msg"]).removeprefix("Value error, ")
    return StoredDataError.of(kind, ident, prop, value,
                              None if value is None else why[:1].lower() + why[1:])


def from_store(cls: type[M], data: dict[str, Any], kind: str, ident: object = None) -> M:
    """`cls` validated from stored values; a StoredDataError (`stored_invalid`) that names
    `kind` and its id (`ident`, else the data's `id`) when one of them is not what the
    library writes."""
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise stored_invalid(exc, data, kind, data.get("id") if ident is None else ident) from exc


#: The Cypher types a stored property can have, as `kg check` tests them (`_OR_NULL`: or
#: absent; `NUMBER`: a float or an integer). An empty type: checked by a rule of its own.
PropertyType = Literal[
    "STRING", "STRING_OR_NULL", "STRING_LIST_OR_NULL", "DATETIME", "DATETIME_OR_NULL", "DATE",
    "DATE_OR_NULL", "INTEGER", "INTEGER_OR_NULL", "BOOLEAN", "BOOLEAN_OR_NULL", "NUMBER", "",
]


class Property(NamedTuple):
    """One property a stored node or relationship can carry: what it holds, its type."""

    name: str
    meaning: str
    type: PropertyType = ""


#: Every property of a fact relationship, in the order the docs list them: the one list.
#: docs/graph-model.md's fact table equals it, and a test compares it with the keys the
#: writer really writes. A new property is added here first. `type` is what `kg check`
#: requires of each property (its fact-field check is built from it); herkunft, grund and
#: auftrag_id have rules of their own.
FACT_PROPERTIES: tuple[Property, ...] = (
    Property("id", "fact id (hex uuid); the same on every version of the fact", "STRING"),
    Property(
        "version",
        "1, 2, …: each change of the fact closes its version and writes the next one",
        "INTEGER",
    ),
    Property("user_id", "the human of the pair that owns the fact", "STRING"),
    Property("character_id", "the character of the pair that owns the fact", "STRING"),
    Property("herkunft", "`mensch`, `nova`, `modell` or `recherche`; required, no default"),
    Property(
        "auftrag_id", "the order that wrote it (every fact comes from an audited order)",
        "STRING",
    ),
    Property(
        "t_valid",
        "valid-time start (the order's `zeitpunkt`, else the store's clock); a fact with "
        "`timeline_id` takes its start from the active entry of that chain instead",
        "DATETIME",
    ),
    Property(
        "t_invalid",
        "valid-time end: where the next value begins (superseded), `= t_valid` when taken "
        "back (corrected, cancelled); absent while the value holds open-ended",
        "DATETIME_OR_NULL",
    ),
    Property(
        "timeline_id",
        "first entry of the chain the fact is valid from (no date on the fact)",
        "STRING_OR_NULL",
    ),
    Property(
        "timeline_bis",
        "first entry of the chain of the value that follows it (its *bis*)",
        "STRING_OR_NULL",
    ),
    Property(
        "abgeloest_durch",
        "ids of the facts whose values follow it where it ends (superseded): one, or for a "
        "partner one per end that a value follows at the same instant (what taking one of "
        "them back brings it back from); absent while it holds, and on older data; never "
        "an empty list, nor one naming a fact twice (`kg check`: `fact_followers`; an "
        "import refuses either)",
        "STRING_LIST_OR_NULL",
    ),
    Property(
        "t_recorded",
        "system time: when the store recorded this version (its clock)",
        "DATETIME",
    ),
    Property(
        "t_expired",
        "system time: when a later version replaced this one; absent on the current version",
        "DATETIME_OR_NULL",
    ),
    Property(
        "aktiv",
        "true on the current version of a value that holds open-ended; decay never changes it",
        "BOOLEAN",
    ),
    Property(
        "grund",
        "why it does not hold open-ended: `abgeloest` (superseded), `berichtigt` (corrected: "
        "never true), `abgesagt` (its event was cancelled: never true)",
    ),
    Property(
        "staerke_decay",
        "strength in [0, 1]; 1.0 when written or re-asserted, then kept by the daily sweep",
        "NUMBER",
    ),
    Property("last_touched", "system time it was written or last re-asserted", "DATETIME"),
    Property(
        "decay_am",
        "date of the last sweep that wrote `staerke_decay`; absent until the first sweep",
        "DATE_OR_NULL",
    ),
    Property(
        "gesagt",
        "on a `TYP` fact: true where a `typ` triple stated it in the order that wrote this "
        "version, not only a fact implied it (taking that fact back keeps it); a type stated "
        "again later is touched instead (`last_touched` after `t_recorded`), which keeps it "
        "as well; absent otherwise, and on data from before 2026-12-05",
        "BOOLEAN_OR_NULL",
    ),
    Property(
        "subjekt_typ",
        "the type the triple that wrote this fact carried in its own `typ` field for its "
        "subject (not `sonstiges`), or the first triple that told it again with one: a "
        "correction or cancel of the fact takes that type back too, where only such facts "
        "gave it; absent otherwise, and on data from before 2026-12-07",
        "STRING_OR_NULL",
    ),
)

#: Every property of an `Entitaet` node: the one list (docs table, export record, test).
ENTITY_PROPERTIES: tuple[Property, ...] = (
    Property("id", "entity id (hex uuid)", "STRING"),
    Property(
        "user_id", "the human it belongs to: entities are per user, shared by the user's pairs",
        "STRING",
    ),
    Property("name", "the name as given, without what shows as nothing (*Names* below)", "STRING"),
    Property("name_norm", "the lookup key: `kg.models.normalize_name(name)`", "STRING"),
    Property(
        "erstellt", "system time the entity was created (the store's clock)", "DATETIME_OR_NULL"
    ),
)

#: Every property of a `TimelineEintrag` node: the one list.
TIMELINE_PROPERTIES: tuple[Property, ...] = (
    Property("id", "entry id (hex uuid)", "STRING"),
    Property("user_id", "the human of the pair", "STRING"),
    Property(
        "character_id", "the character of the pair: an entry belongs to the pair", "STRING"
    ),
    Property(
        "typ", "the kind of entry: `kg.models.EintragTyp` (`termin`, `ereignis`, ...)", "STRING"
    ),
    Property("titel", "what happens", "STRING"),
    Property(
        "beginn", "the day it begins; month precision stores the first of the month", "DATE"
    ),
    Property("ende", "the day it ends, or absent", "DATE_OR_NULL"),
    Property("genauigkeit", "`tag` or `monat`: how exact `beginn` is", "STRING"),
    Property("aktiv", "true on the end of its chain, unless cancelled", "BOOLEAN"),
    Property("abgesagt", "true once the event was cancelled; false before", "BOOLEAN_OR_NULL"),
    Property("t_recorded", "system time the store recorded the entry", "DATETIME_OR_NULL"),
    Property("ersetzt_am", "system time a move replaced it by its successor", "DATETIME_OR_NULL"),
    Property("abgesagt_am", "system time it was cancelled", "DATETIME_OR_NULL"),
)

#: Every property of an `Auftrag` node (the audit of an order): the one list.
ORDER_PROPERTIES: tuple[Property, ...] = (
    Property(
        "id", "the order's `auftrag_id`; unique per `(user_id, character_id, id)`", "STRING"
    ),
    Property("user_id", "the human of the pair", "STRING"),
    Property("character_id", "the character of the pair", "STRING"),
    Property(
        "empfangen", "the valid time of the order's facts: its `zeitpunkt` (when the chat "
        "saw it), else the store's clock when it was written (then the same as `erfasst`)",
        "DATETIME_OR_NULL",
    ),
    Property("erfasst", "system time the store recorded the order (its clock)", "DATETIME_OR_NULL"),
    Property("status", "`ok`, `teilweise` or `abgelehnt`", "STRING"),
    Property(
        "ergebnis", "the order's result as JSON text, returned again on a replay", "STRING"
    ),
    Property("anzahl_tripel", "how many triples the order held", "INTEGER_OR_NULL"),
    Property(
        "inhalt", "SHA-256 of the order's content (its triples and corrections, and its "
        "`zeitpunkt` if it gave one; before 2026-12-05 without it): a replay with other "
        "content or another `zeitpunkt` is refused (an order recorded without it, before "
        "2026-11-29, is no replay of anything: a later order of its id is refused)",
        "STRING_OR_NULL",
    ),
)


def field_types(properties: tuple[Property, ...]) -> dict[str, list[str]]:
    """The typed properties grouped by type, as `kg check` takes them (`$fields`)."""
    grouped: dict[str, list[str]] = {}
    for p in properties:
        if p.type:
            grouped.setdefault(p.type, []).append(p.name)
    return grouped


class ById(Frozen):
    """An entity named by its id."""

    id: Ident = Field(description="The entity's id (from an earlier result or `kg entities`).")


class New(Frozen):
    """A new entity, created even when the name already exists."""

    neu: Name = Field(description="Name of the entity to create.")


def _entity_ref_form(value: Any) -> str | None:
    """Which of the three forms an entity reference has: a name, `{"id": ...}` or
    `{"neu": ...}`. So a wrong one is told what is wrong with it in its own form (an
    empty `neu`), not in all three at once ("input should be a valid string")."""
    # The tags are not field names: kg.plain leaves them out of an error's path.
    if isinstance(value, str):
        return "by-name"
    if isinstance(value, ById | New):
        return "by-id" if isinstance(value, ById) else "by-neu"
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in ("id", "neu"):
        return f"by-{next(iter(value))}"
    return None


class _AnyOf:
    """Shows a union as `anyOf` in the JSON schema, as pydantic's plain unions do:
    tool schemas reach LLM providers whose function-calling subsets take `anyOf` but
    not the `oneOf` pydantic gives a discriminated union (the forms are disjoint, so
    both say the same)."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core: Any, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        schema = dict(handler(core))
        if "oneOf" in schema:
            schema["anyOf"] = schema.pop("oneOf")
        return schema


EntityRef = Annotated[
    Annotated[Name, Tag("by-name")] | Annotated[ById, Tag("by-id")]
    | Annotated[New, Tag("by-neu")],
    _AnyOf,
    Discriminator(
        _entity_ref_form,
        custom_error_type="entity_ref",
        custom_error_message="give a name, {'id': ...} or {'neu': ...} (one key)",
    ),
    Field(description="A name (resolved within the user), {'id': ...} or {'neu': ...}."),
]

EintragTyp = Literal["termin", "geburtstag", "deadline", "jahrestag", "erinnerung", "ereignis"]
Genauigkeit = Literal["tag", "monat"]


class NeuerEintrag(Frozen):
    """A timeline entry to create (also inside a write order, as the event of a fact)."""

    typ: EintragTyp = Field("ereignis", description="Kind of entry.")
    titel: Annotated[Titel, AfterValidator(_visible)] = Field(
        description="Short title, e.g. 'Lena zieht nach Kassel'; something visible."
    )
    beginn: date = Field(description="First day (for precision monat: any day of the month).")
    ende: date | None = Field(None, description="Last day of a span; None for one day/month.")
    genauigkeit: Genauigkeit = Field(
        "tag", description="tag, or monat when only the month is known."
    )

    @model_validator(mode="after")
    def _span(self) -> NeuerEintrag:
        if self.ende is not None and self.ende < self.beginn:
            raise ValueError(f"ende {self.ende} is before beginn {self.beginn}")
        return self


class Tripel(Frozen):
    """One fact to write: subject → relation → object (entity) or wert (value)."""

    subjekt: EntityRef
    beziehung: Ident = Field(description="A relation of the canon, e.g. wohnt_in.")
    objekt: EntityRef | None = Field(None, description="The object entity (reference fact).")
    wert: NeuerWert | None = Field(None, description="The object value (value fact).")
    herkunft: Herkunft = Field(description="Provenance; required, no default.")
    typ: Typ | None = Field(
        None,
        description="The subject's type as the caller classified it (one of the six); "
        "checked like any type, and written as its type fact when it has none.",
    )
    timeline_id: Ident | None = Field(
        None, description="Entry (any of its chain) this fact is valid from."
    )
    ereignis: NeuerEintrag | None = Field(
        None, description="A new event created with the fact; the fact is valid from it."
    )

    @model_validator(mode="after")
    def _one_object(self) -> Tripel:
        if (self.objekt is None) == (self.wert is None):
            raise ValueError("give exactly one of 'objekt' (an entity) or 'wert' (a value)")
        if self.timeline_id is not None and self.ereignis is not None:
            raise ValueError("give either 'timeline_id' or 'ereignis', not both")
        return self


class Berichtigung(Frozen):
    """A correction: the named fact was wrong, never true; it is retired, not superseded."""

    subjekt: EntityRef
    beziehung: Ident = Field(description="The relation of the wrong fact.")
    objekt: EntityRef | None = Field(None, description="Its object entity.")
    wert: Wert | None = Field(None, description="Or its value.")
    notiz: Wert | None = Field(None, description="Why it is wrong (kept in the audit).")
    herkunft: Herkunft = Field(
        description="Who says it is wrong: mensch, nova, modell or recherche; required, no "
        "default, as a fact's (kept in the audit; a replacement carries its own)."
    )

    @model_validator(mode="after")
    def _one_object(self) -> Berichtigung:
        if (self.objekt is None) == (self.wert is None):
            raise ValueError("give exactly one of 'objekt' or 'wert' of the wrong fact")
        return self


# A triple that fails validation stays a dict and is rejected on its own by the agent,
# so one bad triple never fails the other triples of its order.
TripelOderRoh = Annotated[Tripel | dict[str, Any], Field(union_mode="left_to_right")]


class Auftrag(Frozen):
    """A write order: the triples of one chat turn, written in one transaction."""

    auftrag_id: Ident = Field(description="Idempotency id: the same id is never written twice.")
    user_id: Ident = Field(description="The human the entities belong to.")
    character_id: Ident = Field(description="The character; (user_id, character_id) is the pair.")
    zeitpunkt: StartDatetime | None = Field(
        None,
        description="Valid time of the order's facts (when they became true): an ISO instant "
        "with a time zone, or a day (YYYY-MM-DD: its start, UTC); default: the store's "
        "clock. System time (when the store learned them) is always the store's.",
    )
    tripel: list[TripelOderRoh] = Field(
        default_factory=list,
        max_length=200,
        description="The triples; each is validated on its own, an invalid one is rejected.",
    )
    berichtigungen: list[Berichtigung] = Field(
        default_factory=list,
        max_length=200,
        description="Wrong facts to retire, applied before the triples (their replacement).",
    )

    @model_validator(mode="after")
    def _not_empty(self) -> Auftrag:
        if not self.tripel and not self.berichtigungen:
            raise ValueError("an order needs at least one triple or correction")
        return self

    @field_validator("tripel", mode="before")
    @classmethod
    def _objects(cls, value: Any) -> Any:
        if isinstance(value, list):
            for i, item in enumerate(value):
                if not isinstance(item, (dict, Tripel)):
                    raise ValueError(f"triple {i} must be an object, got {type(item).__name__}")
        return value


Ausgang = Literal[
    "geschrieben",
    "abgeloest",
    "nachgetragen",
    "unveraendert",
    "berichtigt",
    "abgesagt",
    "verschoben",
    "mehrdeutig",
    "abgelehnt",
    "fehler",
]


class Kandidat(Frozen):
    """An entity a name could mean, with what tells it apart."""

    id: str = Field(description="Entity id; retry the triple with {'id': ...}.")
    name: str = Field(description="The entity's name.")
    typ: Typ = Field(description="Its type in this pair (sonstiges when unknown).")
    merkmale: list[str] = Field(description="A few of its active facts in this pair.")


class TripelErgebnis(Frozen):
    """The outcome of one triple."""

    index: int = Field(description="Position of the triple in the order.")
    ausgang: Ausgang = Field(description="What happened.")
    grund: str | None = Field(None, description="Reason code for abgelehnt/fehler/mehrdeutig.")
    meldung: str | None = Field(None, description="Human-readable explanation.")
    fakt_id: str | None = Field(None, description="The written or touched fact.")
    abgeloest: list[str] = Field(
        default_factory=list,
        description="Facts this one superseded, corrected or cancelled (a correction or a "
        "cancel: the facts it retired, then the types only they implied; a move: the "
        "values it re-ended).",
    )
    wieder_gueltig: list[str] = Field(
        default_factory=list,
        description="Facts that hold again because the value that superseded them was taken back.",
    )
    subjekt_id: str | None = Field(None, description="The resolved subject entity.")
    objekt_id: str | None = Field(None, description="The resolved object entity.")
    timeline_id: str | None = Field(None, description="First entry of the event, if any.")
    kandidaten: list[Kandidat] = Field(default_factory=list, description="For mehrdeutig.")
    konflikt: str | None = Field(
        None, description="For typkonflikt and zyklus: the existing fact it contradicts."
    )
    neue_entitaeten: list[str] = Field(default_factory=list, description="Entities created.")
    typ_fakten: list[str] = Field(default_factory=list, description="Type facts written.")
    notiz: str | None = Field(None, description="A correction's note: why the fact is wrong.")
    herkunft: Herkunft | None = Field(
        None, description="A correction's herkunft: who says the fact is wrong."
    )

    def detail(self) -> str:
        """The outcome in words, as the CLI and MCP show it beside `ausgang`: the message
        or the fact, the facts it ended (superseded by a new value, retired as never
        true by a correction or cancel, re-ended by a move), and those that hold again."""
        parts = [self.meldung or (f"fact {self.fakt_id}" if self.fakt_id else "")]
        if self.abgeloest:
            how = {"berichtigt": "retired", "abgesagt": "retired", "verschoben": "re-ended"}
            parts.append(f"{how.get(self.ausgang, 'superseded')} {', '.join(self.abgeloest)}")
        if self.wieder_gueltig:
            parts.append(f"holds again {', '.join(self.wieder_gueltig)}")
        if self.herkunft or self.notiz:
            said = f"said by {self.herkunft}" if self.herkunft else ""
            parts.append(": ".join(x for x in (said, self.notiz and repr(self.notiz)) if x))
        return "; ".join(part for part in parts if part)

    @field_validator("meldung", mode="before")
    @classmethod
    def _bounded_meldung(cls, value: Any) -> Any:
        # The audit stores what was validated: a message about hostile input never
        # carries that input whole.
        return clip(value, MAX_MELDUNG) if isinstance(value, str) else value

    @field_validator("kandidaten", mode="before")
    @classmethod
    def _bounded_kandidaten(cls, value: Any) -> Any:
        return value[:MAX_KANDIDATEN] if isinstance(value, list) else value


class AuftragErgebnis(Frozen):
    """The result of an order; stored in the audit and returned again on replay."""

    auftrag_id: str
    user_id: str
    character_id: str
    status: Literal["ok", "teilweise", "abgelehnt"] = Field(
        description="ok: every triple written/unchanged; teilweise: some not; abgelehnt: none."
    )
    wiederholt: bool = Field(False, description="True when this auftrag_id was written before.")
    zeitpunkt: datetime = Field(description="Valid time of the order's facts.")
    erfasst: datetime | None = Field(
        None, description="System time: when the store recorded the order (its own clock)."
    )
    ergebnisse: list[TripelErgebnis]


def parse_result(text: Any) -> AuftragErgebnis:
    """An order's result from the JSON its audit record keeps; a ValueError that says
    what is wrong with text that is not one (the import, `kg check` and a replay each
    say it their way)."""
    try:
        return AuftragErgebnis.model_validate_json(text)
    except (ValidationError, TypeError) as exc:
        why = describe(exc, 2) if isinstance(exc, ValidationError) else str(exc)
        raise ValueError(f"ergebnis is not an order's result ({why})") from exc
    except RecursionError:
        raise ValueError("ergebnis is nested too deeply") from None


def result_mismatch(
    result: AuftragErgebnis, auftrag_id: Any, user_id: Any, character_id: Any, status: Any,
    anzahl_tripel: Any,
) -> str | None:
    """Why `result` is not the result of the order record it is kept with (None: it is).
    The writer stores an order's own result; an import, `kg check`, a replay and `kg audit`
    hold a record to it (a replay knows no status or count: None leaves one out)."""
    if (result.auftrag_id, result.user_id, result.character_id) != (
        auftrag_id, user_id, character_id
    ):
        return "ergebnis belongs to another order (auftrag_id, user_id or character_id differ)"
    if status is not None and result.status != status:
        return f"ergebnis has status {result.status!r}, the record {status!r}"
    if anzahl_tripel is not None and anzahl_tripel != len(result.ergebnisse):
        return (f"anzahl_tripel is {anzahl_tripel!r}, the ergebnis holds "
                f"{len(result.ergebnisse)}")
    return None


def stored_result(
    text: Any, auftrag_id: str, user_id: str, character_id: str, status: str | None = None,
    anzahl_tripel: int | None = None,
) -> AuftragErgebnis:
    """An order's result as its audit record keeps it (JSON). One that does not parse, or
    is not this order's (`result_mismatch`), was changed outside the library: a
    StoredDataError that names the order, where pydantic's error would read as a fault of
    the caller's input, and another order's result would be answered as this one's."""
    repair = ("(its audit record was changed outside the library): the order stays "
              "written and is not written again; restore the user from an export to "
              "repair the record")
    try:
        result = parse_result(text)
    except ValueError as exc:
        raise StoredDataError(
            f"the stored result of order {auftrag_id!r} does not parse {repair}"
        ) from exc
    mismatch = result_mismatch(result, auftrag_id, user_id, character_id, status,
                               anzahl_tripel)
    if mismatch:
        raise StoredDataError(
            f"the stored result of order {auftrag_id!r} is not its own ({mismatch}) {repair}"
        )
    return result


class Absage(Frozen):
    """What cancelling a timeline entry changed (an audited order of its own)."""

    auftrag_id: str = Field(description="The order in the audit that took the facts back.")
    retired: list[str] = Field(
        description="Facts valid from the entry, retired as never true, then the types only "
        "they implied."
    )
    reinstated: list[str] = Field(description="Values those facts had superseded, holding again.")


class Entitaet(Frozen):
    """An entity as listed for a user."""

    id: str
    name: str
    typ: Typ = Field(description="Type in the asked pair (sonstiges when unknown).")
    fakten: int = Field(
        description="Active facts of the pair touching it (its type fact not counted).")
