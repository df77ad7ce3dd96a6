// name: import_lock
// Take the user's lock (the writer's Nutzer node) for an import, so it never
// interleaves with an order of that user, and its clock (`jetzt`), as the writer does:
// an import is a write of the user, and a Mappe read after it stands at its instant
// (`stand`). The library refuses a file with a system time after it (a store whose
// clock ran ahead, a file edited by hand): a later write would be recorded before it.
// `held` is false when a purge deleted the lock node while this transaction waited for
// its lock (see user_clock): the library runs the import again.
// params: $user_id
// :param user_id => 'u1'
{{ user_clock }}
RETURN lock.id AS id, jetzt IS NOT NULL AS held, jetzt;

// name: transfer_lock
// Take the lock of an existing user for an export or a purge without changing anything
// (a SET to the same value still locks): an export is a consistent snapshot between two
// orders, and a purge never interleaves with one. No row: the user has no lock node.
// params: $user_id
// :param user_id => 'u1'
MATCH (n:Nutzer {id: $user_id})
SET n.writes = n.writes
RETURN n.id AS id;

// name: export_entities
// The user's entities; for a pair ($character_id set) only those the pair's facts or
// timeline entries touch. Every export query returns the properties as [key, type,
// value] with the temporal types in $temporal as their exact text (toString), which
// the driver would otherwise have to hydrate into objects, slowly. With each, the ids
// of the user's other entities of its normalised name (`namensvettern`, by id): a
// restore takes the file's entity for the store's of its name only where that one is
// not among them (made since the export), never where it was another person then.
// params: $user_id, $character_id, $temporal
// :param user_id => 'u1'
// :param character_id => 'nova'
// :param temporal => ['ZONED DATETIME NOT NULL', 'DATE NOT NULL']
MATCH (e:Entitaet {user_id: $user_id})
WHERE $character_id IS NULL
   OR EXISTS { MATCH (e)-[r]-() WHERE r.character_id = $character_id }
   OR EXISTS {
        MATCH (e)<-[:BETRIFFT]-(t:TimelineEintrag)
        WHERE t.user_id = $user_id AND t.character_id = $character_id
      }
RETURN [k IN keys(e) | [k, valueType(e[k]), CASE WHEN valueType(e[k]) IN $temporal
         THEN toString(e[k]) ELSE e[k] END]] AS props,
       COLLECT {
         MATCH (n:Entitaet {user_id: $user_id, name_norm: e.name_norm})
         WHERE n <> e
         RETURN n.id ORDER BY n.id
       } AS namensvettern;

// name: export_facts
// The facts of the user (or the pair): relationship type, both ends, all properties.
// params: $user_id, $character_id, $temporal
// :param user_id => 'u1'
// :param character_id => 'nova'
// :param temporal => ['ZONED DATETIME NOT NULL', 'DATE NOT NULL']
MATCH (s:Entitaet {user_id: $user_id})-[r]->(o)
WHERE $character_id IS NULL OR r.character_id = $character_id
RETURN type(r) AS rel_type, s.id AS subjekt,
       CASE WHEN o:Wert THEN null ELSE o.id END AS objekt, o.wert AS wert,
       [k IN keys(r) | [k, valueType(r[k]), CASE WHEN valueType(r[k]) IN $temporal
         THEN toString(r[k]) ELSE r[k] END]] AS props;

// name: export_timeline
// The timeline entries of the user (or the pair) with their NACHFOLGER successors and
// the entities they are about (BETRIFFT).
// params: $user_id, $character_id, $temporal
// :param user_id => 'u1'
// :param character_id => 'nova'
// :param temporal => ['ZONED DATETIME NOT NULL', 'DATE NOT NULL']
MATCH (t:TimelineEintrag)
WHERE t.user_id = $user_id AND ($character_id IS NULL OR t.character_id = $character_id)
RETURN [k IN keys(t) | [k, valueType(t[k]), CASE WHEN valueType(t[k]) IN $temporal
         THEN toString(t[k]) ELSE t[k] END]] AS props,
       COLLECT { MATCH (t)-[:NACHFOLGER]->(n:TimelineEintrag) RETURN n.id } AS nachfolger,
       COLLECT { MATCH (t)-[:BETRIFFT]->(e:Entitaet) RETURN e.id } AS betrifft;

// name: export_orders
// The audited orders of the user (or the pair).
// params: $user_id, $character_id, $temporal
// :param user_id => 'u1'
// :param character_id => 'nova'
// :param temporal => ['ZONED DATETIME NOT NULL', 'DATE NOT NULL']
MATCH (a:Auftrag {user_id: $user_id})
WHERE $character_id IS NULL OR a.character_id = $character_id
RETURN [k IN keys(a) | [k, valueType(a[k]), CASE WHEN valueType(a[k]) IN $temporal
         THEN toString(a[k]) ELSE a[k] END]] AS props;

// name: import_conflicts
// What of an import file is in the store already: entity, fact and entry ids of another
// user (a conflict: ids are global), entity ids of this user (kept as they are), and
// this user's fact, entry and order ids (a conflict: the file was imported before, or
// the data was never purged); an order by its pair's key, as `character/id`. Fact ids have
// no index: every fact edge is looked at once
// (`IN` against the list is a hash lookup).
// Of the file's entities not in the store by id, the ids of the user's entities of the
// same normalised name (`namensvettern`): the import takes such an entity for the
// file's, so a restore never makes a second one of a name.
// params: $user_id, $entity_ids, $entities, $fact_ids, $eintrag_ids, $auftraege
// :param user_id => 'u1'
// :param entity_ids => ['e-lena']
// :param entities => [{id: 'e-lena', name_norm: 'lena'}]
// :param fact_ids => ['f-1']
// :param eintrag_ids => ['t-1']
// :param auftraege => [{character_id: 'nova', id: 'turn-1'}]
CALL () {
  UNWIND $entity_ids AS id
  MATCH (e:Entitaet {id: id})
  RETURN collect(CASE WHEN e.user_id <> $user_id THEN id END) AS fremde_entitaeten,
         collect(CASE WHEN e.user_id = $user_id THEN id END) AS vorhandene_entitaeten
}
CALL () {
  MATCH (s:Entitaet)-[r]->()
  WHERE size($fact_ids) > 0 AND r.id IN $fact_ids
  RETURN collect(CASE WHEN s.user_id = $user_id THEN r.id END) AS fakten,
         collect(CASE WHEN s.user_id <> $user_id THEN r.id END) AS fremde_fakten
}
CALL () {
  UNWIND $eintrag_ids AS id
  MATCH (t:TimelineEintrag {id: id})
  RETURN collect(CASE WHEN t.user_id = $user_id THEN id END) AS eintraege,
         collect(CASE WHEN t.user_id <> $user_id THEN id END) AS fremde_eintraege
}
CALL () {
  UNWIND $auftraege AS k
  MATCH (a:Auftrag {user_id: $user_id, character_id: k.character_id, id: k.id})
  RETURN collect(k.character_id + '/' + k.id) AS auftraege
}
CALL () {
  UNWIND $entities AS f
  OPTIONAL MATCH (known:Entitaet {id: f.id})
  WITH f WHERE known IS NULL
  MATCH (e:Entitaet {user_id: $user_id, name_norm: f.name_norm})
  WITH f, collect(e.id) AS ids
  RETURN collect({datei: f.id, store: ids}) AS namensvettern
}
RETURN fremde_entitaeten, vorhandene_entitaeten, fakten, fremde_fakten, eintraege,
       fremde_eintraege, auftraege, namensvettern;

// fragment: set_imported_properties
// Writes an import row ({props, zeit, tag}) onto `x`: `props` as they are, temporal
// values from their text as a DateTime (zeit) or a Date (tag), exactly as exported.
SET x = row.props
FOREACH (k IN keys(row.zeit) | SET x[k] = datetime(row.zeit[k]))
FOREACH (k IN keys(row.tag) | SET x[k] = date(row.tag[k]))

// name: import_entities
// One batch of entities new to the store (those the user has already are kept as they
// are). Each import row is {props, zeit, tag}: temporal values come as text and become
// a DateTime (zeit) or a Date (tag) here, exactly as exported.
// params: $user_id, $rows
// :param user_id => 'u1'
// :param rows => [{props: {id: 'e-lena', user_id: 'u1', name: 'Lena', name_norm: 'lena'}, zeit: {erstellt: '2026-09-01T10:00:00Z'}, tag: {}}]
UNWIND $rows AS row
CREATE (x:Entitaet)
{{ set_imported_properties }}
WITH x WHERE x.user_id = $user_id
RETURN count(x) AS n;

// name: import_entries
// One batch of timeline entries ({props, zeit, tag}; null properties stay absent).
// params: $user_id, $rows
// :param user_id => 'u1'
// :param rows => [{props: {id: 't-1', user_id: 'u1', character_id: 'nova', typ: 'ereignis', titel: 'Lena zieht nach Kassel', genauigkeit: 'monat', aktiv: true, abgesagt: false}, zeit: {t_recorded: '2026-10-15T10:00:00Z'}, tag: {beginn: '2026-11-01'}}]
UNWIND $rows AS row
CREATE (x:TimelineEintrag)
{{ set_imported_properties }}
WITH x WHERE x.user_id = $user_id
RETURN count(x) AS n;

// name: import_nachfolger
// One batch of NACHFOLGER links between entries of the user.
// params: $user_id, $rows
// :param user_id => 'u1'
// :param rows => [{von: 't-1', nach: 't-2'}]
UNWIND $rows AS row
MATCH (a:TimelineEintrag {id: row.von}), (b:TimelineEintrag {id: row.nach})
WHERE a.user_id = $user_id AND b.user_id = $user_id
CREATE (a)-[:NACHFOLGER]->(b)
RETURN count(*) AS n;

// name: import_betrifft
// One batch of BETRIFFT links from entries to the user's entities.
// params: $user_id, $rows
// :param user_id => 'u1'
// :param rows => [{eintrag: 't-1', entitaet: 'e-lena'}]
UNWIND $rows AS row
MATCH (t:TimelineEintrag {id: row.eintrag}), (e:Entitaet {id: row.entitaet})
WHERE t.user_id = $user_id AND e.user_id = $user_id
CREATE (t)-[:BETRIFFT]->(e)
RETURN count(*) AS n;

// name: import_ref_facts
// One batch of reference facts; rel_type was checked against the canon before.
// params: $user_id, $rows
// :param user_id => 'u1'
// :param rows => [{rel_type: 'WOHNT_IN', subjekt: 'e-lena', objekt: 'e-kassel', props: {id: 'f-1', user_id: 'u1', character_id: 'nova', herkunft: 'mensch', aktiv: true, staerke_decay: 1.0}, zeit: {t_valid: '2026-09-01T10:00:00Z', t_recorded: '2026-09-01T10:00:00Z', last_touched: '2026-09-01T10:00:00Z'}, tag: {}}]
UNWIND $rows AS row
MATCH (s:Entitaet {id: row.subjekt}), (o:Entitaet {id: row.objekt})
WHERE s.user_id = $user_id AND o.user_id = $user_id
CREATE (s)-[x:$(row.rel_type)]->(o)
{{ set_imported_properties }}
RETURN count(x) AS n;

// name: import_value_facts
// One batch of value facts, each with its own Wert node; rel_type is from the canon.
// params: $user_id, $rows
// :param user_id => 'u1'
// :param rows => [{rel_type: 'BERUF', subjekt: 'e-lena', wert: 'Ärztin', props: {id: 'f-1', user_id: 'u1', character_id: 'nova', herkunft: 'mensch', aktiv: true, staerke_decay: 1.0}, zeit: {t_valid: '2026-09-01T10:00:00Z', t_recorded: '2026-09-01T10:00:00Z', last_touched: '2026-09-01T10:00:00Z'}, tag: {}}]
UNWIND $rows AS row
MATCH (s:Entitaet {id: row.subjekt})
WHERE s.user_id = $user_id
CREATE (s)-[x:$(row.rel_type)]->(:Wert {wert: row.wert, user_id: $user_id})
{{ set_imported_properties }}
RETURN count(x) AS n;

// name: import_orders
// One batch of audited orders ({props, zeit, tag}).
// params: $user_id, $rows
// :param user_id => 'u1'
// :param rows => [{props: {id: 'turn-1', user_id: 'u1', character_id: 'nova', status: 'geschrieben'}, zeit: {empfangen: '2026-09-01T10:00:00Z', erfasst: '2026-09-01T10:00:01Z'}, tag: {}}]
UNWIND $rows AS row
CREATE (x:Auftrag)
{{ set_imported_properties }}
WITH x WHERE x.user_id = $user_id
RETURN count(x) AS n;

// name: purge_facts
// Delete the facts of the user (or the pair) and their value nodes. Returns the
// entities they touched: deleted later once nothing refers to them any more. A value
// node goes with whatever else hangs on it (an edge from it set by hand, which `kg
// check` reports: with a plain DELETE the purge failed on the server's words, and
// deleted nothing).
// params: $user_id, $character_id
// :param user_id => 'u1'
// :param character_id => 'nova'
MATCH (s:Entitaet {user_id: $user_id})-[r]->(o)
WHERE $character_id IS NULL OR r.character_id = $character_id
WITH r, s.id AS subjekt_id, CASE WHEN o:Wert THEN null ELSE o.id END AS objekt_id,
     CASE WHEN o:Wert THEN o END AS w
DELETE r
DETACH DELETE w
RETURN count(r) AS fakten, count(w) AS werte,
       collect(DISTINCT subjekt_id) + collect(DISTINCT objekt_id) AS entitaeten;

// name: purge_timeline
// Delete the timeline entries of the user (or the pair) with their links. Returns the
// entities they were about.
// params: $user_id, $character_id
// :param user_id => 'u1'
// :param character_id => 'nova'
MATCH (t:TimelineEintrag)
WHERE t.user_id = $user_id AND ($character_id IS NULL OR t.character_id = $character_id)
WITH t, COLLECT { MATCH (t)-[:BETRIFFT]->(e:Entitaet) RETURN e.id } AS betrifft,
     COUNT { (t)-[:NACHFOLGER]->() } AS nachfolger
DETACH DELETE t
RETURN count(t) AS eintraege, sum(nachfolger) AS nachfolger,
       reduce(ids = [], b IN collect(betrifft) | ids + b) AS entitaeten;

// name: purge_orders
// Delete the audited orders of the user (or the pair).
// params: $user_id, $character_id
// :param user_id => 'u1'
// :param character_id => 'nova'
MATCH (a:Auftrag {user_id: $user_id})
WHERE $character_id IS NULL OR a.character_id = $character_id
DELETE a
RETURN count(a) AS auftraege;

// name: purge_entities
// Delete the user's entities: of a pair's purge ($entity_ids), those that nothing refers
// to any more (an entity another pair of the user still has a fact or entry on stays);
// of a whole user's ($entity_ids null), all of them, with whatever still hangs on them
// (`fremde_kanten`): only another user's fact or entry can, which breaks the rule that
// a user's facts stay among the user's entities (`kg check`'s one_user_per_fact). Kept,
// the user's name outlived its purge, with its lock node, and a second purge said
// there was nothing (a stranger's attack).
// params: $user_id, $entity_ids
// :param user_id => 'u1'
// :param entity_ids => null
MATCH (e:Entitaet {user_id: $user_id})
WHERE $entity_ids IS NULL OR e.id IN $entity_ids
WITH e, COUNT { (e)--() } AS kanten
WITH collect(CASE WHEN kanten > 0 AND $entity_ids IS NOT NULL THEN e END) AS bleiben,
     collect(CASE WHEN kanten = 0 OR $entity_ids IS NULL THEN e END) AS weg,
     sum(CASE WHEN $entity_ids IS NULL THEN kanten ELSE 0 END) AS fremd
FOREACH (e IN weg | DETACH DELETE e)
RETURN size(weg) AS entitaeten, size(bleiben) AS behalten, fremd AS fremde_kanten;

// name: purge_clock
// A pair's purge takes the user's clock, as a write does (its lock is held already,
// `transfer_lock`): a Mappe read of the user that raced it finds the clock moved and
// reads again, and one after it stands at the purge. (A whole user's purge deletes the
// lock node, and its clock with it.) No row: the user has no lock node.
// params: $user_id
// :param user_id => 'u1'
MATCH (lock:Nutzer {id: $user_id})
{{ clock_tick }}
RETURN jetzt;

// fragment: user_has_data
// Whether the store holds data of $user_id: an entity (every fact leaves one), a
// timeline entry or an order (the lock node aside).
EXISTS { MATCH (:Entitaet {user_id: $user_id}) }
OR EXISTS { MATCH (t:TimelineEintrag) WHERE t.user_id = $user_id }
OR EXISTS { MATCH (:Auftrag {user_id: $user_id}) }

// name: purge_lock_left
// Whether the purge, which holds the user's lock, found a lock node with nothing of the
// user left beside it (`nutzer` 1): `purge_lock` deletes it after the purge's commit.
// A purge that deletes nothing else is not refused for "nothing stored" then.
// params: $user_id
// :param user_id => 'u1'
MATCH (n:Nutzer {id: $user_id})
WHERE NOT (
  {{ user_has_data }}
)
RETURN count(n) AS nutzer;

// name: purge_lock
// Delete the user's lock node while nothing of the user is in the store, in a
// transaction of its own after the purge (see kg.transfer.store.purge): a write of the
// user that came after the purge keeps it. The lock first, then the look: read before
// it, the look missed a write that held the lock then and committed, and the node went
// from under the write's data.
// params: $user_id
// :param user_id => 'u1'
MATCH (n:Nutzer {id: $user_id})
SET n.writes = n.writes
WITH n
WHERE NOT (
  {{ user_has_data }}
)
DELETE n
RETURN count(n) AS nutzer;
