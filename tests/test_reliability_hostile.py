"""Reliability: hostile input: every order is rejected with a reason or written literally.

Hypothesis generates orders from random unicode, control characters, huge strings,
Cypher and JSON injection text, wrong types, unknown relations, and the entity and
timeline ids of another user. For each order the library either

* raises InvalidInput with a message (a malformed order), or
* returns a result in which every triple is written, unchanged, or rejected with a
  `grund` and a `meldung` — and what was written is in the graph literally (read back
  by fact id: subject name, value, relationship type, pair).

Every order_apply the agent sends is inspected on its way out: its relationship types
are canon types. Afterwards `kg check` is clean for every user written to, and the
other user's data is unchanged byte for byte.

Bounded by default (250 orders); KG_STRESS=1 runs 3000.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import unicodedata
import uuid
from datetime import date
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kg.api import SyncMemory
from kg.db import Tx
from kg.errors import InvalidInput
from kg.models import (
    MAX_ID,
    AuftragErgebnis,
    NeuerEintrag,
    clean_name,
    clean_value,
    normalize_name,
    normalize_text,
    value_key,
)
from tests.conftest import new_user_id
from tests.reliability_support import DONE, Stopwatch, cypher, size, violations

EXAMPLES = size(250, 3000)

INJECTIONS = [
    "x'}) MATCH (n) DETACH DELETE n //",
    '"}) MATCH (n) DETACH DELETE n //',
    "Lena`]->(x) DETACH DELETE x //",
    "wohnt_in]->() MATCH (n) SET n.user_id = 'pwned' //",
    "$user_id",
    "$(rel)",
    "{user_id}",
    "${user_id}",
    "%(user_id)s",
    "{0}",
    "' OR 1=1 --",
    "Robert'); DROP TABLE Students;--",
    "CALL dbms.security.createUser('x', 'y', false)",
    "LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l",
    "MATCH (n) RETURN n",
    '{"auftrag_id": "x", "user_id": "victim", "tripel": []}',
    '"}, "user_id": "victim", "x": {"',
    "\\u0000\\n",
    "<script>alert(1)</script>",
    "../../etc/passwd",
    "\u202eevil\u202c",
    "\u200b\u200d\ufeff",
    "NaN",
    "null",
    "1e309",
    "WOHNT_IN",
    "  wohnt_in  ",
    "😀" * 3,
    "ﷺ",
]
SIZES = [1, 199, 200, 201, 1999, 2000, 2001, 100_000]


def huge() -> st.SearchStrategy[str]:
    return st.builds(
        lambda c, n: c * n,
        st.sampled_from(["A", "ß", "ﷺ", "😀", " ", "\u200b", "'", "\\"]),
        st.sampled_from(SIZES),
    )


TEXT = st.one_of(
    st.text(max_size=30),  # random unicode, control characters included
    st.sampled_from(INJECTIONS),
    st.text(st.characters(categories=["Cc", "Cf", "Zl", "Zp", "Zs"]), min_size=1, max_size=5),
    huge(),
)
WRONG = st.one_of(
    st.integers(), st.floats(allow_nan=True), st.none(), st.booleans(),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(),
                                                        max_size=2),
)
RELATIONS = ["wohnt_in", "beruf", "partner", "hobby", "hat_haustier", "typ", "ist_ein",
             "liegt_in", "geschwister", "hat", "besitzt"]
TYPEN = ["person", "ort", "tier", "objekt", "organisation", "sonstiges"]


def mostly(good: st.SearchStrategy[Any], *bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`good` nine times in ten (one_of would draw each branch alike)."""
    return st.integers(0, 9).flatmap(lambda k: good if k else st.one_of(*bad))


#: Names the guards work on: people, animals and places an order repeats in any role.
GUARDED = ["Lena", "Tom", "Rex", "Bello", "Kassel", "Hessen", "Erde", "Deutschland"]
FORMAT = ["\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u202c", "\u2066"]
KLASSEN = ["Hund", "Katze", "Stadt", "Land", "Frau", "Firma", "Auto", "Drache"]
#: Places only containment names: a ring of them closes a cycle, within an order or across.
RING = ["Nordstadt", "Mittelland", "Südreich"]


def ring(herkunft: st.SearchStrategy[str]) -> st.SearchStrategy[list[dict[str, Any]]]:
    """An order that walks a ring of containment: its last triple closes the cycle."""
    def triples(order: list[str], h: str) -> st.SearchStrategy[list[dict[str, Any]]]:
        steps = list(zip(order, order[1:] + order[:1], strict=True))
        return st.tuples(*[st.tuples(variant(a), variant(b)) for a, b in steps]).map(
            lambda names: [{"subjekt": a, "beziehung": "liegt_in", "objekt": b,
                            "herkunft": h} for a, b in names])
    return st.tuples(st.permutations(RING), herkunft).flatmap(lambda p: triples(list(p[0]),
                                                                                  p[1]))


def variant(name: str) -> st.SearchStrategy[str]:
    """The same name as a person types it: case, spacing, invisible format characters."""
    sprinkled = st.lists(st.tuples(st.integers(0, len(name)), st.sampled_from(FORMAT)),
                         min_size=1, max_size=3).map(
        lambda marks: "".join(
            c + "".join(m for p, m in marks if p == i) for i, c in enumerate(" " + name)
        )[1:] + "".join(m for p, m in marks if p == len(name)))
    return st.one_of(st.just(name), st.just(name.upper()), st.just(f" {name} "), sprinkled)


def guarded(herkunft: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Triples the writer must guard against: self-references, names with
    format characters, type flips (typ, ist_ein, typ-implying relations, the triple's
    `typ`) and containment that closes cycles."""
    name = st.sampled_from(GUARDED).flatmap(variant)
    self_ref = st.builds(
        lambda base, rel, h: base.flatmap(lambda n: st.tuples(variant(n), variant(n))).map(
            lambda pair: {"subjekt": pair[0], "objekt": pair[1], "beziehung": rel,
                          "herkunft": h}),
        st.just(st.sampled_from(GUARDED)),
        st.sampled_from(["wohnt_in", "partner", "liegt_in", "geschwister", "begleitet"]),
        herkunft,
    ).flatmap(lambda strategy: strategy)
    flip = st.one_of(
        st.fixed_dictionaries({"subjekt": name, "beziehung": st.just("typ"),
                               "wert": st.sampled_from(TYPEN), "herkunft": herkunft}),
        st.fixed_dictionaries({"subjekt": name, "beziehung": st.just("ist_ein"),
                               "wert": st.sampled_from(KLASSEN), "herkunft": herkunft}),
        st.fixed_dictionaries({"subjekt": name, "beziehung": st.sampled_from(["beruf", "hobby"]),
                               "wert": st.sampled_from(["Polizeihund", "Lesen"]),
                               "herkunft": herkunft},
                              optional={"typ": st.sampled_from(TYPEN)}),
        st.fixed_dictionaries({"subjekt": name, "objekt": name, "herkunft": herkunft,
                               "beziehung": st.sampled_from(["wohnt_in", "hat_haustier",
                                                             "besitzt", "begleitet"])},
                              optional={"typ": st.sampled_from(TYPEN)}),
    )
    places = st.sampled_from(["Kassel", "Hessen", "Erde", "Deutschland"]).flatmap(variant)
    cycle = st.fixed_dictionaries({"subjekt": places, "beziehung": st.just("liegt_in"),
                                   "objekt": places, "herkunft": herkunft})
    return st.one_of(self_ref, flip, cycle)


class Target:
    """Ids the strategies can draw from: the hostile user's own, and a victim's."""

    own_entities: list[str]
    own_entries: list[str]
    victim_entities: list[str]
    victim_entries: list[str]


def strategies(target: Target, user: str) -> st.SearchStrategy[Any]:
    name = st.one_of(st.sampled_from(["Lena", "Kassel", "Bello", "lena ", "LENA"]), TEXT)
    ref = st.one_of(
        name,
        st.builds(lambda i: {"id": i}, st.sampled_from(target.own_entities)),
        st.builds(lambda i: {"id": i}, st.sampled_from(target.victim_entities)),
        st.builds(lambda i: {"id": i}, st.one_of(TEXT, WRONG)),
        st.builds(lambda n: {"neu": n}, name),
        st.just({"id": "x", "neu": "y"}),
        WRONG,
    )
    beziehung = st.one_of(st.sampled_from(RELATIONS), TEXT, WRONG)
    wert = st.one_of(st.sampled_from([*TYPEN, "Ärztin", "Lesen"]), TEXT, WRONG)
    entry = st.one_of(
        st.sampled_from(target.own_entries), st.sampled_from(target.victim_entries), TEXT, WRONG
    )
    ereignis = st.one_of(
        st.fixed_dictionaries(
            {"titel": name, "beginn": st.sampled_from(["2026-11-03", "2026-13-40", "gestern"])},
            optional={"typ": st.sampled_from(["ereignis", "termin", "drache"]),
                      "genauigkeit": st.sampled_from(["tag", "monat", "jahr"]),
                      "ende": st.sampled_from(["2026-11-01", "2027-01-01"])},
        ),
        WRONG,
    )
    triple = st.fixed_dictionaries(
        {"subjekt": ref, "beziehung": beziehung},
        optional={
            "objekt": ref, "wert": wert,
            "herkunft": st.one_of(st.sampled_from(["mensch", "nova", "modell", "recherche"]),
                                  TEXT, WRONG),
            "timeline_id": entry, "ereignis": ereignis, "extra": TEXT,
        },
    )
    # Well-formed triples whose text is hostile but allowed: these get written, and
    # what they carry must come back literally.
    printable = st.one_of(
        st.sampled_from(["Lena", "Kassel", "Bello", "lena ", "LENA", *INJECTIONS]),
        st.text(st.characters(exclude_categories=["Cc", "Cs"]), min_size=1, max_size=30),
    ).filter(lambda x: x.strip() != "")
    herkunft = st.sampled_from(["mensch", "nova", "modell", "recherche"])
    valid_triple = st.one_of(
        st.fixed_dictionaries({
            "subjekt": printable, "herkunft": herkunft, "objekt": printable,
            "beziehung": st.sampled_from(["wohnt_in", "partner", "hat_haustier", "liegt_in",
                                          "geschwister", "besitzt", "begleitet"]),
        }),
        st.fixed_dictionaries({
            "subjekt": printable, "herkunft": herkunft, "wert": printable,
            "beziehung": st.sampled_from(["beruf", "hobby", "hat", "ist_ein"]),
        }),
        st.fixed_dictionaries({
            "subjekt": printable, "herkunft": herkunft, "wert": st.sampled_from(TYPEN),
            "beziehung": st.just("typ"),
        }),
    )
    # Well-formed, but naming what is not the user's: another user's entity or timeline
    # entry, or a relation outside the canon.
    foreign = st.one_of(
        st.fixed_dictionaries({
            "subjekt": st.builds(lambda i: {"id": i}, st.sampled_from(target.victim_entities)),
            "beziehung": st.just("hobby"), "wert": printable, "herkunft": herkunft,
        }),
        st.fixed_dictionaries({
            "subjekt": printable, "beziehung": st.just("wohnt_in"), "herkunft": herkunft,
            "objekt": st.builds(lambda i: {"id": i}, st.sampled_from(target.victim_entities)),
        }),
        st.fixed_dictionaries({
            "subjekt": printable, "beziehung": st.just("wohnt_in"), "herkunft": herkunft,
            "objekt": printable, "timeline_id": st.sampled_from(target.victim_entries),
        }),
        st.fixed_dictionaries({
            "subjekt": printable, "herkunft": herkunft, "wert": printable,
            "beziehung": st.one_of(st.sampled_from(INJECTIONS), printable),
        }),
    )
    guards = guarded(herkunft)
    correction = st.fixed_dictionaries(
        {"subjekt": ref, "beziehung": beziehung, "herkunft": herkunft},
        optional={"objekt": ref, "wert": wert, "notiz": TEXT}
    )
    counter = itertools.count()
    # The envelope is mostly valid, so most orders reach the agent with hostile triples;
    # a tenth of each field is hostile itself.
    fresh = st.builds(lambda s: f"h-{next(counter)}-{uuid.uuid4().hex[:6]}-{s}",
                      st.sampled_from(["", *INJECTIONS]))
    auftrag_id = mostly(fresh, TEXT, WRONG)
    # Every user id that can be valid starts with the test's own prefix: the shared
    # server holds other tests' data.
    user_id = mostly(
        st.just(user),
        st.builds(lambda s: f"{user}{s}", st.one_of(st.sampled_from(INJECTIONS), TEXT)),
        st.sampled_from(["", "   ", "\x00", "u" * 201]),
        WRONG,
    )
    order = st.fixed_dictionaries(
        {
            "auftrag_id": auftrag_id,
            "user_id": user_id,
            "character_id": mostly(st.sampled_from(["nova", "luna", " nova "]), TEXT, WRONG),
            "tripel": mostly(
                st.one_of(
                    st.lists(st.one_of(triple, valid_triple, foreign, guards), min_size=1,
                             max_size=6),
                    # Orders of guarded triples only: the same few names in every role.
                    st.lists(guards, min_size=2, max_size=6),
                    ring(herkunft),
                ),
                st.lists(st.one_of(triple, WRONG), min_size=1, max_size=3),
                st.just([{"subjekt": "Lena", "beziehung": "hobby", "wert": "x",
                          "herkunft": "mensch"}] * 201),
                WRONG,
            ),
        },
        optional={
            "zeitpunkt": mostly(
                st.sampled_from(["2026-11-29T18:00:00Z", "0001-01-01T00:00:00Z",
                                 "9999-12-31T23:59:59+14:00"]),
                st.sampled_from(["2026-11-29T18:00:00", "gestern", "2026-02-30T00:00:00Z"]),
                WRONG,
            ),
        },
    )
    rare = st.one_of(
        st.fixed_dictionaries({"berichtigungen": st.lists(correction, min_size=1, max_size=2)}),
        st.fixed_dictionaries({"unbekannt": TEXT}),
    )
    order = st.builds(lambda o, extra: o | extra, order, mostly(st.just({}), rare))
    return mostly(order, WRONG, st.text(max_size=20))


def snapshot(store: SyncMemory, user: str) -> str:
    """A digest of everything a user has: entities, facts, entries, orders."""
    rows = store.run(cypher(
        store.memory,
        "CALL () { MATCH (e:Entitaet {user_id: $u}) RETURN collect(properties(e)) AS e } "
        "CALL () { MATCH (:Entitaet {user_id: $u})-[r]->(o) "
        "  RETURN collect([type(r), properties(r), properties(o)]) AS f } "
        "CALL () { MATCH (t:TimelineEintrag {user_id: $u}) RETURN collect(properties(t)) AS t } "
        "CALL () { MATCH (a:Auftrag {user_id: $u}) RETURN collect(properties(a)) AS a } "
        "RETURN e, f, t, a",
        u=user,
    ))
    text = json.dumps(rows, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def read_fact(store: SyncMemory, subjekt_id: str, fakt_id: str) -> dict[str, Any]:
    """The fact's current version as seen from its subject. Either direction: a symmetric
    fact told from its other end (Lena partner Ben, where Ben partner Lena stands) is
    the edge already stored, from Ben."""
    rows = store.run(cypher(
        store.memory,
        "MATCH (s:Entitaet {id: $s})-[r]-(o) WHERE r.id = $f AND r.t_expired IS NULL "
        "RETURN s.name AS name, s.user_id AS s_user, type(r) AS rel, r.user_id AS user_id, "
        "r.character_id AS character_id, o.wert AS wert, o.name AS objekt",
        s=subjekt_id, f=fakt_id,
    ))
    assert len(rows) == 1, (subjekt_id, fakt_id, rows)
    return rows[0]


def count_guarded(order: dict[str, Any], guards: dict[str, int]) -> None:
    """Tally the guarded kinds among an order's well-formed triples."""
    seen: list[str] = []
    for raw in order.get("tripel", []):
        if not isinstance(raw, dict):
            continue
        names: list[str] = [v for k in ("subjekt", "objekt") if isinstance(v := raw.get(k), str)]
        keys = [normalize_name(n) for n in names]
        if len(keys) == 2 and keys[0] == keys[1] and keys[0]:
            guards["self_references"] += 1
        if any(any(unicodedata.category(c) == "Cf" for c in n) for n in names):
            guards["format_names"] += 1
        if raw.get("beziehung") in ("typ", "ist_ein") or "typ" in raw:
            guards["type_flips"] += 1
        if raw.get("beziehung") == "liegt_in":
            guards["transitive"] += 1
        seen += keys
    guards["repeated_names"] += len(seen) - len(set(seen))


@pytest.mark.slow
def test_hostile_orders_are_rejected_with_a_reason_or_written_literally(
    store: SyncMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    watch = Stopwatch("hostile")
    memory = store.memory
    canon = memory.canon
    user, victim = new_user_id("rel-host"), new_user_id("rel-victim")
    for who in (user, victim):
        store.run(memory.write({
            "auftrag_id": "seed", "user_id": who, "character_id": "nova",
            "tripel": [{"subjekt": "Lena", "beziehung": "wohnt_in", "objekt": "Kassel",
                        "herkunft": "mensch"},
                       {"subjekt": "Lena", "beziehung": "hat_haustier", "objekt": "Bello",
                        "herkunft": "mensch"}],
        }))
    target = Target()
    target.own_entities = [e.id for e in store.run(memory.entities(user, "nova"))]
    target.victim_entities = [e.id for e in store.run(memory.entities(victim, "nova"))]
    entry = NeuerEintrag(typ="termin", titel="Umzug", beginn=date(2026, 11, 1), genauigkeit="monat")
    target.own_entries = [store.run(memory.timeline_add(user, "nova", entry)).id]
    target.victim_entries = [store.run(memory.timeline_add(victim, "nova", entry)).id]
    victim_before = snapshot(store, victim)

    # Every batch of writes leaves the agent through order_apply: inspect its types.
    sent_types: set[str] = set()
    original_send = Tx.with_commit

    async def inspecting(self: Tx, name: str, /, **params: Any) -> Any:
        if name == "order_apply":
            for f in [*params["ref_facts"], *params["value_facts"]]:
                sent_types.add(f["rel"])
        return await original_send(self, name, **params)

    figures = {"orders": 0, "invalid_orders": 0, "triples": 0, "written": 0, "rejected": 0,
               "ambiguous": 0, "replayed": 0}
    # What the guards met: generated triples of each kind, and refusals.
    guards = {"self_references": 0, "repeated_names": 0, "format_names": 0, "type_flips": 0,
              "transitive": 0, "selbstbezug": 0, "typkonflikt": 0, "zyklus": 0}
    users_written: set[str] = set()
    reasons: set[str] = set()

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(order=strategies(target, user))
    # (a soft hyphen is stored without, and a value touched in another case keeps its
    # first form: a run drew the first, and the assertion expected the text as told)
    @example(order={"auftrag_id": "h-soft-hyphen", "user_id": user, "character_id": "nova",
                    "tripel": [{"subjekt": "Lena", "beziehung": "beruf", "wert": w,
                                "herkunft": "mensch"} for w in ("0\xad", "0", "Ärztin",
                                                                 "ÄRZTIN")]})
    def one(order: Any) -> None:
        figures["orders"] += 1
        try:
            result = store.run(memory.write(order))
        except InvalidInput as exc:
            figures["invalid_orders"] += 1
            # A malformed order, or an auftrag_id reused for other content (a caller's
            # bug). (A correction or its replacement refused is an outcome, not an error.)
            assert str(exc).startswith("the order is invalid — ") or (
                "for an order with other content" in str(exc)) or (
                "with the same triples" in str(exc) and "send it as first sent" in str(exc)
            ), exc
            assert len(str(exc)) < 2000  # a reason, not an echo of a huge input
            return
        assert isinstance(result, AuftragErgebnis)
        users_written.add(result.user_id)
        if result.wiederholt:
            figures["replayed"] += 1
            return
        assert result.user_id == normalize_text(order["user_id"])
        berichtigungen = order.get("berichtigungen", [])
        count_guarded(order, guards)
        for r in result.ergebnisse:
            figures["triples"] += 1
            assert r.ausgang != "fehler", r
            if r.ausgang in ("abgelehnt", "mehrdeutig"):
                figures["rejected" if r.ausgang == "abgelehnt" else "ambiguous"] += 1
                assert r.grund and r.meldung, r
                reasons.add(r.grund)
                if r.grund in guards:
                    guards[r.grund] += 1
                continue
            assert r.ausgang in DONE, r
            if r.index < len(berichtigungen):
                continue
            raw = order["tripel"][r.index - len(berichtigungen)]
            figures["written"] += 1
            for role in ("subjekt", "objekt"):
                ref = raw.get(role)
                if isinstance(ref, dict) and "id" in ref:
                    # Only the user's own ids resolve; a victim's id is never written.
                    assert ref["id"] in target.own_entities, (role, ref)
            if raw.get("timeline_id") is not None:
                assert raw["timeline_id"] in target.own_entries, raw
            if r.ausgang == "berichtigt" or r.fakt_id is None:
                continue
            assert r.subjekt_id is not None, r
            fact = read_fact(store, r.subjekt_id, r.fakt_id)
            assert fact["rel"] == canon[raw["beziehung"].strip()].rel_type
            assert fact["user_id"] == fact["s_user"] == result.user_id
            assert fact["character_id"] == normalize_text(order["character_id"])
            if isinstance(raw.get("wert"), str):
                # literally, injection and all (line separators and bidi controls are
                # normalised away: they could change the prompt's structure), as a value
                # is stored (composed, without format characters: `clean_value`); one
                # touched may have been told first in another case (`value_key`)
                told = clean_value(normalize_text(raw["wert"]))
                if r.ausgang == "unveraendert":
                    assert value_key(fact["wert"]) == value_key(told), (fact, raw)
                else:
                    assert fact["wert"] == told, (fact, raw)
            subjekt = raw["subjekt"]
            name = subjekt if isinstance(subjekt, str) else subjekt.get("neu")
            if name is not None:
                if r.subjekt_id in r.neue_entitaeten:
                    # format characters stripped
                    assert fact["name"] == clean_name(normalize_text(name))
                else:
                    assert normalize_name(fact["name"]) == normalize_name(normalize_text(name))

    monkeypatch.setattr(Tx, "with_commit", inspecting)
    one()
    monkeypatch.undo()

    assert sent_types, "no order_apply was inspected: the writer sends it another way"
    assert sent_types <= set(canon.rel_types), sent_types - set(canon.rel_types)
    assert snapshot(store, victim) == victim_before, "the victim's data changed"
    found = []
    for who in sorted(users_written):
        found += [f"{who!r}: {v}" for v in store.run(violations(memory, who,
                                                                unique_names=False))]
        types = store.run(cypher(
            memory, "MATCH (:Entitaet {user_id: $u})-[r]->() RETURN DISTINCT type(r) AS t",
            u=who,
        ))
        assert {t["t"] for t in types} <= set(canon.rel_types)
    assert found == [], found[:10]
    print(figures, guards)
    assert figures["written"] > 0 and figures["rejected"] > 0 and figures["invalid_orders"] > 0
    assert all(guards.values()), guards  # every guard met its case, and kg check is clean
    watch.figures.update(figures, **guards, users=len(users_written), reasons=sorted(reasons),
                         violations=len(found))
    print(watch.report())


# -- the boundaries, explicitly ------------------------------------------------------


@pytest.mark.parametrize(
    ("subjekt", "wert", "written"),
    [
        ("ﷺ" * 200, "x", True),  # NFKC expands it 18-fold: the longest possible lookup key
        ("😀" * 200, "😀" * 2000, True),
        ("A" * 201, "x", False),
        ("Lena", "w" * 2001, False),
        ("x'}) MATCH (n) DETACH DELETE n //", '"; DROP TABLE fakten; --', True),
        ("Le\u2028na\u00a0", "\u202eevil", True),  # written as "Le na", "evil"
    ],
)
def test_the_limits_hold_at_their_edges(
    store: SyncMemory, subjekt: str, wert: str, written: bool
) -> None:
    # The longest user id too: the composite (user_id, name_norm) index key is largest.
    base = new_user_id("rel-edge")
    user = base + "😀" * (MAX_ID - len(base))
    result = store.run(store.memory.write({
        "auftrag_id": "e-" + "😀" * 190, "user_id": user, "character_id": "nova",
        "tripel": [{"subjekt": subjekt, "beziehung": "hat", "wert": wert,
                    "herkunft": "mensch"}],
    }))
    (r,) = result.ergebnisse
    if not written:
        assert (r.ausgang, r.grund) in {("abgelehnt", "name_zu_lang"),
                                        ("abgelehnt", "wert_zu_lang")}
        assert r.meldung and len(r.meldung) < 500
        return
    assert r.ausgang == "geschrieben", r
    assert r.subjekt_id is not None and r.fakt_id is not None, r
    fact = read_fact(store, r.subjekt_id, r.fakt_id)
    assert (fact["name"], fact["wert"]) == (normalize_text(subjekt), normalize_text(wert))
    again = store.run(store.memory.resolve(user, "nova", subjekt))
    assert again.entitaet is not None and again.entitaet.id == r.subjekt_id
    assert store.run(violations(store.memory, user)) == []
