// Facts become series of versions, append-only in system time. Before this migration a
// superseded, corrected or cancelled fact was one edge whose t_expired said when it
// stopped being current, its valid-time end written over the record it had. Now every
// change closes a version (t_expired) and writes the next one (version + 1, recorded then).
// Each old changed edge is split into the two records it stands for: version 1, the fact
// as it was recorded (open, current from t_recorded until t_expired), and version 2, the
// change (recorded at the old t_expired, still current). Unchanged edges become version 1.
// Value facts get a Wert node per version (a value node is never shared).
// Idempotent: each statement touches only edges without a version; batched, so it runs
// on large stores.

MATCH (s:Entitaet)-[r]->(o:Entitaet)
WHERE r.id IS NOT NULL AND r.character_id IS NOT NULL AND r.version IS NULL
  AND r.grund IS NOT NULL AND r.t_expired IS NOT NULL
CALL (s, r, o) {
  CREATE (s)-[v:$(type(r))]->(o)
  SET v = properties(r)
  SET v.version = 1, v.aktiv = false, v.grund = null, v.t_invalid = null, v.timeline_bis = null
  SET r.version = 2, r.t_recorded = r.t_expired
  SET r.t_expired = null
} IN TRANSACTIONS OF 5000 ROWS;

MATCH (s:Entitaet)-[r]->(o:Wert)
WHERE r.id IS NOT NULL AND r.character_id IS NOT NULL AND r.version IS NULL
  AND r.grund IS NOT NULL AND r.t_expired IS NOT NULL
CALL (s, r, o) {
  CREATE (s)-[v:$(type(r))]->(:Wert {wert: o.wert, user_id: o.user_id})
  SET v = properties(r)
  SET v.version = 1, v.aktiv = false, v.grund = null, v.t_invalid = null, v.timeline_bis = null
  SET r.version = 2, r.t_recorded = r.t_expired
  SET r.t_expired = null
} IN TRANSACTIONS OF 5000 ROWS;

MATCH (:Entitaet)-[r]->()
WHERE r.id IS NOT NULL AND r.character_id IS NOT NULL AND r.version IS NULL
CALL (r) {
  SET r.version = 1
} IN TRANSACTIONS OF 10000 ROWS;
