// The invariants `kg check` proves. Neo4j Community has no existence or type
// constraints, so these queries are where the guarantees of SQL CHECK constraints live.
// Each returns `count` (violations) and `samples` (a few ids to look at). $user_id null
// checks the whole database; a user id checks that user's data only. Fact edges are the
// relationships of a canon type ($rel_types) leaving an :Entitaet.

// name: check_fact_fields
// Item 1: every fact edge carries its required fields with their types: id, user_id,
// character_id (strings); t_valid, t_recorded, last_touched (datetimes); t_invalid,
// t_expired (datetime or null); aktiv (boolean); staerke_decay (a number); decay_am
// (date or null); timeline_id, timeline_bis (string or null). Samples name the fields.
// params: $user_id, $rel_types, $samples
MATCH (s:Entitaet)-[r]->()
WHERE ($user_id IS NULL OR s.user_id = $user_id) AND type(r) IN $rel_types
  AND NOT (r.id IS :: STRING NOT NULL AND r.user_id IS :: STRING NOT NULL
    AND r.character_id IS :: STRING NOT NULL
    AND r.t_valid IS :: ZONED DATETIME NOT NULL AND r.t_recorded IS :: ZONED DATETIME NOT NULL
    AND r.last_touched IS :: ZONED DATETIME NOT NULL
    AND r.t_invalid IS :: ZONED DATETIME AND r.t_expired IS :: ZONED DATETIME
    AND r.aktiv IS :: BOOLEAN NOT NULL
    AND (r.staerke_decay IS :: FLOAT NOT NULL OR r.staerke_decay IS :: INTEGER NOT NULL)
    AND r.decay_am IS :: DATE AND r.timeline_id IS :: STRING AND r.timeline_bis IS :: STRING)
// Only for the edges that fail: which fields.
WITH r, [f IN [
    {k: 'id', ok: r.id IS :: STRING NOT NULL},
    {k: 'user_id', ok: r.user_id IS :: STRING NOT NULL},
    {k: 'character_id', ok: r.character_id IS :: STRING NOT NULL},
    {k: 't_valid', ok: r.t_valid IS :: ZONED DATETIME NOT NULL},
    {k: 't_recorded', ok: r.t_recorded IS :: ZONED DATETIME NOT NULL},
    {k: 'last_touched', ok: r.last_touched IS :: ZONED DATETIME NOT NULL},
    {k: 't_invalid', ok: r.t_invalid IS :: ZONED DATETIME},
    {k: 't_expired', ok: r.t_expired IS :: ZONED DATETIME},
    {k: 'aktiv', ok: r.aktiv IS :: BOOLEAN NOT NULL},
    {k: 'staerke_decay',
     ok: r.staerke_decay IS :: FLOAT NOT NULL OR r.staerke_decay IS :: INTEGER NOT NULL},
    {k: 'decay_am', ok: r.decay_am IS :: DATE},
    {k: 'timeline_id', ok: r.timeline_id IS :: STRING},
    {k: 'timeline_bis', ok: r.timeline_bis IS :: STRING}
  ] WHERE NOT f.ok | f.k] AS bad
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' ' + type(r) + ' ('
               + reduce(t = '', k IN bad | t + CASE t WHEN '' THEN '' ELSE ', ' END + k)
               + ')')[..$samples] AS samples;

// name: check_fact_herkunft
// Item 1: every fact edge's herkunft is one of the four allowed ($herkunft); no default.
// params: $user_id, $rel_types, $herkunft, $samples
MATCH (s:Entitaet)-[r]->()
WHERE ($user_id IS NULL OR s.user_id = $user_id) AND type(r) IN $rel_types
  AND NOT coalesce(r.herkunft IN $herkunft, false)
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' (herkunft ' + coalesce(toString(r.herkunft), 'missing') + ')')[..$samples] AS samples;

// name: check_fact_strength
// Item 1: a fact edge's strength lies in [0, 1] (a missing strength is check_fact_fields').
// params: $user_id, $rel_types, $samples
MATCH (s:Entitaet)-[r]->()
WHERE ($user_id IS NULL OR s.user_id = $user_id) AND type(r) IN $rel_types
  AND (r.staerke_decay IS :: FLOAT NOT NULL OR r.staerke_decay IS :: INTEGER NOT NULL)
  AND NOT (0.0 <= r.staerke_decay <= 1.0)
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' (staerke_decay ' + toString(r.staerke_decay) + ')')[..$samples] AS samples;

// name: check_fact_aktiv
// Item 1: aktiv agrees with t_invalid and the correction state. Active: no t_invalid,
// grund, t_expired or timeline_bis. Inactive: grund abgeloest (superseded), berichtigt
// or abgesagt (never true, so t_invalid = t_valid), with t_invalid and t_expired set.
// params: $user_id, $rel_types, $samples
MATCH (s:Entitaet)-[r]->()
WHERE ($user_id IS NULL OR s.user_id = $user_id) AND type(r) IN $rel_types
  AND r.aktiv IS :: BOOLEAN NOT NULL
  AND NOT CASE WHEN r.aktiv
    THEN r.t_invalid IS NULL AND r.grund IS NULL AND r.t_expired IS NULL AND r.timeline_bis IS NULL
    ELSE coalesce(r.grund IN ['abgeloest', 'berichtigt', 'abgesagt']
                  AND r.t_invalid IS NOT NULL AND r.t_expired IS NOT NULL
                  AND (r.grund = 'abgeloest' OR r.t_invalid = r.t_valid), false)
  END
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' (aktiv ' + toString(r.aktiv) + ', grund '
               + coalesce(toString(r.grund), 'null') + ')')[..$samples] AS samples;

// name: check_einwertig_unique
// Item 2: at most one active fact per (subject, einwertig relation, pair); a symmetric
// einwertig relation (partner) counts in both directions. Samples: entity, relation, pair.
// params: $user_id, $einwertig, $symmetric, $samples
MATCH (s:Entitaet)
WHERE $user_id IS NULL OR s.user_id = $user_id
CALL (s) {
  MATCH (s)-[r]-()
  WHERE type(r) IN $einwertig AND r.aktiv = true AND (startNode(r) = s OR type(r) IN $symmetric)
  WITH type(r) AS rel, r.character_id AS character_id, count(r) AS n
  WHERE n > 1
  RETURN rel, character_id, n
}
RETURN count(*) AS count,
       collect(s.id + ' ' + rel + ' in pair ' + coalesce(character_id, '?') + ' ('
               + toString(n) + ' active)')[..$samples] AS samples;

// name: check_duplicate_facts
// Item 2: no two identical active facts (same subject, relation, pair and object: the
// same entity, or a value node with the same wert). For symmetric relations A→B and
// B→A are the same fact (counted once, from the smaller id). Samples: the fact ids.
// params: $user_id, $rel_types, $symmetric, $samples
MATCH (s:Entitaet)
WHERE $user_id IS NULL OR s.user_id = $user_id
CALL (s) {
  MATCH (s)-[r]-(o)
  WHERE type(r) IN $rel_types AND r.aktiv = true
    AND CASE WHEN type(r) IN $symmetric THEN s.id < o.id ELSE startNode(r) = s END
  WITH type(r) AS rel, r.character_id AS character_id,
       CASE WHEN o:Wert THEN o.wert ELSE o END AS objekt,
       collect(coalesce(r.id, elementId(r))) AS ids
  WHERE size(ids) > 1
  RETURN rel, ids
}
RETURN count(*) AS count,
       collect(s.id + ' ' + rel + ': '
               + reduce(t = '', i IN ids | t + CASE t WHEN '' THEN '' ELSE ', ' END + i))[..$samples] AS samples;

// name: check_relation_in_canon
// Item 3: every relationship leaving an entity is a fact of a canon relation, and every
// relationship of a canon type leaves an entity (never a timeline entry or a value node).
// params: $user_id, $rel_types, $samples
CALL () {
  MATCH (s:Entitaet)-[r]->()
  WHERE ($user_id IS NULL OR s.user_id = $user_id) AND NOT type(r) IN $rel_types
  RETURN r
  UNION ALL
  MATCH (x)-[r]->()
  WHERE NOT x:Entitaet AND ($user_id IS NULL OR x.user_id = $user_id) AND type(r) IN $rel_types
  RETURN r
}
RETURN count(r) AS count,
       collect(type(r) + ' ' + coalesce(r.id, elementId(r)))[..$samples] AS samples;

// name: check_relation_form
// Item 3: a fact has the canon's form: a value relation ($value_types) ends at a Wert
// node, an entity relation at an entity.
// params: $user_id, $rel_types, $value_types, $samples
MATCH (s:Entitaet)-[r]->(o)
WHERE ($user_id IS NULL OR s.user_id = $user_id) AND type(r) IN $rel_types
  AND CASE WHEN type(r) IN $value_types THEN NOT o:Wert ELSE NOT o:Entitaet END
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' ' + type(r) + ' → '
               + coalesce(head(labels(o)), 'unlabelled node'))[..$samples] AS samples;

// name: check_wert_nodes
// Item 3: every value node is the object of exactly one value fact (from an entity) and
// has no other edge: never shared, never traversed further. Samples: element ids.
// params: $user_id, $value_types, $samples
MATCH (w:Wert)
WHERE $user_id IS NULL OR w.user_id = $user_id
WITH w, COUNT { (w)<--() } AS incoming, COUNT { (w)-->() } AS outgoing,
     COUNT { (w)<-[r]-(:Entitaet) WHERE type(r) IN $value_types } AS facts
WHERE NOT (incoming = 1 AND facts = 1 AND outgoing = 0)
RETURN count(w) AS count,
       collect(elementId(w) + ' (' + toString(incoming) + ' in, ' + toString(facts)
               + ' facts, ' + toString(outgoing) + ' out)')[..$samples] AS samples;

// name: check_nachfolger_unique
// Item 4: a timeline entry has at most one successor and at most one predecessor.
// params: $user_id, $samples
MATCH (t:TimelineEintrag)
WHERE $user_id IS NULL OR t.user_id = $user_id
WITH t, COUNT { (t)-[:NACHFOLGER]->() } AS next, COUNT { (t)<-[:NACHFOLGER]-() } AS prev
WHERE next > 1 OR prev > 1
RETURN count(t) AS count,
       collect(coalesce(t.id, elementId(t)) + ' (' + toString(next) + ' successors, '
               + toString(prev) + ' predecessors)')[..$samples] AS samples;

// name: check_nachfolger_cycles
// Item 4: no NACHFOLGER chain returns to an entry it passed. Samples: entries on a cycle.
// params: $user_id, $samples
MATCH (t:TimelineEintrag)
WHERE ($user_id IS NULL OR t.user_id = $user_id)
  AND EXISTS { (t)-[:NACHFOLGER*1..]->(t) }
RETURN count(t) AS count, collect(coalesce(t.id, elementId(t)))[..$samples] AS samples;

// name: check_timeline_active_end
// Item 4: exactly the end of a chain is active — an entry with a successor is inactive,
// the end is active unless its event was cancelled (abgesagt: then inactive, and it has
// no successor).
// params: $user_id, $samples
MATCH (t:TimelineEintrag)
WHERE $user_id IS NULL OR t.user_id = $user_id
WITH t, EXISTS { (t)-[:NACHFOLGER]->() } AS moved, coalesce(t.abgesagt, false) AS abgesagt
WHERE NOT coalesce(t.aktiv = (NOT moved AND NOT abgesagt), false) OR (moved AND abgesagt)
RETURN count(t) AS count,
       collect(coalesce(t.id, elementId(t)) + ' (aktiv ' + coalesce(toString(t.aktiv), 'null')
               + CASE WHEN moved THEN ', has a successor' ELSE ', chain end' END
               + CASE WHEN abgesagt THEN ', abgesagt)' ELSE ')' END)[..$samples] AS samples;

// name: check_timeline_references
// Item 4: every timeline_id (and timeline_bis) on a fact names an existing first entry
// (one without a predecessor) of the fact's own pair.
// params: $user_id, $rel_types, $samples
MATCH (s:Entitaet)-[r]->()
WHERE ($user_id IS NULL OR s.user_id = $user_id) AND type(r) IN $rel_types
  AND (r.timeline_id IS NOT NULL OR r.timeline_bis IS NOT NULL)
UNWIND [ref IN [r.timeline_id, r.timeline_bis] WHERE ref IS NOT NULL] AS ref
OPTIONAL MATCH (t:TimelineEintrag {id: ref})
WITH s, r, ref, t
WHERE t IS NULL
   OR NOT coalesce(t.user_id = s.user_id AND t.character_id = r.character_id, false)
   OR EXISTS { (:TimelineEintrag)-[:NACHFOLGER]->(t) }
RETURN count(*) AS count,
       collect(coalesce(r.id, elementId(r)) + ' → ' + toString(ref)
               + CASE WHEN t IS NULL THEN ' (no such entry)' ELSE '' END)[..$samples] AS samples;

// name: check_one_user_per_fact
// Item 5: no fact links entities of two different users: the fact's user_id, its
// subject's and its object's (entity or value node) are the same.
// params: $user_id, $rel_types, $samples
MATCH (s:Entitaet)-[r]->(o)
WHERE ($user_id IS NULL OR s.user_id = $user_id) AND type(r) IN $rel_types
  AND NOT coalesce(r.user_id = s.user_id AND o.user_id = s.user_id, false)
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' (' + coalesce(s.user_id, '?') + ' → '
               + coalesce(o.user_id, '?') + ')')[..$samples] AS samples;

// name: check_timeline_pair
// Item 5: NACHFOLGER joins entries of one pair (both directions are checked) and
// BETRIFFT joins an entry to an entity of the same user.
// params: $user_id, $samples
MATCH (t:TimelineEintrag)
WHERE $user_id IS NULL OR t.user_id = $user_id
CALL (t) {
  MATCH (t)-[l:NACHFOLGER]-(x)
  WHERE NOT coalesce(x:TimelineEintrag AND x.user_id = t.user_id
                     AND x.character_id = t.character_id, false)
  RETURN l
  UNION ALL
  MATCH (t)-[l:BETRIFFT]->(x)
  WHERE NOT coalesce(x:Entitaet AND x.user_id = t.user_id, false)
  RETURN l
}
RETURN count(l) AS count,
       collect(coalesce(t.id, elementId(t)) + ' ' + type(l))[..$samples] AS samples;

// name: check_table_labels
// Item 7, the decay convention's §4 table for node labels: per label how many nodes,
// which decay properties they carry (keys ending in _decay, and decay_am), the newest
// decay_am, and how many are the target of a relationship.
// params: $user_id
MATCH (n)
WHERE $user_id IS NULL OR n.user_id = $user_id
WITH n, [k IN keys(n) WHERE k ENDS WITH '_decay' OR k = 'decay_am'] AS decay_keys,
     EXISTS { (n)<--() } AS targeted
UNWIND labels(n) AS label
RETURN label, count(n) AS count, collect(DISTINCT decay_keys) AS decay_keys,
       max(CASE WHEN n.decay_am IS :: DATE THEN n.decay_am END) AS newest,
       count(CASE WHEN targeted THEN 1 END) AS targeted
ORDER BY label;

// name: check_table_relationships
// Item 7, the §4 table for relationship types: per type how many, which decay
// properties they carry, the newest decay_am, how many are active, and how many active
// ones carry a strength that no recent run covers: their decay_am is missing or before
// $oldest (the oldest day that still counts as recent), and they were last touched
// before the store's newest run $run (null: there is none). An edge written after the
// run, and a type whose edges are all inactive (never swept again), need no run.
// params: $user_id, $run, $oldest
MATCH (x)-[r]->()
WHERE $user_id IS NULL OR x.user_id = $user_id
RETURN type(r) AS type, count(r) AS count,
       collect(DISTINCT [k IN keys(r) WHERE k ENDS WITH '_decay' OR k = 'decay_am']) AS decay_keys,
       max(CASE WHEN r.decay_am IS :: DATE THEN r.decay_am END) AS newest,
       count(CASE WHEN r.aktiv = true THEN 1 END) AS active,
       count(CASE WHEN r.aktiv = true AND r.staerke_decay IS NOT NULL
                   AND NOT coalesce(r.decay_am IS :: DATE AND r.decay_am >= $oldest, false)
                   AND ($run IS NULL
                        OR NOT coalesce(r.last_touched >= datetime({date: $run, timezone: 'UTC'}),
                                        false))
                  THEN 1 END) AS unswept
ORDER BY type;

// name: check_decay_state
// Item 6, the decay state of the active fact edges (of one user when $user_id is set).
// The store's newest run is the newer of the newest recorded global sweep (DecayLauf)
// and the newest decay_am of the edges in scope, both up to $today: so a user whose
// edges were all written after today's global sweep has that run too, and the per-user
// and the whole-store check agree. Returns how many edges carry a strength, that run
// (`newest`), how many carry a decay_am after $today (no run can have measured a day to
// come), how many carry a strength no recent run covers (`stale`: decay_am missing or
// before $oldest, last touched before the run), and how many the run missed (last
// touched before its day, yet not swept by it), with a few ids.
// params: $user_id, $rel_types, $today, $oldest, $samples
CALL () {
  OPTIONAL MATCH (d:DecayLauf)
  WHERE d.tag IS :: DATE AND d.tag <= $today
  RETURN max(d.tag) AS swept
}
CALL () {
  MATCH (s:Entitaet)-[r]->()
  WHERE ($user_id IS NULL OR s.user_id = $user_id) AND type(r) IN $rel_types AND r.aktiv = true
  WITH r, r.decay_am IS :: DATE AS dated
  RETURN count(r) AS active, count(r.staerke_decay) AS with_strength,
         max(CASE WHEN dated AND r.decay_am <= $today THEN r.decay_am END) AS edge_newest,
         count(CASE WHEN dated AND r.decay_am > $today THEN 1 END) AS future
}
WITH active, with_strength, future,
     CASE WHEN swept IS NULL OR (edge_newest IS NOT NULL AND edge_newest > swept)
          THEN edge_newest ELSE swept END AS newest
CALL (newest) {
  MATCH (s:Entitaet)-[r]->()
  WHERE ($user_id IS NULL OR s.user_id = $user_id) AND type(r) IN $rel_types
    AND r.aktiv = true AND r.staerke_decay IS NOT NULL
    AND NOT coalesce(r.decay_am IS :: DATE AND r.decay_am >= $oldest, false)
    AND (newest IS NULL
         OR NOT coalesce(r.last_touched >= datetime({date: newest, timezone: 'UTC'}), false))
  RETURN count(r) AS stale
}
CALL (newest) {
  MATCH (s:Entitaet)-[r]->()
  WHERE newest IS NOT NULL AND ($user_id IS NULL OR s.user_id = $user_id)
    AND type(r) IN $rel_types AND r.aktiv = true
    AND r.last_touched < datetime({date: newest, timezone: 'UTC'})
    AND coalesce(r.decay_am < newest, true)
  RETURN count(r) AS missed, collect(r.id)[..$samples] AS samples
}
RETURN active, with_strength, newest, future, stale, missed, samples;
