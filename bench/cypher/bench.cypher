// name: bench_load_nutzer
// Bulk path (bench/bulk.py): the lock node of each loaded user, as the writer makes it.
// params: $users
// :param users => ['bench-u1']
UNWIND $users AS u
MERGE (n:Nutzer {id: u})
ON CREATE SET n.writes = 0;

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

// name: bench_load_facts
// Bulk path (bench/bulk.py): the entities of a batch of users and every version of their
// facts, in one query, so a fact finds its nodes by position in the batch instead of by
// an index seek. $users are the batch's user ids. An entity row is [id, user, name,
// name_norm, erstellt]; a fact row is [subjekt, objekt or wert, rel, id, version,
// character_id, herkunft, t_valid, t_recorded, aktiv, staerke_decay, last_touched,
// decay_am, rest, user, auftrag_id] where subjekt and objekt are positions in $entities (the loader
// only hands out positions of the fact's own user), user a position in $users, and rest
// null or a map with t_invalid, t_expired, grund, timeline_id, timeline_bis and
// abgeloest_durch (most facts have none of them). Instants are whole epoch seconds (cheaper to pack and to read than
// ISO text), dates ISO text; rel is a canon type (the loader checks it); nulls are not
// stored. A value fact's every version gets a Wert node of its own, as the writer
// writes them. (The label tests hold for every row; they also tell the planner that the
// nodes read are no Wert nodes, which spares an Eager before each CREATE.)
// params: $users, $entities, $refs, $values
// :param users => ['bench-u1']
// :param entities => [['e-lena', 'bench-u1', 'Lena', 'lena', 1756720800], ['e-berlin', 'bench-u1', 'Berlin', 'berlin', 1756720800]]
// :param refs => [[0, 1, 'WOHNT_IN', 'f-1', 1, 'nova', 'mensch', 1740823200, 1740823200, false, 1.0, 1740823200, null, {t_expired: 1756720800}, 0, 'turn-1']]
// :param values => [[0, 'Ärztin', 'BERUF', 'f-3', 1, 'nova', 'mensch', 1756720800, 1756720800, true, 1.0, 1756720800, '2026-11-30', null, 0, 'turn-2']]
UNWIND $entities AS row
CREATE (e:Entitaet {
  id: row[0], user_id: row[1], name: row[2], name_norm: row[3],
  erstellt: datetime({epochSeconds: row[4]})
})
WITH collect(e) AS nodes
CALL (nodes) {
  UNWIND $refs AS row
  WITH nodes[row[0]] AS s, nodes[row[1]] AS o, row
  WHERE s:Entitaet AND o:Entitaet
  CREATE (s)-[:$(row[2]) {
    id: row[3], version: row[4], user_id: $users[row[14]], character_id: row[5],
    herkunft: row[6], auftrag_id: row[15], t_valid: datetime({epochSeconds: row[7]}),
    t_recorded: datetime({epochSeconds: row[8]}), aktiv: row[9], staerke_decay: row[10],
    last_touched: datetime({epochSeconds: row[11]}), decay_am: date(row[12]),
    t_invalid: CASE WHEN row[13].t_invalid IS NOT NULL
                 THEN datetime({epochSeconds: row[13].t_invalid}) END,
    t_expired: CASE WHEN row[13].t_expired IS NOT NULL
                 THEN datetime({epochSeconds: row[13].t_expired}) END,
    grund: row[13].grund, timeline_id: row[13].timeline_id,
    timeline_bis: row[13].timeline_bis, abgeloest_durch: row[13].abgeloest_durch
  }]->(o)
}
CALL (nodes) {
  UNWIND $values AS row
  WITH nodes[row[0]] AS s, row
  WHERE s:Entitaet
  CREATE (s)-[:$(row[2]) {
    id: row[3], version: row[4], user_id: $users[row[14]], character_id: row[5],
    herkunft: row[6], auftrag_id: row[15], t_valid: datetime({epochSeconds: row[7]}),
    t_recorded: datetime({epochSeconds: row[8]}), aktiv: row[9], staerke_decay: row[10],
    last_touched: datetime({epochSeconds: row[11]}), decay_am: date(row[12]),
    t_invalid: CASE WHEN row[13].t_invalid IS NOT NULL
                 THEN datetime({epochSeconds: row[13].t_invalid}) END,
    t_expired: CASE WHEN row[13].t_expired IS NOT NULL
                 THEN datetime({epochSeconds: row[13].t_expired}) END,
    grund: row[13].grund, timeline_id: row[13].timeline_id,
    timeline_bis: row[13].timeline_bis, abgeloest_durch: row[13].abgeloest_durch
  }]->(:Wert {wert: row[1], user_id: $users[row[14]]})
};

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

// name: bench_naive_current
// Naive baseline: the current facts of one neighbour in the pair, both directions: the
// active ones and the current versions of superseded values (one may still hold).
// params: $user_id, $character_id, $entity_id
// :param user_id => 'bench-u1'
// :param character_id => 'nova'
// :param entity_id => 'e-lena'
MATCH (e:Entitaet {id: $entity_id})-[r]-(n)
WHERE e.user_id = $user_id AND r.character_id = $character_id
  AND (r.aktiv OR r.grund = 'abgeloest' AND r.t_expired IS NULL)
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

// name: bench_hub_neighbours
// Up to $per entities with an active fact to each hub in the pair (its residents, its
// staff) that is not resting (strength at least $schwelle): the Mappe of such an entity
// walks the hub's edges in its degree 2. (A resting fact is left out of the Mappe, so
// through it the hub is never walked.)
// params: $hub_ids, $character_id, $per, $schwelle
// :param hub_ids => ['e-kassel']
// :param character_id => 'nova'
// :param per => 10
// :param schwelle => 0.1
UNWIND $hub_ids AS hub_id
MATCH (h:Entitaet {id: hub_id})-[r]-(n:Entitaet)
WHERE r.character_id = $character_id AND r.aktiv AND r.staerke_decay >= $schwelle
WITH h, n ORDER BY n.id
WITH h, collect(DISTINCT n)[..$per] AS ns
UNWIND ns AS n
RETURN n.user_id AS user_id, n.id AS entity_id, n.name AS name;
