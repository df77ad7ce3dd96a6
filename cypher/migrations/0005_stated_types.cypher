// A type a `typ` triple stated carries `gesagt` since 2026-12-05, and a take-back keeps
// it; a type only facts implied goes with the last of them (since 2026-12-07, whichever
// order wrote it). A type stated before 2026-12-05 carries no `gesagt`, so it would read
// as implied and go with a fact that also implies it. Its order's audit names it: the
// result of the `typ` triple that wrote it, or told it again, has the type fact as its
// `fakt_id` (an implied type is listed in `typ_fakten` instead). Every version of such a
// fact is marked stated. An order pruned from the audit cannot say: its type stays as it
// is read. Idempotent (only versions without `gesagt`); batched.

MATCH (e:Entitaet)-[r:TYP]->(:Wert)
WHERE r.gesagt IS NULL AND r.id IS NOT NULL AND r.auftrag_id IS NOT NULL
  AND EXISTS {
    MATCH (a:Auftrag {user_id: e.user_id, character_id: r.character_id, id: r.auftrag_id})
    WHERE a.ergebnis CONTAINS ('"fakt_id":"' + r.id + '"')
  }
WITH DISTINCT e, r.id AS fakt_id, r.character_id AS character_id
CALL (e, fakt_id, character_id) {
  MATCH (e)-[v:TYP {id: fakt_id}]->(:Wert)
  WHERE v.character_id = character_id AND v.gesagt IS NULL
  SET v.gesagt = true
} IN TRANSACTIONS OF 5000 ROWS;
