"""The Mappe: one reader for everything that needs knowledge about an entity.

`read_mappe` runs the `mappe` query (one pattern, one round trip) and maps its rows to
the model; the exact bi-temporal test of as-of reads and the prompt text are pure
functions of those rows, testable without a server.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Any

from pydantic import Field, ValidationError

from kg.canon import Canon
from kg.db import Database, Record, Tx
from kg.errors import EntityNotFound, StoredDataError
from kg.models import Frozen, from_store, one_line, stored_invalid, value_key
from kg.settings import RUHE_SCHWELLE, Settings
from kg.timeline import END_ENTRY, START_ENTRY, when_text
from kg.values import EPOCH, instant, stored_day

HERKUNFT_MARK = {"modell": "laut Modell", "recherche": "recherchiert", "nova": "von Nova"}


class Bezug(Frozen):
    """An entity as named inside a Mappe."""

    id: str
    name: str


class MappeFakt(Frozen):
    """One fact of a Mappe (or of a history)."""

    id: str = Field(description="Fact id.")
    beziehung: str = Field(description="Canon relation name, e.g. wohnt_in.")
    text: str = Field(description="The relation read from the subject ('wohnt in').")
    subjekt: Bezug
    objekt: Bezug | None = Field(None, description="Object entity of a reference fact.")
    wert: str | None = Field(None, description="Value of a value fact.")
    grad: int = Field(description="1: touches the entity; 2: touches a neighbour.")
    via: str | None = Field(None, description="The neighbour a degree-2 fact hangs on.")
    herkunft: str
    staerke: float = Field(description="staerke_decay of the edge.")
    aktiv: bool = Field(description="Neither superseded nor corrected (in an as-of read: "
                        "as the record stood at bekannt_am).")
    ab: str | None = Field(None, description="Valid from, as a person says it.")
    ab_datum: date | None = Field(None, description="Valid from (first day).")
    bis: str | None = Field(None, description="Valid until: a value of the history, or one "
                            "superseded from a day ahead that still holds (a current read "
                            "shows it from its object and at degree 2).")
    bis_datum: date | None = None
    bis_zeitpunkt: datetime | None = Field(
        None, description="Valid until, the instant (where `bis` is given): a value that "
        "ends on the day read has ended, or not, by the hour.")
    ab_zeitpunkt: datetime | None = Field(
        None, description="Valid from, the instant: a value that begins later on the day "
        "read has not begun yet (\"from tomorrow\" in Berlin is 23:00 UTC today).")
    aus_ereignis: bool = Field(False, description="Its dates come from a timeline entry.")


class Abgeleitet(Frozen):
    """Knowledge closed at read time through a transitive relation; never stored."""

    beziehung: str
    text: str
    objekt: Bezug
    pfad: list[str] = Field(description="The entities it was derived through.")
    ab: str | None = Field(None, description="Valid from: the fact it starts with (its *ab*).")
    ab_datum: date | None = Field(None, description="Valid from (first day).")
    ab_zeitpunkt: datetime | None = Field(None, description="Valid from, the instant.")
    aus_ereignis: bool = Field(False, description="The fact it starts with is from an event.")


class Mappe(Frozen):
    """The dossier of an entity in one pair."""

    entitaet: Bezug
    typ: str = Field(description="From the type fact; sonstiges when there is none.")
    fakten: list[MappeFakt]
    historie: list[MappeFakt] = Field(description="Superseded values of einwertig relations.")
    abgeleitet: list[Abgeleitet]
    gekappt: bool = Field(description="True when the cap may have cut something off: "
                          "facts, lines of the history or derivations (read again with a "
                          "larger cap to see all).")
    gueltig_am: datetime | None = Field(None, description="Valid-time of an as-of read.")
    bekannt_am: datetime | None = Field(None, description="System-time of an as-of read.")
    stand: datetime | None = Field(
        None,
        description="The system time the read stands at: the user's clock when it was read "
        "(the instant of the user's last write, replay, import, timeline change or pair "
        "purge), or `bekannt_am` where that is earlier; null for a user without one. Read "
        "again as known at `stand` and valid at the same instant (this read's `gueltig_am`; "
        "for a current read, when it was made), the store tells the values that held then "
        "as this read did, whatever was written since; strengths are as they are when "
        "asked (a sweep may have rested a fact), and a current read also lists the values "
        "told to begin later.",
    )


#: The fields of a fact as the `mappe` query returns it: a list, in this order.
FACT_FIELDS = (
    "id", "rel", "grad", "via", "herkunft",
    "subjekt_id", "subjekt_name", "objekt_id", "objekt_name", "wert",
    "staerke", "aktiv", "grund", "t_valid", "t_invalid",
    "ab_tag", "ab_genauigkeit", "bis_tag", "bis_genauigkeit",
)
#: The times of a fact on the derivations' paths, and its id (a list, in this order): the
#: `mappe` query's `wegzeiten`, each fact once.
TIME_FIELDS = (*FACT_FIELDS[12:], "id")
#: A derivation as the `mappe` query returns it (a list, in this order): `glieder`, the
#: ids of the facts on its path.
DERIVED_FIELDS = ("rel", "ziel_id", "ziel_name", "pfad", "glieder", "von_id")


def _instant(micros: int | None) -> datetime | None:
    """The queries return fact times as epoch microseconds (`instant`)."""
    return None if micros is None else instant(micros)


def _micros(at: datetime) -> int:
    """An aware instant as the queries compare valid times: epoch microseconds."""
    return (at - EPOCH) // timedelta(microseconds=1)


def _start_of(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def effective(row: Record) -> tuple[datetime, datetime | None, str, str | None, bool]:
    """(valid from, valid until, ab text, bis text, from an event) of a fact row."""
    tl = row.get("ab_tag")
    tl = None if tl is None else stored_day(tl, START_ENTRY, row["id"], "beginn")
    ab: datetime
    if tl is not None:
        ab = _start_of(tl)
        ab_text = when_text(tl, None, row["ab_genauigkeit"])
    else:
        ab = instant(row["t_valid"])
        ab_text = when_text(ab.date(), None, "tag")
    tlb = row.get("bis_tag")
    tlb = None if tlb is None else stored_day(tlb, END_ENTRY, row["id"], "beginn")
    bis: datetime | None
    bis_text: str | None
    if tlb is not None:
        bis, bis_text = _start_of(tlb), when_text(tlb, None, row["bis_genauigkeit"])
    else:
        bis = _instant(row["t_invalid"]) if row["grund"] == "abgeloest" else None
        bis_text = when_text(bis.date(), None, "tag") if bis else None
    if bis is not None and bis < ab:
        # Superseded by an event of the month it began in (or moved before it): the value
        # ends where it began, never before.
        bis, bis_text = ab, when_text(ab.date(), None, "tag")
    return ab, bis, ab_text, bis_text, tl is not None


def holds(row: Record, gueltig_am: datetime) -> bool:
    """The valid-time test of an as-of read's derivation path: the version's value held
    at `gueltig_am` (the `mappe` query's `holds_then` is the same rule for the facts).

    The query has already kept only the versions that were the record at `bekannt_am`,
    with each timeline chain as it was known then, so the dates here are those known then.
    """
    if row["grund"] not in (None, "abgeloest"):
        return False
    ab, bis, *_ = effective(row)
    return ab <= gueltig_am and (bis is None or gueltig_am < bis)


_DAY_US = 86_400_000_000
_EPOCH_DAY = EPOCH.date()


@lru_cache(maxsize=65_536)
def _day(number: int) -> tuple[date, str]:
    """The day `number` days after 1 January 1970, and its text. A Mappe's facts share
    few days, and the date with its German text costs more than the lookup."""
    day = _EPOCH_DAY + timedelta(days=number)
    return day, when_text(day, None, "tag")


def _fields(
    f: list[Any], canon: Canon, ab: str, ab_datum: date, bis: str | None,
    until: datetime | None, from_event: bool, since: datetime | None = None,
) -> dict[str, Any]:
    """The fields of a `MappeFakt` as a dict, from a fact's list (in `FACT_FIELDS` order)
    and its dates: a Mappe validates all its facts in one call (pydantic's validation of
    a whole tree runs in Rust, where one model built per fact costs a Python call each:
    about a fifth of the build)."""
    fid, rel_type, grad, via, herkunft, sid, sname, oid, oname, wert, staerke, aktiv = f[:12]
    rel = canon.by_type.get(rel_type)
    return {
        "id": fid,
        "beziehung": rel.name if rel else rel_type.lower(),
        "text": rel.vorwaerts if rel else rel_type.lower(),
        "subjekt": {"id": sid, "name": sname},
        "objekt": {"id": oid, "name": oname} if oid else None,
        "wert": wert,
        "grad": grad,
        "via": via,
        "herkunft": herkunft,
        # (anything but a number was stored by hand: the model names it)
        "staerke": round(staerke, 6) if isinstance(staerke, (int, float)) else staerke,
        "aktiv": aktiv,
        "ab": ab,
        "ab_datum": ab_datum,
        "bis": bis,
        "bis_datum": until.date() if until else None,
        "bis_zeitpunkt": until,
        "ab_zeitpunkt": since,
        "aus_ereignis": from_event,
    }


def current_fields(f: list[Any], canon: Canon) -> dict[str, Any]:
    """`fact_fields` of a current read's fact, straight from the query's list (the hot
    path: no dict per row, the day of `t_valid` looked up). The same fields as
    `fact_fields(dict(zip(FACT_FIELDS, f)), canon)`; a test holds them equal."""
    t_valid, ab_tag, ab_gen = f[13], f[15], f[16]
    if ab_tag is not None:
        ab_datum = stored_day(ab_tag, START_ENTRY, f[0], "beginn")
        ab = when_text(ab_datum, None, ab_gen)
        since = _start_of(ab_datum)
    else:
        ab_datum, ab = _day(t_valid // _DAY_US)
        since = instant(t_valid)
    return _fields(f, canon, ab, ab_datum, None, None, ab_tag is not None, since)


def fact_fields(row: Record, canon: Canon, history: bool = False) -> dict[str, Any]:
    """The fields of a `MappeFakt` for a fact row (a dict, keys `FACT_FIELDS`); its end
    only for the history."""
    ab, bis, ab_text, bis_text, from_event = effective(row)
    return _fields(
        [row[k] for k in FACT_FIELDS], canon, ab_text, ab.date(),
        bis_text if history else None, bis if history else None, from_event, ab,
    )


def as_known_then(row: Record) -> Record:
    """A fact row of an as-of read with `aktiv` as the record stood then: the version
    read is the one that was the record at `bekannt_am`, and it was active then unless
    it was a superseded value's (grund abgeloest). The stored `aktiv` is today's: a later
    supersession or correction turned it false, and an answer about then must not change
    with what came after."""
    return {**row, "aktiv": row["grund"] is None}


#: Where the stay of a value began: the instant, its text, and whether from an event.
Start = tuple[datetime, str, bool]


def _symmetric(rel_type: str, canon: Canon) -> bool:
    rel = canon.by_type.get(rel_type)
    return rel is not None and rel.symmetrisch


def _value_key(row: Record, canon: Canon) -> tuple[Any, ...] | None:
    """A value of a relation at its subject: its versions share the key (a value fact's
    by the value, as each version has a value node of its own). A symmetric relation's
    (partner) by the two people, whichever is its subject: one bond told as Lena–Tom
    and again as Tom–Lena is the same bond."""
    rel = canon.by_type.get(row["rel"])
    if rel is None:
        return None
    if rel.symmetrisch:
        return row["rel"], frozenset((row["subjekt_id"], row["objekt_id"]))
    objekt = row["objekt_id"] if row["wert"] is None else None
    if row["wert"] is not None and not isinstance(row["wert"], str):
        raise StoredDataError.of("value of fact", row["id"], "wert", row["wert"], "not a text")
    wert = None if row["wert"] is None else value_key(row["wert"])  # (as stored before too)
    return row["rel"], row["subjekt_id"], objekt, wert


def stays(
    facts: list[Record], ended: list[Record], canon: Canon
) -> tuple[dict[str, Start], dict[int, str], dict[str, datetime | None]]:
    """Versions of one value that meet are one stay (pure). Berlin told now and again for
    an earlier time is written as two versions, the late one ending where the later one
    begins (`nachgetragen`); read as they are, they would tell a move from Berlin to
    Berlin. The rule: a version whose valid interval ends where another version of the
    same value begins belongs to that one's stay, and so on back.

    `facts` are the facts that hold (current, or at an as-of read's `gueltig_am`) and
    `ended` the superseded values (the history). Returns, by fact id, the start of the
    stay of each fact or ended value that continues an earlier version; the positions in
    `ended` of the versions taken into a later one, each with the id of the fact or
    ended value whose stay took it; and, by the id of each version so taken, the end of
    its stay (the latest version's; None: it goes on)."""
    spans = [effective(h) for h in ended]
    before: dict[tuple[Any, ...], list[tuple[int, datetime, Start]]] = {}
    for i, (h, (ab, bis, ab_text, _, from_event)) in enumerate(zip(ended, spans, strict=True)):
        key = _value_key(h, canon)
        if bis is not None and key is not None:
            before.setdefault(key, []).append((i, bis, (ab, ab_text, from_event)))
    taken: dict[int, str] = {}
    since: dict[str, Start] = {}
    until: dict[str, datetime | None] = {}

    def back(row: Record, own: int | None = None) -> None:
        key = _value_key(row, canon)
        candidates = before.get(key) if key is not None else None
        if not candidates:
            return
        start = first = _start(row)
        members: list[int] = []
        while True:
            # Every version that ends where the stay begins is part of it: one that held
            # (the stay goes on back from its start), and any squeezed to nothing there
            # (it keeps the start). Taking only the first found made the rows' order
            # (random ids) decide whether a squeezed one was a history of its own.
            # (One taken in after it took in others goes on from where its stay began.)
            meeting = [(i, since.get(ended[i]["id"], earlier)) for i, bis, earlier in candidates
                       if i not in taken and i != own and bis == start[0]]
            taken.update((i, row["id"]) for i, _ in meeting)
            members += [i for i, _ in meeting]
            earliest = min((earlier for _, earlier in meeting), key=lambda s: s[0],
                           default=start)
            if earliest[0] == start[0]:
                break
            start = earliest
        if start != first:
            since[row["id"]] = start
        # A version taken in is part of the stay too: the one that holds now, of a value
        # superseded from a day ahead, derives from the stay's start (Kassel since
        # January, told again from November: "über Kassel, ab 28. November" beside
        # "wohnt in Kassel (noch bis März)" of a stay from January; the stress run).
        for i in members:
            if _start(ended[i])[0] > start[0]:
                since[ended[i]["id"]] = start
        # And it ends where the stay ends: Kassel that holds now, told again since 2025,
        # goes on to 2100 in its version from March 2099; judged by its own end, "über
        # Kassel" to Hessen (from June 2099) derived nothing (a stranger's hunt).
        end = effective(row)[1] if members else None
        until.update((ended[i]["id"], end) for i in members)

    for f in facts:
        back(f)
    # The ended values, the latest end first: each takes in the ones before it.
    for i in sorted(range(len(ended)), key=lambda k: spans[k][1] or EPOCH, reverse=True):
        if i not in taken:
            back(ended[i], i)  # (a value squeezed to nothing ends where it begins)
    return since, taken, until


def still_holding(
    compact: list[list[Any]], versions: list[list[Any]], canon: Canon, schwelle: float
) -> list[tuple[str, dict[str, Any]]]:
    """A current read's facts (pure), with the single-valued ones told of another entity
    (from the object, or at degree 2) read as stays, as the entity's own history reads
    them (`stays`): their versions (`versions`: the query's degree 0, the same value's
    other current versions) that meet are one stay. (The entity's own come with
    versions too where the history's cap may have cut, and a partner's bonds with their
    lines, and are joined the same way; `stays` reads them again with the history.)
    - A value that still holds, superseded from a day ahead: Lena in Kassel since last
      week, told before that she moves there on the 20th, lives in Kassel on after the
      20th; shown beside the version from the 20th, "noch bis 20." would tell a move.
    - A value told again for an earlier time: Lena in Kassel from March 2025, told
      later that she has lived there since 2020, lives there since 2020.
    A stay is shown once, from where it began: by its active version where that is
    shown, or awake (strength at least `schwelle`: the uncapped read shows it) where
    the cap cut it for another of the stay's versions; else by its strongest version
    that still holds, until the stay ends (with no end where it goes on in an active
    version the Mappe does not show). Each with the id of the row it stands in the place
    of (the version the query read, where the active one stands for it)."""
    if not versions and all(f[11] for f in compact):  # (the hot path: no dict per fact)
        return [(f[0], current_fields(f, canon)) for f in compact]
    rows = [dict(zip(FACT_FIELDS, f, strict=True)) for f in compact]
    around = _stays_around(rows, [dict(zip(FACT_FIELDS, f, strict=True)) for f in versions],
                           canon)
    stay_of: dict[str, tuple[Record, Record]] = {}  # fact id: (first, last version)
    for r, (first, last) in zip(rows, around, strict=True):
        if not r["aktiv"]:
            stay_of[r["id"]] = first, last
            stay_of.setdefault(last["id"], (first, last))  # (an active last shown)
        elif first is not r:  # (one that holds now, told again for an earlier time)
            stay_of.setdefault(r["id"], (first, last))
    shown_by: dict[tuple[str, str], str] = {}  # stay (first, last id): the fact showing it
    for r in sorted(rows, key=lambda r: not r["aktiv"]):  # an active version first
        if r["id"] in stay_of:
            first, last = stay_of[r["id"]]
            shown_by.setdefault((first["id"], last["id"]), r["id"])
    by_id = {r["id"]: r for r in rows}
    out: list[tuple[str, dict[str, Any]]] = []
    done: set[tuple[str, str]] = set()
    for f, r in zip(compact, rows, strict=True):
        if r["id"] not in stay_of:
            out.append((r["id"], current_fields(f, canon)))
            continue
        first, last = stay_of[r["id"]]
        stay = first["id"], last["id"]
        if stay in done:
            continue  # shown already, by another of its versions
        # (in the place of its strongest version, so the cap after it keeps the stay)
        done.add(stay)
        shown = by_id[shown_by[stay]]
        if not shown["aktiv"] and last["aktiv"] and last["staerke"] >= schwelle:
            # (The cap cut the active version, which the uncapped read shows: Berlin's
            # Mappe showed a bond by its version told later for an earlier time, "Max
            # ist Partner von Lena", inactive, under another id; in its place, as
            # reached there.)
            shown = {**last, "grad": shown["grad"], "via": shown["via"]}
        fields = _from(fact_fields(shown, canon, history=not shown["aktiv"]), _start(first))
        if not shown["aktiv"]:
            _, bis, _, bis_text, _ = effective(last)
            fields |= {"bis": bis_text, "bis_datum": bis.date() if bis else None,
                       "bis_zeitpunkt": bis}
        out.append((r["id"], fields))
    return out


def told_again(rows: list[Record], versions: list[Record], canon: Canon) -> dict[str, Start]:
    """An as-of read's facts (pure), those shown from the object or at degree 2 read as
    stays as the current read reads them (`still_holding`; the query brings versions
    for the entity's own only where the history's cap may have cut, or for a partner's
    lines): by fact id, the
    start of the stay of each that continues an earlier version of its value
    (`versions`, the query's degree 0, as known then). Lena in Kassel from March 2025,
    told later that she has lived there since 2020, lived in Kassel since 2020 in Tom's
    Mappe too."""
    around = _stays_around(rows, versions, canon)
    return {r["id"]: _start(first) for r, (first, _) in zip(rows, around, strict=True)
            if first is not r}


def _stays_around(
    rows: list[Record], versions: list[Record], canon: Canon
) -> list[tuple[Record, Record]]:
    """For each of `rows`, the first and last versions of its stay (`_stay_around`)
    among the rows and `versions` of its value (`_value_key`; each version once)."""
    keys = [_value_key(r, canon) for r in rows]
    peers: dict[tuple[Any, ...], list[Record]] = {}
    for r, key in zip([*rows, *versions], [*keys, *(_value_key(v, canon) for v in versions)],
                      strict=True):
        if key is not None and all(p["id"] != r["id"] for p in peers.get(key, [])):
            peers.setdefault(key, []).append(r)
    return [_stay_around(r, peers[key] if key is not None else [r])
            for r, key in zip(rows, keys, strict=True)]


def _stay_around(row: Record, peers: list[Record]) -> tuple[Record, Record]:
    """The first and last versions of the stay `row` is part of, among the versions of
    its value `peers`: each ends where the next begins (one squeezed to nothing takes no
    part: it neither begins before nor ends after the point it meets)."""
    spans = {p["id"]: effective(p)[:2] for p in peers}
    first = last = row
    ab, bis = effective(row)[:2]
    moved = True
    while moved:
        moved = False
        for p in peers:
            p_ab, p_bis = spans[p["id"]]
            if p_bis == ab and p_ab < ab:
                first, ab, moved = p, p_ab, True
            if bis is not None and p_ab == bis and (p_bis is None or p_bis > bis):
                last, bis, moved = p, p_bis, True
    return first, last


def _ended_by(row: Record, gueltig_am: datetime) -> bool:
    """A superseded value had begun and ended by `gueltig_am` (the history's rule of an
    as-of read, the query's `span_then`)."""
    ab, bis, *_ = effective(row)
    return bis is not None and bis <= gueltig_am and ab <= gueltig_am


def _own(row: Record, entity_id: str, canon: Canon) -> bool:
    """A version of the entity's own history: its subject's, or either partner's bond."""
    return row["subjekt_id"] == entity_id or (
        row["objekt_id"] == entity_id and _symmetric(row["rel"], canon))


def _held(row: Record, start: Start | None) -> bool:
    """Whether an ended value held for a while: its stay (from `start`, else its own)
    ends after it begins."""
    ab, bis, *_ = effective(row)
    return bis is None or bis > (start[0] if start is not None else ab)


def _from(fields: dict[str, Any], start: Start | None) -> dict[str, Any]:
    """A fact's fields with its *ab* at the start of its stay (`stays`)."""
    if start is None:
        return fields
    return {**fields, "ab": start[1], "ab_datum": start[0].date(), "aus_ereignis": start[2],
            "ab_zeitpunkt": start[0]}


def to_fakt(row: Record, canon: Canon, history: bool = False) -> MappeFakt:
    return from_store(MappeFakt, fact_fields(row, canon, history), "fact", row["id"])


def derived(
    row: Record, canon: Canon, gueltig_am: datetime | None,
    since: dict[str, Start] | None = None,
    shown: Callable[[Record], bool] | None = None,
    until: dict[str, datetime | None] | None = None,
) -> list[Abgeleitet]:
    """Derived knowledge from the query's candidate paths (every one, in no order),
    nearest first, then by relation and target name: per target,
    of the paths all of whose facts are active (a current read) or held at `gueltig_am`
    (an as-of read), the one that holds from the earliest start, of two alike the first
    in `_path_order`; a path holds from the latest start among its facts (its *ab*; a
    fact's stay may begin before its version, `since` by fact id, see `stays`) until the
    earliest end (a stay's, `until`, where it goes on after the version). A
    shorter path that begins later does not hide that the derivation has held for
    longer. A target only where that path begins with a fact the Mappe shows (`shown`,
    given the path; the query derives from every own fact of a relation that derives,
    and the facts told of the entity may push some of them out of the Mappe's facts,
    and the history's cap a line)."""
    since, until = since or {}, until or {}
    # The facts on the paths, each once (places in two places each: thousands of paths
    # through a few dozen facts); as of a day, only those that held then.
    times: dict[str, Record] = {}
    for z in (dict(zip(TIME_FIELDS, t, strict=True)) for t in row["wegzeiten"]):
        if times.setdefault(z["id"], z) != z:  # (versions of one fact share its id)
            raise StoredDataError.of("fact", z["id"], "id", z["id"],
                                     "two versions are the record at once")
    spans: dict[str, tuple[Start, datetime | None] | None] = {}

    def span(fact_id: str) -> tuple[Start, datetime | None] | None:
        """A fact's start (of its stay) and end, dated once, when a path first needs
        it; None where it did not hold (as of a day: the query brings no such fact, and
        a path through a fact without an id, which `kg check` names, leads nowhere)."""
        if fact_id not in spans:
            z = times.get(fact_id)
            if z is None or (gueltig_am is not None and not holds(z, gueltig_am)):
                spans[fact_id] = None
            else:
                ab, bis, ab_text, _, from_event = effective(z)
                spans[fact_id] = (since.get(fact_id) or (ab, ab_text, from_event),
                                  until.get(fact_id, bis))
        return spans[fact_id]

    # Per target the path that holds from the earliest start, over every path: where it
    # begins with a fact the Mappe does not show, the target is left out, never dated by
    # a later path (with a cap of 1, Lena's Berlin line cut for a later one read "wohnt
    # in Deutschland (über München, ab 2033)", where she has lived there since 2005; a
    # stranger's hunt). A cap only cuts.
    found: dict[tuple[str, str], tuple[datetime, Start, Record, Any]] = {}
    for compact in sorted(row["abgeleitet"], key=_path_order):
        d = dict(zip(DERIVED_FIELDS, compact, strict=True))
        rel = canon.by_type.get(d["rel"])
        if rel is None:
            continue
        held = [h for h in map(span, d["glieder"]) if h is not None]
        if len(held) < len(d["glieder"]):
            continue  # (a fact that did not hold then)
        # It holds once every fact of its path does: from the latest start among them.
        start = max((start for start, _ in held), key=lambda e: e[0])
        # And while every one does, up to the earliest end (a current read's value that
        # still holds, "noch bis", has one): a path whose facts never held together
        # derives nothing (Lena in Berlin until 2030, Berlin in Brandenburg from 2031:
        # she never lived in Brandenburg).
        ends = [bis for _, bis in held if bis is not None]
        if ends and min(ends) <= start[0]:
            continue
        key = (d["rel"], d["ziel_id"])
        if key in found and found[key][0] <= start[0]:
            continue  # an earlier (or as early and shorter) path holds already
        found[key] = start[0], start, d, rel
    out = []
    for _, (ab, ab_text, from_event), d, rel in found.values():
        if shown is not None and not shown(d):
            continue
        out.append(from_store(Abgeleitet, {
            "beziehung": rel.name,
            "text": rel.vorwaerts,
            "objekt": {"id": d["ziel_id"], "name": d["ziel_name"]},
            "pfad": d["pfad"],
            "ab": ab_text,
            "ab_datum": ab.date(),
            "ab_zeitpunkt": ab,
            "aus_ereignis": from_event,
        }, "path to entity", d["ziel_id"]))
    # Nearest first, then by relation and target: paths of one length came in the order
    # the server walked them, which an import (other internal ids) changed.
    return sorted(out, key=lambda a: (len(a.pfad), a.beziehung, a.objekt.name, a.objekt.id))


def _path_order(compact: list[Any]) -> tuple[Any, ...]:
    """A derivation's path in the order the reader takes them: shortest first, then by
    relation, target (name, id), the names on the way and the first fact (an order of
    its own: the server walks paths in one that an import changes). (A name that is no
    text sorts by its text; the model then names it.)"""
    rel, ziel_id, ziel_name, pfad, _, von_id = compact
    return (len(pfad), str(rel), str(ziel_name), str(ziel_id),
            tuple(str(n) for n in pfad), str(von_id))


def _start(row: Record) -> Start:
    ab, _, ab_text, _, from_event = effective(row)
    return ab, ab_text, from_event


def _stand(clock: int | None, bekannt_am: datetime | None) -> datetime | None:
    """The instant a read stands at: the user's clock as the query read it first (the
    system time of the user's last write committed then), or `bekannt_am` where that is
    earlier. Later than the clock, an as-of read shows what was known at the clock: a
    write after the read may still be recorded before `bekannt_am`."""
    if clock is None:
        return None
    at = instant(clock)
    return at if bekannt_am is None or at <= bekannt_am else bekannt_am


def build(
    row: Record,
    canon: Canon,
    cap: int,
    gueltig_am: datetime | None = None,
    bekannt_am: datetime | None = None,
    *,
    schwelle: float = RUHE_SCHWELLE,
) -> Mappe:
    """Map the `mappe` query's row to the model (pure). A current read takes the rows as
    they are; an as-of read (`gueltig_am` set) keeps the facts valid then and, as
    history, the values that had ended by then. `schwelle` is the strength the query
    read with (a fact below it rests)."""
    # The query reads one fact more than the cap: only then was something cut. Degree 0:
    # the other versions of the values of single-valued facts shown from their object or
    # at degree 2, for their stays (`still_holding`, `told_again`); of the entity's own
    # and its history's lines where the history's cap may have cut, and of a partner's
    # lines' bonds (`stays`).
    compact = [f for f in row["fakten"] if f[0] and f[2]]
    versions = [f for f in row["fakten"] if f[0] and not f[2]]
    # `gekappt` false tells the chat it has all there is. So it is true where the cap
    # may have cut facts, lines of the history (the query read more lines that held
    # than the cap, by its rule, or the reader kept more, by its own: the two agreed in
    # every story tried, and either suffices) or derivations (below).
    gekappt = len(compact) > cap or row["historie_voll"]
    if gueltig_am is None:
        # The versions of a stay are one line: joined before the cut, so they take one
        # place where the query's one more fact lets them.
        joined = still_holding(compact, versions, canon, schwelle)
        current = [fields for _, fields in joined[:cap]]
        if len(joined) == len(compact):  # (none joined: the rows as they came)
            compact = compact[:cap]
        else:  # (the rows shown; an active version that stands for a stay the query
            # read by another version only, by that version's row)
            ids = {f[0] for f in compact}
            kept = {fields["id"] if fields["id"] in ids else row_id
                    for row_id, fields in joined[:cap]}
            compact = [f for f in compact if f[0] in kept]
    else:
        compact = compact[:cap]
    # A single-valued relation's history shows beside its current value or not at all:
    # without it (cut by the cap, or resting) "früher: wohnt in Berlin (bis 2024)" told a
    # move to nowhere. Its history is the entity's own; whenever it has some, a value of
    # the relation holds (a superseded value is followed by one, and so on), so only a
    # value left out leaves it alone. Not a partner's: one may end at the far end.
    shown = {(f[5], f[1]) for f in compact}
    # (Cut to the cap after its versions are joined into stays, below: the query's one
    # row more than the cap may be the earlier version of a stay it shows.)
    historie_rows = [
        h for h in (dict(zip(FACT_FIELDS, x, strict=True)) for x in row["historie"] if x[0])
        if (h["subjekt_id"], h["rel"]) in shown or _symmetric(h["rel"], canon)
    ]
    if gueltig_am is None:
        fakten = current
    else:
        # The query kept only the facts that held at `gueltig_am` and the values that had
        # ended by then, before its caps (the `holds_then` rule).
        fakten_rows = [as_known_then(dict(zip(FACT_FIELDS, f, strict=True))) for f in compact]
        fakten = [fact_fields(f, canon) for f in fakten_rows]
        if versions:  # (a value told again for an earlier time, shown from its object)
            begun = told_again(fakten_rows, [dict(zip(FACT_FIELDS, f, strict=True))
                                             for f in versions], canon)
            fakten = [_from(f, begun.get(f["id"])) for f in fakten]
        historie_rows = [as_known_then(h) for h in historie_rows]
    historie = [fact_fields(h, canon, history=True) for h in historie_rows]
    # Where the history's cap may have cut (the query then brings the entity's own
    # versions too), the versions cut begin stays as the lines kept do.
    # Only what the history itself would list: superseded values, as of a day those
    # that had ended by then (an active version among them, not shown, took a line
    # that ends where it begins into its stay, and the line was gone).
    lines = {h["id"] for h in historie_rows}
    own_versions = [v for v in (dict(zip(FACT_FIELDS, f, strict=True)) for f in versions)
                    if _own(v, row["id"], canon)]
    # (Not one squeezed to nothing: beyond the cap it ends no later than the lines shown,
    # so the only line it could go on from is one that ends where it stands, which it
    # then took into a stay nobody shows, and a former job's line was gone, where
    # another event of that day squeezed it so the query's count missed it. Between two
    # versions it joins nothing they do not.)
    beyond = [v for v in own_versions if v["id"] not in lines and v["grund"] == "abgeloest"
              and _held(v, None)]
    # A bond's version that holds, which the cap left out (the query brings it with a
    # partner's lines): those lines show whatever the Mappe shows, and one it goes on
    # from is no former bond ("früher: ist Partner von Lena (bis …)" of a bond told
    # again for an earlier time).
    shown_ids = {f[0] for f in compact}
    bonds = [v for v in own_versions if _symmetric(v["rel"], canon)
             and v["id"] not in shown_ids
             and (v["aktiv"] if gueltig_am is None else holds(v, gueltig_am))]
    if gueltig_am is not None:
        beyond = [as_known_then(v) for v in beyond if _ended_by(v, gueltig_am)]
    since: dict[str, Start] = {}
    until: dict[str, datetime | None] = {}  # (the end of the stay a version was taken into)
    lines_shown: set[str] = set()  # the history's versions it shows: lines, or in stays
    versions_shown: list[Record] = []  # (the same, the rows)
    if historie or beyond:  # (only a value with a history can have a stay of several versions)
        near = [dict(zip(FACT_FIELDS, f, strict=True)) for f in compact if f[2] == 1]
        ended = historie_rows + beyond
        since, taken, until = stays(near + bonds, ended, canon)
        fakten = [_from(f, since.get(f["id"])) for f in fakten]
        # A value that held nowhere (squeezed to nothing: another was told for the same
        # instant, or a late one begins where it does) was never a former value: as
        # "früher: wohnt in Hamburg (bis 1. Januar 2025)" it told the chat of a stay
        # that never happened. `kg history` still lists it.
        held = [i for i, h in enumerate(historie_rows) if i not in taken
                and _held(h, since.get(h["id"]))]
        gekappt = gekappt or len(held) > cap
        historie = [_from(historie[i], since.get(historie_rows[i]["id"])) for i in held][:cap]
        # (A version taken into a stay shows where the stay does: its current fact or a
        # line the cap keeps. Taken into a line the cap cut, Berlin since 2020, which
        # still holds, reached Berlin's facts beside no Berlin; a review.)
        kept_lines = [historie_rows[i] for i in held[:cap]]
        shown_stays = {f["id"] for f in near} | {v["id"] for v in kept_lines}
        versions_shown = kept_lines + [ended[i] for i, by in taken.items() if by in shown_stays]
        lines_shown = {v["id"] for v in versions_shown}
    # A fact at degree 2 shows only beside what it is reached through: one of its ends is
    # the other end of a fact shown, or of a version the history shows (the entity's own
    # value that still holds, "noch bis", reaches its place's facts too). Where the
    # history's cap cut that line, "· Berlin liegt in Deutschland" stood beside no
    # Berlin. (It took a place under the facts' cap: the Mappe shows one fact fewer.)
    reached = {end["id"] for f in fakten if f["grad"] == 1
               for end in (f["subjekt"], f["objekt"]) if end is not None} | {
        end for v in versions_shown for end in (v["subjekt_id"], v["objekt_id"])}
    fakten = [f for f in fakten if f["grad"] != 2 or f["subjekt"]["id"] in reached
              or (f["objekt"] is not None and f["objekt"]["id"] in reached)]
    # What the entity's own shown facts say is not derived again: Kassel liegt in
    # Deutschland, told, and "abgeleitet: liegt in Deutschland (über Hessen)" beside it.
    # Unless the derivation holds from earlier than the told fact: then it says more.
    stated: dict[tuple[str, str], date] = {}
    for f in fakten:
        if f["objekt"] is not None and f["subjekt"]["id"] == row["id"]:
            key = (f["beziehung"], f["objekt"]["id"])
            stated[key] = min(f["ab_datum"], stated.get(key, date.max))
    fact_ids = {f["id"] for f in fakten}
    # Nor what one the cap cut says (the query sends every own fact of a relation that
    # derives): uncapped, "liegt in Deutschland", told, stood there and nothing was
    # derived; with the told fact cut, "abgeleitet: liegt in Deutschland (über Hessen)"
    # stood in its place. Such a derivation is left out whatever its start (a cap only
    # cuts: the told fact's start, of its stay, is not known here).
    cut_told = {(rel.name, ziel_id) for rel_type, ziel_id, fact_id in row["eigene"]
                if fact_id not in fact_ids and (rel := canon.by_type.get(rel_type))}

    def begins_shown(path: Record) -> bool:
        """The path begins with a fact the Mappe shows, or with the entity's own value
        that still holds (the query brings no other superseded value to derive from)
        where the Mappe shows it: as a line of its history ("noch bis"), or as a
        version the history joined into a stay. Cut from the history by the cap, it
        derives nothing ("über Berlin" beside no Berlin)."""
        return path["von_id"] in fact_ids or path["von_id"] in lines_shown

    abgeleitet = [
        a for a in derived(row, canon, gueltig_am, since, begins_shown, until)
        if (a.beziehung, a.objekt.id) not in cut_told
        and (a.ab_datum is None or a.ab_datum < stated.get((a.beziehung, a.objekt.id),
                                                          date.max))
    ]
    data = {
        "entitaet": {"id": row["id"], "name": row["name"]},
        "typ": row["typ"],
        "fakten": fakten,
        "historie": historie,
        "abgeleitet": abgeleitet[:cap],
        "gekappt": gekappt or len(abgeleitet) > cap,
        "gueltig_am": gueltig_am,
        "bekannt_am": bekannt_am,
        "stand": _stand(row.get("stand"), bekannt_am),
    }
    try:
        return Mappe.model_validate(data)
    except ValidationError as exc:  # a stored value: name its fact or entity
        raise stored_invalid(exc, data, "entity", row["id"]) from exc


def derive_pairs(canon: Canon) -> list[dict[str, str]]:
    """Which relation composes with which transitive one (wohnt_in → ort, liegt_in ort→ort)."""
    pairs = []
    for trans in canon.relations.values():
        if not trans.transitiv:
            continue
        for rel in canon.relations.values():
            if rel.objekt == "entitaet" and rel.objekt_typ == trans.objekt_typ:
                pairs.append({"via": rel.rel_type, "trans": trans.rel_type})
    return pairs


#: How often a Mappe is read as it is while writes of the user commit during the read;
#: then once under the user's lock (see `_steady_read`).
STAND_READS = 3

#: "Known now": an as-of read without `bekannt_am` reads the current record.
KNOWN_NOW = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


def mappe_params(
    settings: Settings,
    canon: Canon,
    user_id: str,
    character_id: str,
    entity_ids: list[str],
    *,
    gueltig_am: datetime | None = None,
    bekannt_am: datetime | None = None,
    cap: int | None = None,
) -> dict[str, Any]:
    """The parameters of the `mappe` query: a current read unless `gueltig_am` is given
    (`as_of` makes the pair of instants), at most `cap` facts (the setting's by default)."""
    return {
        "user_id": user_id,
        "character_id": character_id,
        "entity_ids": entity_ids,
        # One more than the cap, so `build` can tell whether the cap cut anything.
        "cap": (cap or settings.mappe_cap) + 1,
        "schwelle": settings.ruhe_schwelle,
        "asof": gueltig_am is not None,
        # One map, so that a current and an as-of read share one plan (see the query). A
        # current read never compares with the instants; a datetime costs the driver
        # ~0.15 ms of CPU to pack, so a current read sends none.
        "at": {} if gueltig_am is None else {
            "gueltig_us": _micros(gueltig_am), "bekannt_am": bekannt_am or KNOWN_NOW,
        },
        "derive": derive_pairs(canon),
        "symmetric_types": symmetric_types(canon),
        "einwertig_types": canon.einwertig_types,
    }


def symmetric_types(canon: Canon) -> list[str]:
    return sorted(r.rel_type for r in canon.relations.values() if r.symmetrisch)


def as_of(
    gueltig_am: datetime | None, bekannt_am: datetime | None
) -> tuple[datetime | None, datetime | None]:
    """The instants of a read: none for a current read. Given only `bekannt_am`, the read
    is of that moment (valid then, as known then); given only `gueltig_am`, of that
    moment as known now."""
    if gueltig_am is None and bekannt_am is not None:
        gueltig_am = bekannt_am
    return gueltig_am, bekannt_am


async def read_mappen(
    db: Database,
    canon: Canon,
    user_id: str,
    character_id: str,
    entity_ids: list[str],
    *,
    gueltig_am: datetime | None = None,
    bekannt_am: datetime | None = None,
    cap: int | None = None,
) -> list[Mappe]:
    """The Mappen of several entities, in the order asked: one query, one round trip,
    read again only where a write of the user committed while it ran (`_steady_read`)."""
    gueltig_am, bekannt_am = as_of(gueltig_am, bekannt_am)
    params = mappe_params(
        db.settings, canon, user_id, character_id, entity_ids,
        gueltig_am=gueltig_am, bekannt_am=bekannt_am, cap=cap,
    )
    rows = await _steady_read(db, user_id, params)
    mappen = []
    for eid in entity_ids:
        if eid not in rows:
            raise EntityNotFound(f"no entity with id {eid!r} for user {user_id!r}")
        mappen.append(build(rows[eid], canon, params["cap"] - 1, gueltig_am, bekannt_am,
                            schwelle=params["schwelle"]))
    return mappen


async def _steady_read(db: Database, user_id: str, params: dict[str, Any]) -> dict[str, Record]:
    """The `mappe` query's rows by entity id, read while no write of the user committed.

    Neo4j reads committed data, not a snapshot: a write that commits while a Mappe is
    read may be in it in part, and "as known at" the clock read before it would answer
    otherwise. Every write of the user sets the clock the query reads before and after
    the facts; where the two differ, the Mappe is read again, and after `STAND_READS`
    such reads (a user writing without pause) once under the user's lock, as an export
    reads, which no write of the user passes."""
    # An as-of read known at an instant no later than the clock read first takes no
    # version a write that commits meanwhile records or replaces (those come after the
    # clock): it stands as it is.
    known = params["at"].get("bekannt_am")
    upto = None if known is None else _micros(known)

    def steady(row: Record) -> bool:
        return row["stand"] == row["stand_nach"] or (
            upto is not None and row["stand"] is not None and upto <= row["stand"])

    for _ in range(STAND_READS):
        rows = await db.plain_query("mappe", **params)
        if all(steady(row) for row in rows):
            return {row["id"]: row for row in rows}

    async def locked(tx: Tx) -> list[Record]:
        await tx.run("transfer_lock", user_id=user_id)
        return await tx.plain_run("mappe", **params)

    async with db.user_turn(user_id):
        return {row["id"]: row for row in await db.write(locked)}


def render(
    mappe: Mappe, budget: int = 1500, *, heute: date | None = None, jetzt: datetime | None = None,
) -> str:
    """The Mappe as a compact, deterministic German text block within `budget` characters.

    Read at an instant: `gueltig_am`, else `jetzt`, else the start of `heute`, else now
    (UTC). A fact's *ab* is shown where it tells something: from an event, beside the
    history of its relation or a value of it that still holds, and whenever it lies after
    the instant read, so a value that begins later never reads as holding now; a superseded
    value that has not ended by the instant read reads "noch bis", not "früher" (its end
    to the instant: "from tomorrow" in Berlin ends a value at 23:00 UTC today), and one
    that begins and ends ahead (its start to the instant too) reads with both its days."""
    name = mappe.entitaet.name
    lines = [f"{name} ({mappe.typ})"]
    now = mappe.gueltig_am or jetzt or (
        datetime.combine(heute, time.min, tzinfo=UTC) if heute else datetime.now(UTC))
    day = now.date()

    def ahead(f: MappeFakt | Abgeleitet) -> bool:
        """Begins after the instant read (by its day where no instant is given)."""
        if f.ab_zeitpunkt is not None:
            return f.ab_zeitpunkt > now
        return f.ab_datum is not None and f.ab_datum > day

    def mark(f: MappeFakt) -> str:
        note = HERKUNFT_MARK.get(f.herkunft)
        return f" [{note}]" if note else ""

    def obj(f: MappeFakt) -> str:
        return f.objekt.name if f.objekt else f"„{f.wert}“"

    def ended(f: MappeFakt) -> bool:
        if f.bis_zeitpunkt is not None:
            return f.bis_zeitpunkt <= now
        return f.bis_datum is not None and f.bis_datum <= day

    def until(f: MappeFakt, ab: str) -> str:
        # A value told of another entity that still holds: "noch bis", as in a history
        # (and "bis" once it has ended, read later than the Mappe).
        if not f.bis:
            return ab
        if ahead(f):
            return f" (ab {f.ab} bis {f.bis})"
        return f" (bis {f.bis})" if ended(f) else f" (noch bis {f.bis})"

    history_rels = {h.beziehung for h in mappe.historie}
    # A value told of another that still holds: the values of its relation show their
    # *ab* beside it, as beside a history ("Lena wohnt in Paris (ab 6. Dezember)" under
    # "Lena wohnt in Kassel (noch bis 6. Dezember)": a move later that day read as two
    # homes).
    moving = {(f.subjekt.id, f.beziehung) for f in mappe.fakten if f.bis}
    # The values of the history that have not ended — the one that still holds ("noch
    # bis": superseded from a later instant on), then those that begin and end ahead,
    # in the order they begin — read first among their relation's facts, before the
    # value that follows them: the budget cuts the text from the end, and cut after the
    # facts it dropped the value that holds and kept the one to come (a stranger's
    # audit: 40 hobbies, and "wohnt in Kassel (ab 1. März 2027)" without Berlin, where
    # Lena lives now). Ended values ("früher") stay below.
    def history_line(h: MappeFakt) -> str:
        if ahead(h):
            # Begins and ends ahead (told to begin later, superseded from a day after
            # that): a line of the history that has not begun, never one that holds.
            return f"- {h.text} {obj(h)} (ab {h.ab} bis {h.bis}){mark(h)}"
        if not ended(h):
            # Superseded from a later instant on (a value told with a later start): it
            # still holds when read, so it is no former value yet.
            return f"- {h.text} {obj(h)} (noch bis {h.bis}){mark(h)}"
        return f"- früher: {h.text} {obj(h)} (bis {h.bis}){mark(h)}"

    def begins(h: MappeFakt) -> datetime:
        if h.ab_zeitpunkt is not None:
            return h.ab_zeitpunkt
        return datetime.combine(h.ab_datum or date.min, time.min, tzinfo=UTC)

    not_ended = [h for h in mappe.historie if not ended(h)]  # (one ahead has not ended)
    holding: dict[str, list[str]] = {}
    for h in sorted(not_ended, key=lambda h: (ahead(h), begins(h))):  # (stable: holds first)
        holding.setdefault(h.beziehung, []).append(history_line(h))
    placed = {rel for rel in holding if any(
        f.grad == 1 and f.beziehung == rel for f in mappe.fakten)}
    for f in mappe.fakten:
        if f.grad != 1:
            continue
        if f.beziehung in placed:
            lines += holding.pop(f.beziehung, [])
        shown = (f.aus_ereignis or f.beziehung in history_rels or ahead(f)
                 or (f.subjekt.id, f.beziehung) in moving)
        ab = until(f, f" (ab {f.ab})" if f.ab and shown else "")
        if f.subjekt.id == mappe.entitaet.id:
            lines.append(f"- {f.text} {obj(f)}{ab}{mark(f)}")
        else:
            lines.append(f"- {f.subjekt.name} {f.text} {name}{ab}{mark(f)}")
    # The rest of the history in its order: ended values, and those of a relation
    # without a fact to read them beside.
    lines += [history_line(h) for h in mappe.historie
              if h.beziehung not in placed or ended(h)]
    for d in mappe.abgeleitet:
        shown = d.aus_ereignis or d.beziehung in history_rels or ahead(d)
        ab = f", ab {d.ab}" if d.ab and shown else ""
        lines.append(f"- abgeleitet: {d.text} {d.objekt.name} (über {', '.join(d.pfad)}{ab})")
    for f in mappe.fakten:
        if f.grad == 2:
            shown = (f.aus_ereignis or ahead(f)
                     or (f.subjekt.id, f.beziehung) in moving)
            ab = until(f, f" (ab {f.ab})" if f.ab and shown else "")
            lines.append(f"  · {f.subjekt.name} {f.text} {obj(f)}{ab}{mark(f)}")
    out: list[str] = []
    used = 0
    for line in map(one_line, lines):  # older data may still hold line breaks
        if used + len(line) + 1 > budget:
            out.append("…")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)
