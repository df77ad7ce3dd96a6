// Queries of bench/decay_sweep.py only: a synthetic graph of a million fact edges and
// the server's heap while the sweep runs. Never run them against a store you keep.

// name: decay_bench_foreign
// Safety: how many entities do not belong to the bench's users (must be 0 to generate).
// params: $prefix
// :param prefix => 'decay-bench-'
MATCH (e:Entitaet)
WHERE NOT coalesce(e.user_id STARTS WITH $prefix, false)
RETURN count(e) AS foreign;

// name: decay_bench_fact_count
// How many fact edges (all, active) the bench's users have.
// params: $prefix, $rel_types
// :param prefix => 'decay-bench-'
// :param rel_types => ['HOBBY', 'BEFREUNDET_MIT']
MATCH (s:Entitaet)-[r]->()
WHERE s.user_id STARTS WITH $prefix AND type(r) IN $rel_types
RETURN count(r) AS facts, count(CASE WHEN r.aktiv THEN 1 END) AS active;

// name: decay_bench_generate
// One batch of the synthetic graph: $entities entities of user $user_id (hex uuid ids,
// as the writer makes them), each with $values HOBBY value facts (own Wert nodes) and
// $refs BEFREUNDET_MIT facts to other entities of the batch. last_touched is spread over
// the $days days before $now; about $inactive of the facts were taken back at $now,
// recorded as the writer records a correction of a value of a multi-valued relation
// (which is never superseded, only taken back): version 1 closed then (t_expired),
// version 2 current and never held (grund berichtigt, t_invalid = t_valid); a Wert node
// per version. (It was superseded, grund abgeloest, which only a single-valued
// relation's values are: `kg check` found every such version in `fact_aktiv`.)
// params: $user_id, $entities, $values, $refs, $now, $days, $inactive
// :param user_id => 'decay-bench-0000'
// :param entities => 100
// :param values => 3
// :param refs => 2
// :param now => datetime('2026-12-01T00:00:00Z')
// :param days => 1500
// :param inactive => 0.05
UNWIND range(0, $entities - 1) AS i
CREATE (e:Entitaet {id: replace(randomUUID(), '-', ''), user_id: $user_id,
                    name: 'E' + toString(i), name_norm: 'e' + toString(i), erstellt: $now})
WITH collect(e) AS es
UNWIND range(0, size(es) - 1) AS i
WITH es, i, es[i] AS e
CALL (es, i, e) {
  UNWIND range(1, $values + $refs) AS k
  WITH es, i, e, k, $now - duration({days: toInteger(rand() * $days)}) AS touched,
       rand() < $inactive AS old
  WITH es, i, e, k, old, {
    id: replace(randomUUID(), '-', ''), version: 1, user_id: $user_id, character_id: 'nova',
    herkunft: 'mensch', auftrag_id: 'decay-bench', t_valid: touched, t_recorded: touched,
    aktiv: NOT old, staerke_decay: 1.0, last_touched: touched,
    t_expired: CASE WHEN old THEN $now END
  } AS first
  WITH es, i, e, k, CASE WHEN old
    THEN [first, first {.*, version: 2, t_recorded: $now, t_expired: null,
                        grund: 'berichtigt', t_invalid: first.t_valid}]
    ELSE [first] END AS versions
  CALL (e, k, versions) {
    WITH e, k, versions WHERE k <= $values
    UNWIND versions AS props
    CREATE (e)-[r:HOBBY]->(:Wert {wert: 'Hobby ' + toString(k), user_id: $user_id})
    SET r = props
  }
  CALL (es, i, e, k, versions) {
    WITH es, i, e, k, versions WHERE k > $values
    WITH e, versions, es[(i + (k - $values) * 7919) % size(es)] AS o
    WHERE o <> e
    UNWIND versions AS props
    CREATE (e)-[r:BEFREUNDET_MIT]->(o)
    SET r = props
  }
}
RETURN size(es) AS entities;

// name: decay_bench_heap
// The server's heap now: bytes used, committed and max.
CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes
WITH attributes.HeapMemoryUsage.value.properties AS heap
RETURN heap.used AS used, heap.committed AS committed, heap.max AS max;

// name: decay_bench_tx_heap
// The largest heap estimate of a running transaction (the sweep's, while it runs).
SHOW TRANSACTIONS YIELD estimatedUsedHeapMemory
RETURN max(estimatedUsedHeapMemory) AS tx_heap;

// name: decay_bench_heap_peaks
// Peak usage of each heap memory pool since the server started (their sum bounds the
// peak heap from above: the pools peak at different moments).
CALL dbms.queryJmx('java.lang:type=MemoryPool,name=*') YIELD name, attributes
WHERE attributes.Type.value = 'HEAP'
RETURN name, attributes.PeakUsage.value.properties.used AS peak;
