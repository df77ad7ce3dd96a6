// name: timeline_chain_ends
// From any entry of a chain: its first entry (what facts reference) and its active end.
// params: $user_id, $character_id, $eintrag_id
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param eintrag_id => '<entry id>'
MATCH (t:TimelineEintrag {id: $eintrag_id})
WHERE t.user_id = $user_id AND t.character_id = $character_id
MATCH (first:TimelineEintrag)-[:NACHFOLGER*0..]->(t)
WHERE NOT (:TimelineEintrag)-[:NACHFOLGER]->(first)
MATCH (t)-[:NACHFOLGER*0..]->(last:TimelineEintrag)
WHERE NOT (last)-[:NACHFOLGER]->(:TimelineEintrag)
RETURN first.id AS first_id, last.id AS active_id, t.aktiv AS aktiv,
       coalesce(last.abgesagt, false) AS abgesagt, last AS active;

// name: timeline_create
// A new entry of the pair, recorded at the store's clock $jetzt; an event is linked to
// the entity it happens to: $betrifft.id ($betrifft is {} for an entry of no entity; a
// map, which the server types alike whatever it holds, so both share one plan where a
// null and a text would not). `betrifft` is false where that entity is not the user's:
// the caller then rolls the transaction back.
// params: $user_id, $character_id, $props, $betrifft, $jetzt
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param props => {id: 't-example', typ: 'ereignis', titel: 'Lena zieht nach Kassel', beginn: date('2026-11-01'), ende: null, genauigkeit: 'monat', aktiv: true, abgesagt: false}
// :param betrifft => {id: '<id of Lena>'}
// :param jetzt => datetime()
CREATE (t:TimelineEintrag)
SET t = $props, t.user_id = $user_id, t.character_id = $character_id, t.t_recorded = $jetzt
WITH t
OPTIONAL MATCH (e:Entitaet {id: $betrifft.id})
WHERE e.user_id = $user_id
FOREACH (_ IN CASE WHEN e IS NULL THEN [] ELSE [1] END | CREATE (t)-[:BETRIFFT]->(e))
RETURN t.id AS id, $betrifft.id IS NULL OR e IS NOT NULL AS betrifft;

// name: timeline_move
// Replace the active end of a chain by its successor: old -[:NACHFOLGER]-> new, old inactive.
// Runs under the user's lock, so two moves of one entry cannot fork the chain. $jetzt is
// the store's clock: the successor's t_recorded and the old entry's ersetzt_am, so a read
// as known before the move still finds the old date.
// params: $user_id, $character_id, $eintrag_id, $props, $jetzt
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param eintrag_id => '<entry id>'
// :param props => {id: 't-example', typ: 'ereignis', titel: 'Lena zieht nach Kassel', beginn: date('2026-11-01'), ende: null, genauigkeit: 'monat', aktiv: true, abgesagt: false}
// :param jetzt => datetime()
MATCH (old:TimelineEintrag {id: $eintrag_id})
WHERE old.user_id = $user_id AND old.character_id = $character_id
  AND old.aktiv AND NOT (old)-[:NACHFOLGER]->()
CREATE (new:TimelineEintrag)
SET new = $props, new.user_id = $user_id, new.character_id = $character_id,
    new.t_recorded = $jetzt
SET old.aktiv = false, old.ersetzt_am = $jetzt
CREATE (old)-[:NACHFOLGER]->(new)
WITH old, new
OPTIONAL MATCH (old)-[:BETRIFFT]->(e:Entitaet)
FOREACH (_ IN CASE WHEN e IS NULL THEN [] ELSE [1] END | CREATE (new)-[:BETRIFFT]->(e))
RETURN new.id AS id;

// name: timeline_cancel
// The event does not happen: the active end becomes inactive and cancelled, at the
// store's clock $jetzt.
// params: $user_id, $character_id, $eintrag_id, $jetzt
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param eintrag_id => '<entry id>'
// :param jetzt => datetime()
MATCH (t:TimelineEintrag {id: $eintrag_id})
WHERE t.user_id = $user_id AND t.character_id = $character_id
  AND t.aktiv AND NOT (t)-[:NACHFOLGER]->()
SET t.aktiv = false, t.abgesagt = true, t.abgesagt_am = $jetzt
RETURN t.id AS id;

// name: timeline_move_neighbours
// For a move: every value of each single-valued relation that has a value valid from the
// chain ($first_id), in each partition the chain's values are in (their subject's; of a
// symmetric relation, $symmetric, their object's too), each with where it starts and
// ends (the active entry of the chain it starts or ends with, else t_valid / t_invalid)
// and which chains those are, so the caller can see the partition as it would be after
// the move (and re-end a value by its id where the move makes a value squeezed to
// nothing hold again). `subjekt_id` is the partition's entity (a symmetric value comes
// once for each of its ends), `objekt` the value's other end (`objekt_id` where it is an
// entity), `followers` the facts it records as following it (abgeloest_durch). Of a symmetric relation also the far
// partitions (`far`): those of the other ends of the values in the event's people's
// partitions, where a value whose end the move carries must not pass another's start.
// params: $user_id, $character_id, $first_id, $einwertig, $symmetric
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param first_id => '<first entry id>'
// :param einwertig => ['WOHNT_IN', 'BERUF', 'TYP', 'PARTNER']
// :param symmetric => ['PARTNER']
MATCH (s:Entitaet {user_id: $user_id})-[r]->(o)
WHERE r.character_id = $character_id AND r.t_expired IS NULL AND type(r) IN $einwertig
  AND r.timeline_id = $first_id AND coalesce(r.grund, 'abgeloest') = 'abgeloest'
UNWIND CASE WHEN type(r) IN $symmetric THEN [s, o] ELSE [s] END AS p
WITH collect(DISTINCT {p: p, rel: type(r)}) AS near
CALL (near) {
  UNWIND near AS n
  WITH n.p AS p, n.rel AS rel
  WHERE rel IN $symmetric
  MATCH (p)-[x]-(q)
  WHERE type(x) = rel AND x.character_id = $character_id AND x.t_expired IS NULL
    AND coalesce(x.grund, 'abgeloest') = 'abgeloest'
    AND NOT {p: q, rel: rel} IN near
  RETURN collect(DISTINCT {p: q, rel: rel}) AS far
}
UNWIND [n IN near | {p: n.p, rel: n.rel, far: false}]
     + [f IN far | {p: f.p, rel: f.rel, far: true}] AS partition
WITH partition.p AS p, partition.rel AS rel, partition.far AS far
MATCH (p)-[x]-(o)
WHERE type(x) = rel AND (startNode(x) = p OR rel IN $symmetric)
  AND x.character_id = $character_id AND x.t_expired IS NULL
  AND coalesce(x.grund, 'abgeloest') = 'abgeloest'
CALL (x) {
  OPTIONAL MATCH (:TimelineEintrag {id: x.timeline_id})-[:NACHFOLGER*0..]->(ta:TimelineEintrag)
  WHERE NOT (ta)-[:NACHFOLGER]->(:TimelineEintrag)
  RETURN ta LIMIT 1
}
CALL (x) {
  OPTIONAL MATCH (:TimelineEintrag {id: x.timeline_bis})-[:NACHFOLGER*0..]->(tb:TimelineEintrag)
  WHERE NOT (tb)-[:NACHFOLGER]->(:TimelineEintrag)
  RETURN tb LIMIT 1
}
RETURN p.id AS subjekt_id, p.name AS subjekt, rel, far, x.id AS id,
       coalesce(o.name, o.wert) AS objekt, CASE WHEN o:Entitaet THEN o.id END AS objekt_id,
       x.abgeloest_durch AS followers,
       x.timeline_id AS timeline_id, x.timeline_bis AS timeline_bis,
       CASE WHEN ta IS NULL THEN x.t_valid
            ELSE datetime({date: ta.beginn, timezone: 'Z'}) END AS beginn,
       CASE WHEN tb IS NOT NULL THEN datetime({date: tb.beginn, timezone: 'Z'})
            ELSE x.t_invalid END AS ende;

// name: timeline_facts
// The current versions of the pair's facts valid from a chain (what a cancel takes back,
// what a move must keep in order), each with where it ends: t_invalid, or the active
// entry of the chain it ends with.
// params: $user_id, $character_id, $first_id
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param first_id => '<first entry id>'
MATCH (s:Entitaet {user_id: $user_id})-[r]->(o)
WHERE r.character_id = $character_id AND r.timeline_id = $first_id AND r.t_expired IS NULL
OPTIONAL MATCH (:TimelineEintrag {id: r.timeline_bis})-[:NACHFOLGER*0..]->(tb:TimelineEintrag)
WHERE NOT (tb)-[:NACHFOLGER]->(:TimelineEintrag)
RETURN r.id AS id, s.id AS start_id, o.id AS end_id, s.name AS subjekt, type(r) AS rel_type,
       coalesce(o.name, o.wert) AS objekt, r.aktiv AS aktiv, r.grund AS grund,
       r.t_invalid AS t_invalid, tb.beginn AS bis_tag;

// name: timeline_chain
// Every entry of the chain an entry belongs to, oldest first.
// params: $user_id, $character_id, $eintrag_id
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param eintrag_id => '<entry id>'
MATCH (t:TimelineEintrag {id: $eintrag_id})
WHERE t.user_id = $user_id AND t.character_id = $character_id
MATCH (first:TimelineEintrag)-[:NACHFOLGER*0..]->(t)
WHERE NOT (:TimelineEintrag)-[:NACHFOLGER]->(first)
MATCH p = (first)-[:NACHFOLGER*0..]->(last:TimelineEintrag)
WHERE NOT (last)-[:NACHFOLGER]->(:TimelineEintrag)
UNWIND nodes(p) AS e
OPTIONAL MATCH (e)-[:BETRIFFT]->(person:Entitaet)
RETURN e AS eintrag, person.id AS person_id, person.name AS person_name;

// name: timeline_link
// Link the entries $ids (of one chain, each naming nobody yet) to the person they are
// about, $betrifft_id, under the user's lock: a repair of an entry whose link an older
// version did not write or a hand edit deleted. `person` is false where that entity is
// not the user's (nothing is linked then); `linked` counts the links made.
// params: $user_id, $character_id, $ids, $betrifft_id
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param ids => ['<entry id>']
// :param betrifft_id => '<id of Lena>'
OPTIONAL MATCH (e:Entitaet {id: $betrifft_id})
WHERE e.user_id = $user_id
CALL (e) {
  WITH e WHERE e IS NOT NULL
  UNWIND $ids AS id
  MATCH (t:TimelineEintrag {id: id})
  WHERE t.user_id = $user_id AND t.character_id = $character_id
    AND NOT (t)-[:BETRIFFT]->(:Entitaet)
  CREATE (t)-[:BETRIFFT]->(e)
  RETURN count(*) AS linked
}
RETURN e IS NOT NULL AS person, linked;

// name: timeline_window
// The pair's active entries overlapping [$von, $bis]; month-precision entries cover
// their whole month, spans their whole span.
// params: $user_id, $character_id, $von, $bis
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param von => date('2026-11-01')
// :param bis => date('2026-12-31')
MATCH (t:TimelineEintrag)
WHERE t.user_id = $user_id AND t.character_id = $character_id
  AND t.beginn <= $bis AND t.aktiv
WITH t, CASE
  WHEN t.ende IS NOT NULL THEN t.ende
  WHEN t.genauigkeit = 'monat' THEN date.truncate('month', t.beginn) + duration('P1M') - duration('P1D')
  ELSE t.beginn END AS last
WHERE last >= $von
OPTIONAL MATCH (t)-[:BETRIFFT]->(person:Entitaet)
RETURN t AS eintrag, person.id AS person_id, person.name AS person_name
ORDER BY t.beginn, t.titel, t.id;
