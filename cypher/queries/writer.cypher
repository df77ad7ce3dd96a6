// name: user_lock
// Serialise the orders of one user: the first write takes the user's lock node for
// the rest of the transaction, so entity creation by name, einwertig supersession and
// the idempotency check cannot race. Returns the stored result of a replayed order.
// params: $user_id, $auftrag_id
MERGE (n:Nutzer {id: $user_id})
SET n.writes = coalesce(n.writes, 0) + 1
WITH n
OPTIONAL MATCH (a:Auftrag {user_id: $user_id, id: $auftrag_id})
RETURN a.ergebnis AS ergebnis;

// name: entity_candidates
// The user's entities with this normalised name, with their type in the pair and a
// few active facts that tell them apart.
// params: $user_id, $character_id, $name_norm
MATCH (e:Entitaet {user_id: $user_id, name_norm: $name_norm})
CALL (e) {
  OPTIONAL MATCH (e)-[t:TYP]->(w:Wert)
  WHERE t.character_id = $character_id AND t.aktiv
  RETURN w.wert AS typ LIMIT 1
}
CALL (e) {
  OPTIONAL MATCH (e)-[r]-(o)
  WHERE r.character_id = $character_id AND r.aktiv AND type(r) <> 'TYP'
  WITH r, o ORDER BY r.last_touched DESC LIMIT 3
  RETURN collect({rel: type(r), out: startNode(r) = e, other: coalesce(o.name, o.wert)}) AS merkmale
}
RETURN e.id AS id, e.name AS name, coalesce(typ, 'sonstiges') AS typ, merkmale
ORDER BY e.erstellt, e.id;

// name: entity_by_id
// One entity of the user by id, with its type in the pair (nothing for a foreign id).
// params: $user_id, $character_id, $entity_id
MATCH (e:Entitaet {id: $entity_id})
WHERE e.user_id = $user_id
CALL (e) {
  OPTIONAL MATCH (e)-[t:TYP]->(w:Wert)
  WHERE t.character_id = $character_id AND t.aktiv
  RETURN w.wert AS typ LIMIT 1
}
RETURN e.id AS id, e.name AS name, coalesce(typ, 'sonstiges') AS typ;

// name: entity_create
// A new entity of the user.
// params: $user_id, $entity_id, $name, $name_norm, $erstellt
CREATE (e:Entitaet {
  id: $entity_id, user_id: $user_id, name: $name, name_norm: $name_norm, erstellt: $erstellt
})
RETURN e.id AS id;

// name: facts_active
// The pair's active facts of one relation at an entity: outgoing, and for symmetric
// relations incoming too.
// params: $user_id, $character_id, $entity_id, $rel_type, $both_directions
MATCH (s:Entitaet {id: $entity_id})-[r:$($rel_type)]-(o)
WHERE s.user_id = $user_id AND r.character_id = $character_id AND r.aktiv
  AND (startNode(r) = s OR $both_directions)
RETURN r.id AS id, startNode(r).id AS start_id, endNode(r).id AS end_id,
       o.wert AS wert, o.id AS objekt_id, r.herkunft AS herkunft;

// name: fact_create_ref
// A reference fact between two entities of the user.
// params: $user_id, $subjekt_id, $objekt_id, $rel_type, $props
MATCH (s:Entitaet {id: $subjekt_id}), (o:Entitaet {id: $objekt_id})
WHERE s.user_id = $user_id AND o.user_id = $user_id
CREATE (s)-[r:$($rel_type)]->(o)
SET r = $props
RETURN r.id AS id;

// name: fact_create_value
// A value fact: its own Wert node, never shared.
// params: $user_id, $subjekt_id, $wert, $rel_type, $props
MATCH (s:Entitaet {id: $subjekt_id})
WHERE s.user_id = $user_id
CREATE (s)-[r:$($rel_type)]->(:Wert {wert: $wert, user_id: $user_id})
SET r = $props
RETURN r.id AS id;

// name: facts_retire
// Make facts inactive: superseded (with the validity end) or corrected (never true).
// params: $user_id, $facts, $grund, $t_invalid, $t_expired, $timeline_bis
UNWIND $facts AS f
MATCH (s:Entitaet {id: f.start_id})-[r]->()
WHERE s.user_id = $user_id AND r.id = f.id AND r.aktiv
SET r.aktiv = false, r.grund = $grund, r.t_invalid = coalesce($t_invalid, r.t_valid),
    r.t_expired = $t_expired, r.timeline_bis = $timeline_bis
RETURN r.id AS id;

// name: fact_touch
// Re-asserting a fact: strength back to 1, last_touched renewed; no new row.
// params: $user_id, $start_id, $fakt_id, $zeitpunkt
MATCH (s:Entitaet {id: $start_id})-[r]->()
WHERE s.user_id = $user_id AND r.id = $fakt_id
SET r.last_touched = $zeitpunkt, r.staerke_decay = 1.0
RETURN r.id AS id;

// name: facts_matching
// Facts of the pair, active or superseded but not already corrected, from a subject
// with one relation to one object or value (the target of a correction).
// params: $user_id, $character_id, $entity_id, $rel_type, $objekt_id, $wert
MATCH (s:Entitaet {id: $entity_id})-[r:$($rel_type)]-(o)
WHERE s.user_id = $user_id AND r.character_id = $character_id
  AND coalesce(r.grund, '') <> 'berichtigt'
  AND ((o.id IS NOT NULL AND o.id = $objekt_id) OR (o.wert IS NOT NULL AND o.wert = $wert))
  AND (startNode(r) = s OR o.id IS NOT NULL)
RETURN r.id AS id, startNode(r).id AS start_id, r.aktiv AS aktiv;

// name: auftrag_record
// The audit of one order: when it came, its status, and the whole result (JSON).
// params: $user_id, $auftrag_id, $character_id, $zeitpunkt, $status, $ergebnis, $anzahl
CREATE (a:Auftrag {
  id: $auftrag_id, user_id: $user_id, character_id: $character_id,
  empfangen: $zeitpunkt, erfasst: datetime(), status: $status,
  ergebnis: $ergebnis, anzahl_tripel: $anzahl
});

// name: audit_list
// The newest orders of a pair (or of all the user's characters when $character_id is null).
// params: $user_id, $character_id, $limit
MATCH (a:Auftrag {user_id: $user_id})
WHERE $character_id IS NULL OR a.character_id = $character_id
RETURN a.id AS auftrag_id, a.character_id AS character_id, a.empfangen AS empfangen,
       a.erfasst AS erfasst, a.status AS status, a.anzahl_tripel AS anzahl, a.ergebnis AS ergebnis
ORDER BY a.erfasst DESC
LIMIT $limit;

// name: audit_prune
// Forensics has a retention period instead of decay: delete orders recorded before the cutoff.
// params: $before
MATCH (a:Auftrag)
WHERE a.erfasst < $before
WITH a LIMIT 100000
DETACH DELETE a
RETURN count(*) AS deleted;

// name: entities_list
// The user's entities with their type and number of active facts in the pair.
// params: $user_id, $character_id, $limit
MATCH (e:Entitaet {user_id: $user_id})
CALL (e) {
  OPTIONAL MATCH (e)-[t:TYP]->(w:Wert)
  WHERE t.character_id = $character_id AND t.aktiv
  RETURN w.wert AS typ LIMIT 1
}
CALL (e) {
  OPTIONAL MATCH (e)-[r]-()
  WHERE r.character_id = $character_id AND r.aktiv AND type(r) <> 'TYP'
  RETURN count(r) AS fakten
}
RETURN e.id AS id, e.name AS name, coalesce(typ, 'sonstiges') AS typ, fakten
ORDER BY e.name_norm, e.id
LIMIT $limit;
