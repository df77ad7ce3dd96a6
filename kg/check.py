"""`kg check`: prove the store's invariants.

Neo4j Community has no existence or type constraints; the writer guarantees them and
this module verifies them, one named query per invariant (`cypher/queries/check.cypher`).
Every check reports a name, the group of invariants it proves (numbered as in
docs/decay-and-check.md), a count and a few sample ids. Group 7 is the decay
convention's §4 table: for each node label and relationship type, whether it carries
a decay property, whether that has a recent run, whether it is referenced, its
classification (memory, fact entity, forensics) and a verdict. The classification is
a judgement the schema cannot make (convention §4: the query delimits, it does not
decide), so it is kept here, in `CLASSES`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from datetime import UTC, date, datetime, timedelta
from functools import partial
from typing import Any, Literal, Protocol, get_args

from pydantic import Field, computed_field

from kg.canon import TYPEN, Canon
from kg.db import Database, Record
from kg.errors import NothingStored, StoredDataError
from kg.models import (
    BIDI_CONTROLS,
    BRAILLE_BLANK,
    ENTITY_PROPERTIES,
    FACT_PROPERTIES,
    HERKUNFT,
    INVISIBLE_CLASS,
    MAX_ID,
    MAX_NAME,
    MAX_WERT,
    ORDER_PROPERTIES,
    TIMELINE_PROPERTIES,
    AuftragErgebnis,
    EintragTyp,
    Frozen,
    field_types,
    normalize_name,
    parse_result,
    result_mismatch,
    shown,
)
from kg.values import native as _native

#: The fact-field check takes its fields and types from the model (`FACT_PROPERTIES`).
FACT_FIELDS = field_types(FACT_PROPERTIES)

Klasse = Literal["memory", "fact entity", "forensics", "unclassified"]

#: The text properties an export takes only within bounds (`kg.transfer.records`: a
#: `Name`, `Ident` or `Wert`): something left once stripped, at most this many
#: characters, no control characters (`TEXT_RULES`). By label; `fact` for every fact
#: edge, `Wert` for its value node.
TEXTS: dict[str, dict[str, int]] = {
    "Entitaet": {"id": MAX_ID, "user_id": MAX_ID, "name": MAX_NAME},
    "TimelineEintrag": {"id": MAX_ID, "user_id": MAX_ID, "character_id": MAX_ID,
                        "titel": MAX_NAME},
    "Auftrag": {"id": MAX_ID, "user_id": MAX_ID, "character_id": MAX_ID},
    "fact": {"id": MAX_ID, "user_id": MAX_ID, "character_id": MAX_ID, "auftrag_id": MAX_ID,
             "timeline_id": MAX_ID, "timeline_bis": MAX_ID},
    "Wert": {"wert": MAX_WERT},
}
#: The characters a strip takes off either end (Python's whitespace, U+00A0 among them):
#: a text that begins or ends with one an export writes changed ("nova " as "nova"), and
#: no surface, which strips what it is given, reaches an id so stored. Its first and last
#: character are compared with them (a regular expression over the whole text cost
#: `fact_fields` two thirds more on the bench's 1 M store).
SPACES = [chr(i) for i in range(0x110000) if chr(i).isspace()]
#: Java regular expressions for Cypher's `=~`, as the export's validators read a text:
#: `Name`, `Ident` and `Wert` strip what Python counts as whitespace (`str.isspace`:
#: also U+00A0, which Cypher's `trim` keeps) and then drop bidi controls; an entity's
#: name also drops every character that shows as nothing (`_stored_name`).
_SPACE = "".join(f"\\x{{{ord(c):X}}}" for c in SPACES)
_BIDI = "".join(f"\\x{{{ord(c):X}}}" for c in sorted(BIDI_CONTROLS))
TEXT_RULES = {
    # A control character (Unicode category Cc), which no name, id or value may hold.
    "control": r"(?s).*[\x00-\x1F\x7F-\x9F].*",
    # Nothing left once stripped and without bidi controls.
    "blank": f"[{_SPACE}{_BIDI}]*",
    # An entity's name with nothing visible.
    "invisible": f"[{_SPACE}\\x{{{ord(BRAILLE_BLANK):X}}}{INVISIBLE_CLASS}]*",
    # A character a strip keeps (the stripped length runs from the first to the last).
    "solid": f"[^{_SPACE}]",
}


def known_properties() -> dict[str, list[str]]:
    """The properties an export takes, by label (`fact` for every fact edge): the fields
    of its records (`kg.transfer.records`), but those it derives from the graph."""
    from kg.transfer.records import AuftragRec, EintragRec, EntitaetRec, FaktRec

    derived = {"kind", "beziehung", "subjekt", "objekt", "wert", "namensvettern"}
    return {label: [name for name in cls.model_fields if name not in derived]
            for label, cls in (("Entitaet", EntitaetRec), ("TimelineEintrag", EintragRec),
                               ("Auftrag", AuftragRec), ("fact", FaktRec))}


#: The checks, in the order of the invariant groups: name → (group, what it proves).
CHECKS: dict[str, tuple[int, str]] = {
    "fact_fields": (
        1, "every fact edge carries its required fields with their types, and its value "
        "node a value an export takes"
    ),
    "node_fields": (
        1, "every entity, timeline entry and order carries its fields with their types "
        "and the values an export takes"
    ),
    "order_results": (
        1, "every order's stored result is its own: it parses, and names the order, pair, "
        "status and number of triples of its record (a replay and an import read it), "
        "and every fact it says it wrote or touched is in the pair"
    ),
    "fact_herkunft": (1, "every fact's herkunft is mensch, nova, modell or recherche"),
    "fact_strength": (1, "every fact's staerke_decay lies in [0, 1]"),
    "fact_aktiv": (1, "aktiv agrees with t_invalid, t_expired and the correction state"),
    "einwertig_unique": (2, "at most one active fact per subject, einwertig relation and pair"),
    "duplicate_facts": (2, "no two identical active facts"),
    "duplicate_values": (2, "no two active values of one fact that differ only in case"),
    "relation_in_canon": (3, "every fact's relationship type is in the canon"),
    "relation_form": (3, "every fact has the canon's form (value vs entity object)"),
    "wert_nodes": (3, "every value node has exactly one incoming fact and no outgoing edge"),
    "nachfolger_unique": (4, "a timeline entry has at most one successor and one predecessor"),
    "nachfolger_cycles": (4, "no NACHFOLGER chain is a cycle"),
    "timeline_active_end": (4, "exactly the end of a chain is active (none when cancelled)"),
    "timeline_references": (
        4, "every timeline_id names an existing first entry of the pair, and a fact starts on "
        "a day of its event's chain"
    ),
    "timeline_cancelled": (4, "no active fact rests on a cancelled event"),
    "timeline_person": (4, "an entry names one person at most, the same as the one before it"),
    "ereignis_person": (4, "an event of a person (ereignis) names that person"),
    "one_user_per_fact": (5, "no fact links entities of two different users"),
    "timeline_pair": (5, "NACHFOLGER and BETRIFFT stay within one pair / one user"),
    "pair_ids": (5, "every user and character id is an id: not empty, no control characters"),
    "audit_retention": (
        6, "no order is older than the audit's retention: `kg audit prune` runs (§2)"
    ),
    "decay_has_a_run": (6, "the newest decay_am is recent: no decay properties without a run"),
    "decay_sweep_complete": (6, "the newest sweep reached every active fact edge"),
    "decay_strength": (6, "every active edge's strength is its sweep's (last_touched, decay_am)"),
    "decay_table": (7, "the decay convention's §4 table has no violated verdict"),
    # Item 8: what the Fakten-Agent guards.
    "self_loops": (8, "no fact has one entity at both ends"),
    "format_namesakes": (
        8, "no name is stored under two keys (two entities whose names the writer takes "
        "for one, e.g. differing only in characters that show as nothing)"
    ),
    "name_norm": (
        8, "every entity's name_norm is its name as the writer normalises it (a wrong one "
        "hides the entity from lookups by name)"
    ),
    "type_contradicts_fact": (8, "no entity's type contradicts a fact that stands in its span"),
    "type_missing": (
        8, "every entity that a fact standing in a pair gives a type has a specific type there"
    ),
    "sonstiges_after_type": (
        8, "no sonstiges holds after a specific type began in its pair (rule 4)"
    ),
    "transitive_cycles": (8, "no transitive relation closes a cycle within a pair"),
    "typ_values": (8, "every type fact's value is one of the six types"),
    "auftrag_key": (8, "an idempotency key is used at most once in a pair"),
    # Item 9: the bi-temporal record.
    "fact_interval": (9, "no valid interval ends before it starts (t_invalid >= t_valid)"),
    "fact_system_time": (
        9, "no version is replaced before it is recorded (t_expired >= t_recorded), "
        "nor recorded, replaced or touched after now"
    ),
    "fact_first_touch": (9, "no first version of a fact was touched before it was recorded"),
    "timeline_system_time": (
        9, "a moved timeline entry is replaced when its successor was recorded, "
        "none recorded after now"
    ),
    "fact_followers": (
        9, "every fact named as following a value (abgeloest_durch) is in its partition"
    ),
    "fact_end_event": (
        9, "a value that ends with an event is followed by a value of that event (one of "
        "the facts its abgeloest_durch names begins with it)"
    ),
    "user_clock": (
        9, "no user's clock (the system time of its last write) is after now, or before "
        "the user's records"
    ),
    "node_system_time": (9, "no entity was created, nor order recorded, after now"),
    "version_chains": (9, "every fact's versions form one well-formed chain"),
    "einwertig_overlap": (
        9, "no two values of an einwertig relation hold at the same valid and known time"
    ),
    "einwertig_followed": (
        9, "where a value of an einwertig relation ends, another value holds (no gaps)"
    ),
}

#: Classification of the graph's labels and non-fact relationship types (convention §2,
#: §5); every canon relationship type is memory (a binding, where the search runs).
CLASSES: dict[tuple[str, str], tuple[Klasse, str]] = {
    ("label", "Entitaet"): ("fact entity", "referenced by every fact; must not decay (§1.2)"),
    ("label", "Wert"): ("fact entity", "object of one value fact; the edge decays (§1.1)"),
    ("label", "TimelineEintrag"): ("fact entity", "a Termin does not fade (§2); timeline_id"),
    ("label", "Nutzer"): ("fact entity", "the human every user_id names; a write lock"),
    ("label", "Auftrag"): ("forensics", "audit: a retention period instead of decay (§2)"),
    ("label", "DecayLauf"): ("forensics", "the sweep's own protocol (§2)"),
    ("label", "SchemaMigration"): ("forensics", "protocol of applied migrations (§2)"),
    ("relationship", "NACHFOLGER"): ("fact entity", "part of the timeline's history (§2)"),
    ("relationship", "BETRIFFT"): ("fact entity", "links an event to its person (§2)"),
}

#: Properties that hold another element's id: the graph's foreign keys (§1.2).
REFERENCED_BY: dict[str, tuple[str, ...]] = {
    "TimelineEintrag": ("timeline_id", "timeline_bis"),
    "Auftrag": ("auftrag_id",),
    "Nutzer": ("user_id",),
}


class CheckResult(Frozen):
    """One invariant and what the store shows of it."""

    name: str = Field(description="Stable name of the check, e.g. einwertig_unique.")
    item: int = Field(
        description="The group of invariants it proves (1-9): 1 fact fields, 2 one value, "
        "3 canon form, 4 timeline chains, 5 one owner, 6 decay runs, 7 the decay table, "
        "8 the writer's guards, 9 the bi-temporal record."
    )
    title: str = Field(description="What it proves, in one line.")
    count: int = Field(description="Violations found; 0 means the invariant holds.")
    samples: list[str] = Field(default_factory=list, description="A few violations (ids).")
    detail: str | None = Field(None, description="What the numbers mean, when it is not obvious.")

    @computed_field(description="True when the invariant holds.")  # type: ignore[prop-decorator]
    @property
    def ok(self) -> bool:
        return self.count == 0


class TableRow(Frozen):
    """One row of the decay convention's §4 table, for a label or a relationship type."""

    kind: Literal["label", "relationship"] = Field(description="Node label or relationship type.")
    name: str = Field(description="The label or type.")
    count: int = Field(description="How many nodes or relationships (in scope).")
    classification: Klasse = Field(description="memory, fact entity, forensics (or unclassified).")
    reason: str = Field(description="Why it is classified so (convention section).")
    decay: list[str] = Field(description="Decay properties it carries (*_decay, decay_am).")
    newest_run: date | None = Field(None, description="The newest decay_am it carries.")
    recent_run: bool | None = Field(
        None, description="Whether that run is recent; None when it carries no decay_am."
    )
    referenced: bool = Field(description="Target of a relationship or of an id property.")
    verdict: str = Field(description="konform, or what is violated.")
    ok: bool = Field(description="False when the verdict is a violation.")


class CheckReport(Frozen):
    """Everything `kg check` found."""

    user_id: str | None = Field(None, description="The user checked; None: the whole database.")
    day: date = Field(description="The day recency was judged against.")
    checks: list[CheckResult] = Field(description="Every check, in the order of its group.")
    table: list[TableRow] = Field(description="The convention's §4 table for the graph.")

    @computed_field(description="True when no check found a violation.")  # type: ignore[prop-decorator]
    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def violations(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.ok]


# -- pure parts -------------------------------------------------------------------


def is_recent(newest: date | None, day: date, max_age_days: float) -> bool:
    """A run on `newest` still counts on `day` (a run after that day is no run)."""
    return newest is not None and 0 <= (day - newest).days <= max_age_days


def result(name: str, rows: list[Record], detail: str | None = None) -> CheckResult:
    """A check from its query's one row of `count` and `samples`."""
    row = rows[0]
    item, title = CHECKS[name]
    return CheckResult(
        name=name, item=item, title=title, count=row["count"],
        samples=[str(s) for s in row["samples"]], detail=detail,
    )


def decay_results(
    row: Record, day: date, max_age_days: float
) -> tuple[CheckResult, CheckResult]:
    """Item 6 from the decay state (pure): a recent run, and one that reached every edge."""
    newest = _native(row["newest"])
    carrying, future = row["with_strength"], row["future"]
    stale = row.get("stale", 0)
    recent = is_recent(newest, day, max_age_days)
    if carrying == 0 or (recent and not future and not stale):
        count = 0
        detail = f"newest run {newest}" if newest else "no fact edge carries a strength"
    elif recent and stale and not future:
        count = stale
        detail = (
            f"decay properties without a run: {stale} active fact edges carry staerke_decay "
            f"with no decay_am within {max_age_days:g} days, though they were last touched "
            f"before the newest run on {newest} — run `kg decay run`"
        )
    elif not recent:
        count = carrying
        age = f"is from {newest}, {(day - newest).days} days ago" if newest else "does not exist"
        # A decay_am after the day is not the newest run; say it is there, or "does not
        # exist" reads wrong to whoever finds one (the sweep's refusal points here).
        ahead = (f", and {future} carry a decay_am after {day}, a day no sweep can have "
                 "measured yet") if future else ""
        detail = (
            f"decay properties without a run: {carrying} active fact edges carry "
            f"staerke_decay, but the newest decay_am {age} (allowed: {max_age_days:g} "
            f"days){ahead} — schedule `kg decay run --if-due` daily"
        )
    else:
        count = future
        detail = (
            f"decay properties without a run: {future} active fact edges carry a decay_am "
            f"after {day}, a day no sweep can have measured yet"
        )
    ahead_runs = sorted(str(_native(t)) for t in row.get("runs_ahead") or [])
    if ahead_runs:
        # A run recorded for a day to come was never run: `--if-due` would skip that day.
        days = ", ".join(ahead_runs[:5]) + (" …" if len(ahead_runs) > 5 else "")
        note = (f"{len(ahead_runs)} decay run(s) recorded for a day after tomorrow "
                f"({days}), which no sweep can have reached (`kg decay run --if-due` would "
                "skip that day as done) — delete them: `kg decay forget-ahead`")
        count += len(ahead_runs)
        detail = note if count == len(ahead_runs) else f"{detail}; {note}"
    item, title = CHECKS["decay_has_a_run"]
    run_check = CheckResult(
        name="decay_has_a_run", item=item, title=title, count=count, detail=detail
    )
    missed = result(
        "decay_sweep_complete",
        [{"count": row["missed"], "samples": row["samples"]}],
        detail=(
            f"active fact edges last touched before {newest} that the sweep of that day "
            "did not reach (restored by an import after it ran, or written outside the "
            "library) — run `kg decay run` (without --if-due, which sees the day's sweep "
            "done) to sweep them now" if row["missed"] else None
        ),
    )
    return run_check, missed


def _decay_keys(lists: list[list[str]]) -> list[str]:
    return sorted({k for keys in lists for k in keys})


def classify(kind: str, name: str, canon: Canon) -> tuple[Klasse, str]:
    if kind == "relationship" and name in canon.by_type:
        return "memory", "a fact edge: a binding, where the search runs (§1.1)"
    return CLASSES.get((kind, name), ("unclassified", "not in the table: classify it (§4, §5)"))


def verdict(
    klasse: Klasse, decay: list[str], recent_run: bool | None, referenced: bool,
    active: bool = True,
) -> tuple[str, bool]:
    """The §4 judgement of one row: (verdict, conform) (pure). A memory type without an
    active edge needs no run: the sweep only measures active edges."""
    if klasse == "unclassified":
        return "open: not classified (§4 delimits, §5 decides)", False
    if klasse == "memory":
        if not decay:
            return "violated: memory without decay (§3.1)", False
        if not active:
            return "konform", True
        if not recent_run:
            return "violated: decay properties without a run (§3.3)", False
        return "konform", True
    if decay:
        why = "a reference target must not decay (§1.2)" if referenced else "must not decay (§2)"
        return f"violated: {why}", False
    return "konform", True


def table(
    labels: list[Record],
    relationships: list[Record],
    canon: Canon,
    day: date,
    max_age_days: float,
    run: date | None = None,
) -> list[TableRow]:
    """The §4 table from the two table queries (pure). A relationship type's run is
    recent when the store's newest run `run` is and it covers every active edge of the
    type (`unswept` is 0: edges written after the run need none)."""
    rows: list[TableRow] = []
    for kind, records, key in (("label", labels, "label"), ("relationship", relationships, "type")):
        for rec in records:
            name = rec[key]
            klasse, reason = classify(kind, name, canon)
            decay = _decay_keys(rec["decay_keys"])
            newest = _native(rec["newest"])
            recent = is_recent(newest, day, max_age_days) if "decay_am" in decay else None
            active = True
            if kind == "relationship" and "unswept" in rec:
                active = rec["active"] > 0
                recent = is_recent(run, day, max_age_days) and rec["unswept"] == 0
            referenced = kind == "label" and (rec["targeted"] > 0 or name in REFERENCED_BY)
            text, ok = verdict(klasse, decay, recent, referenced, active)
            rows.append(TableRow(
                kind=kind,
                name=name, count=rec["count"], classification=klasse, reason=reason,
                decay=decay, newest_run=newest if isinstance(newest, date) else None,
                recent_run=recent, referenced=referenced, verdict=text, ok=ok,
            ))
    return rows


def table_result(rows: list[TableRow]) -> CheckResult:
    item, title = CHECKS["decay_table"]
    bad = [r for r in rows if not r.ok]
    return CheckResult(
        name="decay_table", item=item, title=title, count=len(bad),
        samples=[f"{r.kind} {r.name}: {r.verdict}" for r in bad],
    )


# -- against the store ------------------------------------------------------------


def type_rules(canon: Canon) -> dict[str, Any]:
    """The canon's type rules as the check query's parameters."""
    rels = canon.relations.values()
    return {
        "subjekt_typen": {
            r.rel_type: list(r.subjekt_typen)
            for r in rels
            if r.subjekt_typen and r.name not in ("typ", "ist_ein")
        },
        "objekt_typ": {r.rel_type: r.objekt_typ for r in rels if r.objekt_typ},
        "klassen": {k: t for k, t in canon.klassen.items() if t != "sonstiges"},
        # (the relations that give their subject a type: one subject type allowed)
        "subjekt_typ_one": {
            r.rel_type: r.implied_subjekt_typ
            for r in rels
            if r.implied_subjekt_typ and r.name not in ("typ", "ist_ein")
        },
    }


def stored_key(value: Any) -> str:
    """A stored name_norm as a sample shows it: a text quoted, escaped (`shown`); none;
    or another type's value as it is (7)."""
    if value is None:
        return "none"
    return shown(value) if isinstance(value, str) else repr(value)


#: What mends a wrong name_norm, or one name stored under two keys.
RENORMALIZE = (
    "names stored by an earlier rule (or by hand): `kg schema renormalize` stores them as "
    "the writer would (`--dry-run` first shows what)"
)


def guard_results(one: Checks, canon: Canon, u: str | None, n: int) -> list[Job]:
    """Item 8: the checks of what the writer guards."""
    rels = canon.rel_types
    rules = type_rules(canon)
    return [
        one.job("check_self_loops", user_id=u, rel_types=rels, samples=n),
        partial(one.names, user_id=u, samples=n),
        one.job("check_type_contradicts_fact", user_id=u, samples=n,
                **{k: rules[k] for k in ("subjekt_typen", "objekt_typ", "klassen")}),
        one.job("check_type_missing", user_id=u, samples=n, objekt_typ=rules["objekt_typ"],
                klassen=rules["klassen"], subjekt_typ=rules["subjekt_typ_one"]),
        one.job("check_sonstiges_after_type", user_id=u, samples=n),
        one.job("check_transitive_cycles", user_id=u, transitive=canon.transitive_types,
                samples=n),
        one.job("check_typ_values", user_id=u, typen=list(TYPEN), samples=n),
        one.job("check_auftrag_key", user_id=u, samples=n),
    ]


#: A check (or a few in turn) not yet started: `run_checks` starts each when its turn
#: comes. Until then it is only a call to make, so a job never started (the list's
#: building failed, or an earlier check did) leaves nothing behind that was never awaited.
Job = Callable[[], Awaitable[Any]]

#: How many checks run at once, each in its own auto-commit read. A check of one user
#: is mostly round trips, so side by side it takes a fraction of the time; on a large
#: store each is a full pass, so they stay few.
CHECKS_AT_ONCE = 4


#: How many orders `order_results` reads at a time, each page in a read of its own
#: (at least 2: a page after the first repeats the last order of the page before).
#: 250 orders of ~2 KB read in ~20 ms, as fast per order as pages of 1,000
#: (`bench.check_orders`). The largest orders the model allows (200 triples and 200
#: corrections with long values) hold a few MB of result each by estimate (not
#: measured): a page of them would take some 30 s at the measured rate, within
#: `ORDER_PAGE_SECONDS`, where a page of 1,000 would not be.
ORDER_PAGE = 250

#: How many facts named by orders' results `order_results` looks up in one query
#: (`check_order_facts`): a subject's edges are read once per query it is in.
ORDER_FACTS = 10_000
#: How many facts named by orders' results `order_results` holds before it looks them
#: up (memory: ~100 bytes each).
ORDER_NAMED = 200_000

#: The client-side deadline of one such page (seconds): the socket's own silence bound
#: (the server's hint, 120 s), which the page's read then goes without
#: (`AutoCommit.page`).
ORDER_PAGE_SECONDS = 120.0


class Runner(Protocol):
    """What runs the check queries: an auto-commit session, or an open transaction."""

    async def run(self, name: str, /, **params: Any) -> list[Record]: ...

    async def page(self, name: str, /, within: float, **params: Any) -> list[Record]: ...


class Checks:
    """Runs one check by its query (`check_<name>`). In auto-commit reads (each
    check its own transaction), a stored value the query cannot read fails that check,
    with the server's message, and the other checks still run: a check that cannot see
    past a broken value must not hide what the others find. In a caller's transaction
    nothing runs after a failed query, so there the error is raised."""

    def __init__(self, q: Runner, own_transactions: bool) -> None:
        self.q = q
        self.own_transactions = own_transactions

    def job(self, query: str, /, **params: Any) -> Job:
        """The check of `query` with `params`, to run when its turn comes."""
        return partial(self, query, **params)

    async def __call__(self, query: str, /, **params: Any) -> CheckResult:
        name = query.removeprefix("check_")
        try:
            return result(name, await self.q.run(query, **params))
        except StoredDataError as exc:
            return self._unreadable(name, exc)

    def _unreadable(self, name: str, exc: StoredDataError) -> CheckResult:
        if not self.own_transactions:
            raise exc
        item, title = CHECKS[name]
        said = "" if exc.server_message is None else f" (the server: {exc.server_message})"
        return CheckResult(
            name=name, item=item, title=title, count=1, samples=[],
            detail=f"the check could not run: a stored value has a type or form its query "
            f"cannot use{said}; `fact_fields` and `node_fields` name the values of a wrong "
            "type or form (where they name none, this is a bug in kg: please report it)",
        )

    async def names(
        self, user_id: str | None, samples: int
    ) -> tuple[CheckResult, CheckResult]:
        """`format_namesakes` and `name_norm`, from one read of the names Cypher cannot
        judge (it cannot normalise a name as the writer does: `name_norm_rows` leaves
        out the plain ASCII names it can judge itself). A name whose stored key is not
        its key is wrong (name_norm); where another entity of the user has that key, or
        another wrong one the same, one name is stored under two keys (format_namesakes:
        names that differ only in what shows as nothing, most often)."""
        try:
            rows = await self.q.run("name_norm_rows", user_id=user_id)
            wrong = [(r, key) for r in rows
                     if r["name_norm"] != (key := normalize_name(r["name"]))]
            pairs = sorted({(str(r["user_id"]), key) for r, key in wrong})
            holders = {(h["user_id"], h["key"]): h["ids"] for h in (await self.q.run(
                "entities_by_keys", pairs=[{"user_id": u, "key": k} for u, k in pairs]
            ) if pairs else [])}
        except StoredDataError as exc:
            return self._unreadable("format_namesakes", exc), self._unreadable("name_norm", exc)
        stored: dict[tuple[str, str], dict[str, Any]] = {}
        for r, key in wrong:
            group = stored.setdefault((str(r["user_id"]), key), {})
            group[r["id"]] = r["name_norm"]
        right = {r["id"]: key for r, key in wrong}  # a wrong one's key is another
        for (u, key), ids in holders.items():
            for i in ids:
                if right.get(i, key) == key:
                    stored[u, key].setdefault(i, key)
        namesakes = [f"{u} {shown(key)}: {', '.join(sorted(group))}"
                     for (u, key), group in sorted(stored.items())
                     if len(group) > 1 and len(set(map(str, group.values()))) > 1]
        item, title = CHECKS["format_namesakes"]
        first = CheckResult(name="format_namesakes", item=item, title=title,
                            count=len(namesakes), samples=namesakes[:samples],
                            detail=RENORMALIZE if namesakes else None)
        item, title = CHECKS["name_norm"]
        samples_ = [f"{r['id']} ({shown(r['name'])} is {shown(key)}, stored "
                    f"{stored_key(r['name_norm'])})" for r, key in wrong[:samples]]
        return first, CheckResult(name="name_norm", item=item, title=title, count=len(wrong),
                                  samples=samples_, detail=RENORMALIZE if wrong else None)

    async def retention(
        self, user_id: str | None, oldest: date, days: int, samples: int
    ) -> CheckResult:
        """The audit's retention of `days` (`KG_AUDIT_RETENTION_DAYS`) counted back from
        `oldest`, the oldest day a daily job's run still counts as recent (as for the
        sweep)."""
        before = datetime.combine(oldest, datetime.min.time(), UTC) - timedelta(days=days)
        found: CheckResult = await self.job(
            "check_audit_retention", user_id=user_id, before=before, samples=samples)()
        if found.count:
            found = found.model_copy(update={"detail": (
                f"orders recorded before {before.date()} ({days} days of retention, "
                "KG_AUDIT_RETENTION_DAYS, before the days a daily job may miss): run `kg "
                "audit prune` and schedule it daily with the sweep (docs/decay-and-check.md)"
            )})
        return found

    async def order_results(self, user_id: str | None, samples: int) -> CheckResult:
        """`order_results`: each order's stored result read here, as a replay and an
        import read it (Cypher cannot parse JSON), pair by pair and page by page: a
        store keeps an order for every turn of a chat, and no read may run for long."""
        item, title = CHECKS["order_results"]
        count, wrong = 0, list[str]()

        def found(row: Mapping[str, Any], problem: str) -> None:
            nonlocal count
            count += 1
            if len(wrong) < samples:
                wrong.append(f"{row['id']} of {row['user_id']}/{row['character_id']} "
                             f"({problem})")

        try:
            for pair in await self.q.run("order_pairs", user_id=user_id):
                # Of each subject, the facts the pair's results name, and which orders
                # name each: looked up once the pair's orders are read, so each
                # subject's edges are read once per ORDER_FACTS facts named at it, not
                # once per page (a human's thousands of facts, for every page, grew
                # with the square of the chat). At most ORDER_NAMED of them are held:
                # then they are looked up, and the next orders' after (an order's facts
                # are never parted).
                named: dict[str, dict[str, list[tuple[str, str]]]] = {}
                held = 0
                async for row in self._orders_of(pair["user_id"], pair["character_id"]):
                    problem, result = read_result(row)
                    if result is None:
                        found(row, str(problem))
                        continue
                    for ref in facts_named(result):
                        named.setdefault(ref["subjekt_id"], {}).setdefault(
                            ref["fakt_id"], []).append((row["id"], ref["ausgang"]))
                        held += 1
                    if held >= ORDER_NAMED:
                        await self._report_missing(pair, named, found)
                        named, held = {}, 0
                await self._report_missing(pair, named, found)
        except StoredDataError as exc:
            return self._unreadable("order_results", exc)
        return CheckResult(name="order_results", item=item, title=title, count=count,
                           samples=wrong)

    async def _report_missing(
        self, pair: Record, named: dict[str, dict[str, list[tuple[str, str]]]],
        found: Callable[[Mapping[str, Any], str], None],
    ) -> None:
        """One finding per order whose result names facts (`named`) the pair does not
        have."""
        gone: dict[str, list[str]] = {}
        for subjekt_id, fakt_id in await self._missing_facts(pair, named):
            for order_id, ausgang in named[subjekt_id][fakt_id]:
                gone.setdefault(order_id, []).append(f"{fakt_id} ({ausgang})")
        for order_id, facts in sorted(gone.items()):
            found({"id": order_id, **pair},
                  f"its result names fact{'s' if len(facts) > 1 else ''} "
                  f"{', '.join(facts)}, which this pair does not have")

    async def _missing_facts(
        self, pair: Record, named: dict[str, dict[str, list[tuple[str, str]]]]
    ) -> list[tuple[str, str]]:
        """Of the facts `named` at each subject, those the pair does not have (a fact
        deleted, or moved to another pair, by hand), as (subject, fact) pairs; a query
        per ORDER_FACTS facts named."""
        chunks: list[list[dict[str, Any]]] = [[]]
        size = 0
        for subjekt_id, facts in sorted(named.items()):
            ids = sorted(facts)
            for first in range(0, len(ids), ORDER_FACTS):
                part = ids[first:first + ORDER_FACTS]
                if size + len(part) > ORDER_FACTS:
                    chunks.append([])
                    size = 0
                chunks[-1].append({"subjekt_id": subjekt_id, "ids": dict.fromkeys(part, True)})
                size += len(part)
        missing: list[tuple[str, str]] = []
        for refs in chunks:
            if not refs:
                continue
            for row in await self.q.run("check_order_facts", user_id=pair["user_id"],
                                        character_id=pair["character_id"], refs=refs):
                ref = refs[row["n"]]
                have = set(row["found"])
                missing.extend((ref["subjekt_id"], f) for f in ref["ids"] if f not in have)
        return missing

    async def _orders_of(self, user_id: Any, character_id: Any) -> AsyncIterator[Record]:
        """The pair's orders that keep their result as text, a page at a time (keyset:
        from the last id of the page before, which the next page repeats)."""
        after, first = "", True
        while True:
            page = await self.q.page("order_result_page", ORDER_PAGE_SECONDS, user_id=user_id,
                                     character_id=character_id, after=after,
                                     limit=ORDER_PAGE)
            for row in page:
                if (first or row["id"] != after) and isinstance(row["ergebnis"], str):
                    yield row
            if len(page) < ORDER_PAGE:
                return
            after, first = page[-1]["id"], False


#: The outcomes whose `fakt_id` is a fact the order wrote or touched, in its pair.
WROTE = ("geschrieben", "abgeloest", "nachgetragen", "unveraendert")


def facts_named(result: AuftragErgebnis) -> list[dict[str, str]]:
    """The facts an order's result says it wrote or touched, each with the entity it
    is found at (its subject), for `check_order_facts`."""
    return [{"fakt_id": r.fakt_id, "subjekt_id": r.subjekt_id, "ausgang": r.ausgang}
            for r in result.ergebnisse if r.ausgang in WROTE and r.fakt_id and r.subjekt_id]


def read_result(row: Record) -> tuple[str | None, AuftragErgebnis | None]:
    """The stored result of the order `row` (order_result_page) as the import reads it,
    or what is wrong with it (then no result): a result that does not parse, or one of
    another order."""
    try:
        result = parse_result(row["ergebnis"])
    except ValueError as exc:
        return str(exc), None
    problem = result_mismatch(result, row["id"], row["user_id"], row["character_id"],
                              row["status"], row["anzahl_tripel"])
    return problem, None if problem else result


class SessionPerQuery:
    """Runs each query in an auto-commit read of a session of its own, so that checks
    can run side by side."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def run(self, name: str, /, **params: Any) -> list[Record]:
        async with self._db.auto_commit("READ") as q:
            return await q.run(name, **params)

    async def page(self, name: str, /, within: float, **params: Any) -> list[Record]:
        async with self._db.auto_commit("READ") as q:
            return await q.page(name, within, **params)


async def _in_turn(jobs: list[Job]) -> list[Any]:
    """Each job after the one before (a transaction runs one query at a time)."""
    return [await job() for job in jobs]


async def _side_by_side(jobs: list[Job], at_once: int) -> list[Any]:
    """The jobs' results in their order, at most `at_once` running at a time. The first
    failure cancels the rest and is raised as itself."""
    gate = asyncio.Semaphore(at_once)

    async def gated(job: Job) -> Any:
        async with gate:
            return await job()

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(gated(job)) for job in jobs]
    except BaseExceptionGroup as failed:
        first = failed.exceptions[0]
        raise first from first.__cause__  # as itself, with the driver's error it names
    return [task.result() for task in tasks]


async def refuse_nothing_stored(
    db: Database, user_id: str,
    nothing: str = "nothing was checked (`kg check` without --user checks the whole store)",
) -> None:
    """NothingStored when the store holds no entity, fact, timeline entry, order or lock
    node of the user (what `kg purge` of the user would delete); `nothing` says what was
    not done, and how to do it for every user."""
    (row,) = await db.query("check_user_held", user_id=user_id)
    if not row["held"]:
        raise NothingStored(
            f"user {user_id!r} has nothing in this store (no entity, fact, timeline entry, "
            f"order or lock node): a typo in the id, most likely, or purged; {nothing}"
        )


async def run_checks(
    db: Database,
    canon: Canon,
    user_id: str | None = None,
    day: date | None = None,
    samples: int = 5,
    tx: Runner | None = None,
    at_once: int = CHECKS_AT_ONCE,
) -> CheckReport:
    """Every check, one query each, in auto-commit read transactions (on a large graph
    a full pass may take longer than the interactive query timeout), up to `at_once`
    side by side. With `tx` the checks run in turn inside that
    transaction (an import checks its own writes before commit)."""
    day = day or datetime.now(UTC).date()
    max_age = db.settings.decay_max_age_days
    oldest = day - timedelta(days=int(max_age))  # the oldest day still recent
    u, rels, n = user_id, canon.rel_types, samples
    symmetric = sorted(r.rel_type for r in canon.relations.values() if r.symmetrisch)
    if user_id is not None and tx is None:
        # Every check of a user the store holds nothing of passes: a monitoring job with
        # a typo in --user would report clean forever. (An import checks inside its own
        # transaction, after it has written the user's records.)
        await refuse_nothing_stored(db, user_id)
    q: Runner = tx if tx is not None else SessionPerQuery(db)
    known = known_properties()
    one = Checks(q, own_transactions=tx is None)

    async def decay_and_table() -> tuple[tuple[CheckResult, CheckResult], list[TableRow]]:
        state = (await q.run(
            "check_decay_state", user_id=u, rel_types=rels, day=day, oldest=oldest,
            samples=n))[0]
        run = _native(state["newest"])
        rows = table(
            await q.run("check_table_labels", user_id=u),
            await q.run("check_table_relationships", user_id=u, run=run, oldest=oldest),
            canon, day, max_age, run,
        )
        return decay_results(state, day, max_age), rows

    first: list[Job] = [
        one.job("check_fact_fields", user_id=u, rel_types=rels, fields=FACT_FIELDS,
                order=[*(p.name for p in FACT_PROPERTIES), "wert"], texts=TEXTS,
                rules=TEXT_RULES, spaces=SPACES, known=known,
                typen=[typ for typ in TYPEN if typ != "sonstiges"], samples=n),
        one.job("check_node_fields", user_id=u, entity=field_types(ENTITY_PROPERTIES),
                entry=field_types(TIMELINE_PROPERTIES), order=field_types(ORDER_PROPERTIES),
                typen=list(get_args(EintragTyp)), texts=TEXTS, rules=TEXT_RULES, spaces=SPACES,
                known=known, samples=n),
        partial(one.order_results, user_id=u, samples=n),
        one.job("check_fact_herkunft", user_id=u, rel_types=rels, herkunft=list(HERKUNFT),
                samples=n),
        one.job("check_fact_strength", user_id=u, rel_types=rels, samples=n),
        one.job("check_fact_aktiv", user_id=u, rel_types=rels, einwertig=canon.einwertig_types,
                samples=n),
        one.job("check_einwertig_unique", user_id=u, einwertig=canon.einwertig_types,
                symmetric=symmetric, samples=n),
        one.job("check_duplicate_facts", user_id=u, rel_types=rels, symmetric=symmetric,
                samples=n),
        one.job("check_duplicate_values", user_id=u, rel_types=rels, samples=n),
        one.job("check_relation_in_canon", user_id=u, rel_types=rels, samples=n),
        one.job("check_relation_form", user_id=u, rel_types=rels,
                value_types=canon.value_types, samples=n),
        one.job("check_wert_nodes", user_id=u, value_types=canon.value_types, samples=n),
        one.job("check_nachfolger_unique", user_id=u, samples=n),
        one.job("check_nachfolger_cycles", user_id=u, samples=n),
        one.job("check_timeline_active_end", user_id=u, samples=n),
        one.job("check_timeline_references", user_id=u, rel_types=rels, samples=n),
        one.job("check_timeline_cancelled", user_id=u, rel_types=rels, samples=n),
        one.job("check_timeline_person", user_id=u, samples=n),
        one.job("check_ereignis_person", user_id=u, samples=n),
        one.job("check_one_user_per_fact", user_id=u, rel_types=rels, samples=n),
        one.job("check_timeline_pair", user_id=u, samples=n),
        one.job("check_pair_ids", user_id=u, max_id=MAX_ID, spaces=SPACES, samples=n),
        partial(one.retention, user_id=u, oldest=oldest,
                days=db.settings.audit_retention_days, samples=n),
    ]
    then: list[Job] = [
        *guard_results(one, canon, u, n),
        one.job("check_fact_interval", user_id=u, rel_types=rels, samples=n),
        one.job("check_fact_system_time", user_id=u, rel_types=rels, samples=n),
        one.job("check_fact_first_touch", user_id=u, rel_types=rels, samples=n),
        one.job("check_timeline_system_time", user_id=u, samples=n),
        one.job("check_fact_followers", user_id=u, rel_types=rels, symmetric=symmetric,
                samples=n),
        one.job("check_fact_end_event", user_id=u, rel_types=rels, symmetric=symmetric,
                samples=n),
        one.job("check_user_clock", user_id=u, rel_types=rels, samples=n),
        one.job("check_node_system_time", user_id=u, samples=n),
        one.job("check_version_chains", user_id=u, rel_types=rels, samples=n),
        one.job("check_einwertig_overlap", user_id=u, einwertig=canon.einwertig_types,
                symmetric=symmetric, samples=n),
        one.job("check_einwertig_followed", user_id=u, rel_types=rels,
                einwertig=canon.einwertig_types, symmetric=symmetric, samples=n),
    ]
    # The strengths' scan of every active edge is a job of its own, side by side with the
    # sweep's state and table, which its result follows in the report.
    swept = one.job("check_decay_strength", user_id=u, rel_types=rels,
                    rate=db.settings.decay_rate, samples=n)
    jobs = [*first, decay_and_table, swept, *then]
    done = await (_in_turn(jobs) if tx is not None else _side_by_side(jobs, at_once))
    found: list[CheckResult] = done[:len(first)]
    decay, rows = done[len(first)]
    found.extend(decay)
    found.append(done[len(first) + 1])
    found.append(table_result(rows))
    for then_found in done[len(first) + 2:]:  # `names` answers two checks
        found.extend(then_found if isinstance(then_found, tuple) else [then_found])
    return CheckReport(user_id=user_id, day=day, checks=found, table=rows)
