"""`memory.pair(user, character)`: the calls of one pair, bound to it."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from kg.errors import InvalidInput
from tests.conftest import Pair, t


def test_a_pair_view_reads_and_writes_only_its_pair(pair: Pair) -> None:
    run, memory = pair.store.run, pair.store.memory
    nova = memory.pair(pair.user_id, "nova")
    luna = memory.pair(pair.user_id, "luna")
    result = run(nova.write({"auftrag_id": "a1", "tripel": [t("Lena", "wohnt_in", "Berlin")]}))
    assert (result.user_id, result.character_id) == (pair.user_id, "nova")
    lena = run(nova.entity_id("Lena"))
    assert [f.objekt.name for f in run(nova.mappe(lena)).fakten if f.objekt] == ["Berlin"]
    assert run(luna.mappe(lena)).fakten == []  # the entity is the user's; facts the pair's
    assert [e.name for e in run(nova.entities())] == ["Berlin", "Lena"]
    assert [h.objekt.name for h in run(nova.history(lena)) if h.objekt] == ["Berlin"]
    assert run(nova.mappe(lena, gueltig_am=date(2000, 1, 1))).fakten == []
    assert [a.auftrag_id for a in run(nova.audit())] == ["a1"]
    with pytest.raises(InvalidInput, match="this is the memory of the pair"):
        run(nova.write({"auftrag_id": "a2", "character_id": "luna",
                        "tripel": [t("Lena", "beruf", wert="Ärztin")]}))
    with pytest.raises(TypeError):
        nova.mappe(lena, date(2026, 1, 1))  # type: ignore[call-arg, unused-coroutine]


def test_the_entity_list_shows_only_the_pairs_type_and_facts(pair: Pair) -> None:
    """Entities are the user's; their type and facts are a pair's (rule 6): the list of one
    character never shows another character's type or counts its facts."""
    luna = pair.other("luna")
    pair.write(t("Bello", "ist_ein", wert="Hund"), t("Lena", "hat_haustier", "Bello"))
    luna.write(t("Bello", "typ", wert="person"), t("Bello", "arbeitet_bei", "Zirkus"),
               t("Lena", "befreundet_mit", "Bello"))
    run, memory = pair.store.run, pair.store.memory

    def listed(character_id: str) -> dict[str, tuple[str, int]]:
        return {e.name: (e.typ, e.fakten)
                for e in run(memory.entities(pair.user_id, character_id))}

    assert listed("nova")["Bello"] == ("tier", 2)
    assert listed("luna")["Bello"] == ("person", 2)
    assert listed("nova")["Zirkus"] == ("sonstiges", 0)  # the user's entity, not nova's fact
    assert listed("emma")["Bello"] == ("sonstiges", 0)
    with pytest.raises(TypeError):  # no list of a user's entities with any pair's types
        memory.entities(pair.user_id)  # type: ignore[call-arg, unused-coroutine]


def test_an_id_with_outer_whitespace_names_the_same_user_in_a_read_as_in_a_write(
    pair: Pair, tmp_path: Path,
) -> None:
    """Found by a stranger's attack (2026-12-05): an order strips its ids ("u1 " writes as
    u1), while the reads took "u1 " for another, empty user, so a caller whose id carried
    a space wrote into u1 and never read back what it wrote. Every surface reads an id as
    an order does; an id no order takes is refused, with what is wrong."""
    run, memory = pair.store.run, pair.store.memory
    padded, character = f" {pair.user_id}\u00a0", " nova "
    result = run(memory.write({
        "auftrag_id": "a1", "user_id": padded, "character_id": character,
        "tripel": [t("Lena", "wohnt_in", "Berlin", ereignis={
            "titel": "Umzug", "beginn": "2026-03-01", "genauigkeit": "monat"})],
    }))
    assert (result.user_id, result.character_id) == (pair.user_id, "nova")
    lena = run(memory.entity_id(padded, character, "Lena"))
    assert lena == pair.id_of("Lena")
    assert run(memory.resolve(padded, character, "Lena")).entitaet is not None
    assert [e.name for e in run(memory.entities(padded, character))] == ["Berlin", "Lena"]
    (m,) = run(memory.mappen(padded, character, [lena]))
    assert [f.objekt.name for f in m.fakten if f.objekt] == ["Berlin"]
    assert run(memory.mappe(padded, character, lena)).fakten == m.fakten
    assert [h.objekt.name for h in run(memory.history(padded, character, lena)) if h.objekt] \
        == ["Berlin"]
    assert [a.auftrag_id for a in run(memory.audit(padded, character))] == ["a1"]
    (entry,) = run(memory.timeline_window(padded, character, date(2026, 1, 1),
                                          date(2026, 12, 31)))
    assert run(memory.timeline_active(padded, character, entry.id)).id == entry.id
    assert [e.id for e in run(memory.timeline_chain(padded, character, entry.id))] == [entry.id]
    exported = run(memory.export(tmp_path / "u.jsonl", padded, character))
    assert (exported.user_id, exported.anzahl.fakten > 0) == (pair.user_id, True)
    assert run(memory.check(padded)).user_id == pair.user_id
    nova = memory.pair(padded, character)
    assert (nova.user_id, nova.character_id) == (pair.user_id, "nova")
    again = run(nova.write({"auftrag_id": "a2", "character_id": "nova ", "user_id": padded,
                            "tripel": [t("Lena", "beruf", wert="Ärztin")]}))
    assert again.ergebnisse[0].ausgang == "geschrieben"
    for bad in ("", "   ", "u1\x00", "u1\n2"):
        with pytest.raises(InvalidInput, match="user_id"):
            run(memory.mappe(bad, "nova", lena))
        with pytest.raises(InvalidInput, match="character_id"):
            run(memory.entities(pair.user_id, bad))
