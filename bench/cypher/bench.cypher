// name: bench_load_nutzer
// Bulk path (bench/bulk.py): the lock node of each loaded user, as the writer makes it.
// params: $users
// :param users => ['bench-u1']
UNWIND $users AS u
MERGE (n:Nutzer {id: u})
ON CREATE SET n.writes = 0;

// name: bench_load_entities
// Bulk path: new entities, one row each: [id, user_id, name, name_norm, erstellt].
// Rows are lists and times ISO strings because that is what packs fast in Python.
// params: $rows
// :param rows => [['e-lena', 'bench-u1', 'Lena', 'lena', '2026-09-01T10:00:00Z']]
UNWIND $rows AS row
CREATE (:Entitaet {
  id: row[0], user_id: row[1], name: row[2], name_norm: row[3], erstellt: datetime(row[4])
});

// name: bench_load_eintraege
// Bulk path: timeline entries ({props, betrifft}) with BETRIFFT to the person.
// params: $rows
// :param rows => [{betrifft: 'e-lena', props: {id: 't-1', user_id: 'bench-u1', character_id: 'nova', typ: 'ereignis', titel: 'Lena zieht nach Kassel', beginn: '2026-11-01', genauigkeit: 'monat', aktiv: true, abgesagt: false, t_recorded: '2026-10-15T10:00:00Z', ersetzt_am: null}}]
UNWIND $rows AS row
MATCH (e:Entitaet {id: row.betrifft})
WHERE e.user_id = row.props.user_id
CREATE (t:TimelineEintrag)-[:BETRIFFT]->(e)
SET t = row.props,
    t.beginn = date(row.props.beginn), t.t_recorded = datetime(row.props.t_recorded),
    t.ersetzt_am = datetime(row.props.ersetzt_am);

// name: bench_load_nachfolger
// Bulk path: the NACHFOLGER links of moved entries ({von, nach}).
// params: $rows
// :param rows => [{von: 't-1', nach: 't-2'}]
UNWIND $rows AS row
MATCH (a:TimelineEintrag {id: row.von}), (b:TimelineEintrag {id: row.nach})
CREATE (a)-[:NACHFOLGER]->(b);

// name: bench_load_ref_facts
// Bulk path: reference facts between two entities of one user, one row per version of a
// fact: [subjekt, objekt, rel, id, version, character_id, herkunft, t_valid, t_recorded,
// aktiv, staerke_decay, last_touched, decay_am, rest] where rest is null or a map with
// t_invalid, t_expired, grund, timeline_id, timeline_bis (most facts have none of them).
// Times are ISO strings; rel is a canon type (the loader checks it); nulls are not stored.
// params: $rows
// :param rows => [['e-lena', 'e-berlin', 'WOHNT_IN', 'f-1', 1, 'nova', 'mensch', '2025-03-01T10:00:00Z', '2025-03-01T10:00:00Z', false, 1.0, '2025-03-01T10:00:00Z', null, {t_expired: '2026-09-01T10:00:00Z'}], ['e-lena', 'e-berlin', 'WOHNT_IN', 'f-1', 2, 'nova', 'mensch', '2025-03-01T10:00:00Z', '2026-09-01T10:00:00Z', false, 1.0, '2025-03-01T10:00:00Z', null, {grund: 'abgeloest', t_invalid: '2026-09-01T10:00:00Z'}], ['e-lena', 'e-kassel', 'WOHNT_IN', 'f-2', 1, 'nova', 'mensch', '2026-09-01T10:00:00Z', '2026-09-01T10:00:00Z', true, 1.0, '2026-09-01T10:00:00Z', null, null]]
UNWIND $rows AS row
MATCH (s:Entitaet {id: row[0]})
MATCH (o:Entitaet {id: row[1]})
WHERE o.user_id = s.user_id
WITH s, o, row, coalesce(row[13], {}) AS x
CREATE (s)-[:$(row[2]) {
  id: row[3], version: row[4], user_id: s.user_id, character_id: row[5], herkunft: row[6],
  t_valid: datetime(row[7]), t_recorded: datetime(row[8]), aktiv: row[9],
  staerke_decay: row[10], last_touched: datetime(row[11]), decay_am: date(row[12]),
  t_invalid: datetime(x.t_invalid), t_expired: datetime(x.t_expired), grund: x.grund,
  timeline_id: x.timeline_id, timeline_bis: x.timeline_bis
}]->(o);

// name: bench_load_value_facts
// Bulk path: value facts, each version with its own Wert node (as the writer writes
// them); a row is [subjekt, wert, rel, then the rest as in bench_load_ref_facts].
// params: $rows
// :param rows => [['e-lena', 'Ärztin', 'BERUF', 'f-3', 1, 'nova', 'mensch', '2026-09-01T10:00:00Z', '2026-09-01T10:00:00Z', true, 1.0, '2026-09-01T10:00:00Z', null, null]]
UNWIND $rows AS row
MATCH (s:Entitaet {id: row[0]})
WITH s, row, coalesce(row[13], {}) AS x
CREATE (s)-[:$(row[2]) {
  id: row[3], version: row[4], user_id: s.user_id, character_id: row[5], herkunft: row[6],
  t_valid: datetime(row[7]), t_recorded: datetime(row[8]), aktiv: row[9],
  staerke_decay: row[10], last_touched: datetime(row[11]), decay_am: date(row[12]),
  t_invalid: datetime(x.t_invalid), t_expired: datetime(x.t_expired), grund: x.grund,
  timeline_id: x.timeline_id, timeline_bis: x.timeline_bis
}]->(:Wert {wert: row[1], user_id: s.user_id});

// name: bench_counts
// What the bulk path wrote for some users: entities, facts, value nodes, entries.
// params: $users
// :param users => ['bench-u1']
UNWIND $users AS u
CALL (u) { MATCH (e:Entitaet {user_id: u}) RETURN count(e) AS entities }
CALL (u) {
  MATCH (:Entitaet {user_id: u})-[r]->()
  WHERE r.herkunft IS NOT NULL
  RETURN count(r) AS facts, count(CASE WHEN r.aktiv THEN 1 END) AS active
}
CALL (u) { MATCH (:Entitaet {user_id: u})-->(w:Wert) RETURN count(w) AS werte }
CALL (u) {
  MATCH (t:TimelineEintrag {user_id: u})
  RETURN count(t) AS eintraege, count(CASE WHEN t.aktiv THEN 1 END) AS active_eintraege
}
RETURN sum(entities) AS entities, sum(facts) AS facts, sum(active) AS active,
       sum(werte) AS werte, sum(eintraege) AS eintraege, sum(active_eintraege) AS active_eintraege;

// name: bench_naive_facts
// Naive baseline: every fact of one entity in the pair, both directions, unfiltered
// (the caller filters, sorts and caps in Python).
// params: $user_id, $character_id, $entity_id
// :param user_id => 'bench-u1'
// :param character_id => 'nova'
// :param entity_id => 'e-lena'
MATCH (e:Entitaet {id: $entity_id})-[r]-(n)
WHERE e.user_id = $user_id AND r.character_id = $character_id
RETURN e.name AS name, r {.*} AS r, type(r) AS rel, startNode(r) = e AS out,
       n.id AS n_id, n.name AS n_name, n.wert AS wert;

// name: bench_naive_active
// Naive baseline: the active facts of one neighbour in the pair, both directions.
// params: $user_id, $character_id, $entity_id
// :param user_id => 'bench-u1'
// :param character_id => 'nova'
// :param entity_id => 'e-lena'
MATCH (e:Entitaet {id: $entity_id})-[r]-(n)
WHERE e.user_id = $user_id AND r.character_id = $character_id AND r.aktiv
RETURN r {.*} AS r, type(r) AS rel, startNode(r) = e AS out,
       n.id AS n_id, n.name AS n_name, n.wert AS wert;

// name: bench_naive_entry
// Naive baseline: the active end of a timeline chain, one reference at a time.
// params: $user_id, $eintrag_id
// :param user_id => 'bench-u1'
// :param eintrag_id => 't-1'
MATCH (t:TimelineEintrag {id: $eintrag_id})-[:NACHFOLGER*0..]->(last:TimelineEintrag)
WHERE t.user_id = $user_id AND NOT (last)-[:NACHFOLGER]->()
RETURN last.beginn AS beginn, last.genauigkeit AS genauigkeit;
