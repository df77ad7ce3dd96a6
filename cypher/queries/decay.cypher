// fragment: decay_run_row
// A sweep's record `d` (DecayLauf) as the row the library reads.
RETURN d.tag AS tag, d.am AS am, d.edges AS edges, d.resting AS resting, d.seconds AS seconds

// name: decay_sweep
// The daily sweep over one slice of the entities (ids in [$id_from, $id_to); $id_to null:
// no upper bound): every ACTIVE fact edge leaving them gets staerke_decay =
// exp(-$rate * days since last_touched), 1 when last_touched lies after $moment, and
// decay_am = $day. Never touches aktiv, inactive facts, entities or timeline entries.
// Batched in transactions of $batch edges, so it must run in an auto-commit transaction
// (Browser: prefix it with :auto). Scoped to one user when $user_id is set. Returns how
// many edges it swept and how many now rest (strength below $schwelle).
// params: $id_from, $id_to, $user_id, $rel_types, $rate, $moment, $day, $schwelle, $batch
// :param id_from => ''
// :param id_to => null
// :param user_id => null
// :param rel_types => ['WOHNT_IN', 'BERUF', 'HAT_HAUSTIER']
// :param rate => 0.0015
// :param moment => datetime('2026-12-01T00:00:00Z')
// :param day => date('2026-12-01')
// :param schwelle => 0.1
// :param batch => 10000
MATCH (s:Entitaet)
WHERE s.id >= $id_from AND ($id_to IS NULL OR s.id < $id_to)
  AND ($user_id IS NULL OR s.user_id = $user_id)
MATCH (s)-[r]->()
WHERE type(r) IN $rel_types AND r.aktiv = true AND r.last_touched IS :: ZONED DATETIME
CALL (r) {
  // The edge's write lock first (Cypher takes it before it reads a property a SET
  // depends on directly): a write that touched or closed the edge while the sweep
  // waited for it has committed by then, and what it wrote is what is read below.
  // (Read before the lock, a touch was lost and a closed version swept.)
  SET r.staerke_decay = r.staerke_decay
  WITH r WHERE r.aktiv = true AND r.last_touched IS :: ZONED DATETIME
  WITH r, duration.inSeconds(r.last_touched, $moment).seconds / 86400.0 AS days
  WITH r, CASE WHEN days <= 0 THEN 1.0 ELSE exp(-$rate * days) END AS staerke
  SET r.staerke_decay = staerke, r.decay_am = $day
  RETURN staerke < $schwelle AS resting
} IN TRANSACTIONS OF $batch ROWS
RETURN count(*) AS edges, count(CASE WHEN resting THEN 1 END) AS resting;

// name: decay_run_record
// Record a finished global sweep: one DecayLauf per day (MERGE on its tag).
// params: $day, $edges, $resting, $seconds
// :param day => date('2026-12-01')
// :param edges => 1200
// :param resting => 3
// :param seconds => 0.4
MERGE (d:DecayLauf {tag: $day})
SET d.am = datetime(), d.edges = $edges, d.resting = $resting, d.seconds = $seconds
{{ decay_run_row }}

// name: decay_runs_ahead_delete
// Delete the sweeps recorded for a day after tomorrow by the store's clock (a hand edit,
// or a sweep on a host whose clock ran ahead): no sweep can have reached that day, and
// on it `kg decay run --if-due` would take the day as swept. Returns their days.
MATCH (d:DecayLauf)
WHERE d.tag IS :: DATE AND d.tag > date.realtime('UTC') + duration('P1D')
WITH d, d.tag AS tag
ORDER BY tag
DELETE d
RETURN collect(tag) AS tags;

// name: decay_run_find
// The recorded sweep of one day, if there is one.
// params: $day
// :param day => date('2026-12-01')
MATCH (d:DecayLauf {tag: $day})
{{ decay_run_row }}

// name: decay_newest
// The newest day the active fact edges in scope (of $user_id; every user's when null)
// were swept for: a sweep for an earlier day would undo it. One pass over the edges.
// params: $user_id, $rel_types
// :param user_id => 'u1'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'HAT_HAUSTIER']
{{ fact_edges }}
  AND r.aktiv = true AND r.decay_am IS :: DATE
RETURN max(r.decay_am) AS newest;

// name: decay_state
// The decay state of the active fact edges (of one user when $user_id is set): how many
// there are, how many carry a strength, the newest decay_am up to $day, how many carry
// one after $day (a run for a day that has not come is no measurement), and how many
// (with a few ids) the newest sweep missed: last touched before that sweep's day, yet
// not swept by it. A decay_am that is not a date is no run (check_fact_fields reports it).
// params: $user_id, $rel_types, $day, $samples
// :param user_id => 'u1'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'HAT_HAUSTIER']
// :param day => date('2026-12-01')
// :param samples => 5
{{ active_edge_decay }}
{{ missed_by_newest_run }}
RETURN active, with_strength, newest, future, missed, samples;
