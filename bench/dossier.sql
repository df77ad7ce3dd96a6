-- The Mappe in SQL: the same dossier as cypher/queries/mappe.cypher (current read, not
-- as-of) in one statement and one round trip, with the same filters — the pair, active
-- facts and the values that still hold (superseded from a day ahead: `holds_now` in
-- bench/postgres.sql), resting edges (staerke_decay < schwelle) left out, no type facts
-- among the facts, degree 1 capped, degree 2 capped per neighbour, the whole capped,
-- strongest and nearest first; the history of the entity's superseded values (the
-- current versions of superseded facts, symmetric relations from both ends); the active
-- end of every referenced timeline chain; and the closure of liegt_in (derived, never
-- stored) from the entity's shown facts and its own values that still hold.
-- Parameters (psycopg): eid, uid, cid, cap, schwelle, via (relations whose object is a
-- place), trans (the transitive relation), symmetric (the symmetric relations).
WITH RECURSIVE
e AS (
    SELECT id, name FROM entitaeten WHERE id = %(eid)s AND user_id = %(uid)s
),
near AS (
    SELECT x.*, 1 AS grad, NULL::text AS via_id
    FROM (
        SELECT f.*, f.objekt_id AS n_id FROM fakten f
        WHERE f.subjekt_id = %(eid)s AND f.character_id = %(cid)s AND f.aktiv
          AND f.staerke_decay >= %(schwelle)s AND f.beziehung <> 'typ'
        UNION ALL
        SELECT f.*, f.subjekt_id AS n_id FROM fakten f
        WHERE f.objekt_id = %(eid)s AND f.character_id = %(cid)s AND f.aktiv
          AND f.staerke_decay >= %(schwelle)s AND f.beziehung <> 'typ'
    ) x
    ORDER BY x.staerke_decay DESC, x.last_touched DESC, x.id
    LIMIT %(cap)s
),
-- The values that still hold: the entity's own where it shows the relation's current
-- value, a bond's from either end (both reach further, neither is a fact of degree 1:
-- the history shows them), and the ones told of the entity (degree 1). (Here and at
-- degree 2 the cheap tests come before `holds_now`: PL/pgSQL is never inlined, and
-- most superseded values ended long ago.)
ahead AS (
    SELECT f.*, f.objekt_id AS n_id FROM fakten f
    WHERE f.subjekt_id = %(eid)s AND f.character_id = %(cid)s AND f.objekt_id IS NOT NULL
      AND f.grund = 'abgeloest' AND f.t_expired IS NULL
      AND (f.timeline_bis IS NOT NULL OR f.t_invalid > now())
      AND f.staerke_decay >= %(schwelle)s AND f.beziehung <> 'typ'
      AND (f.beziehung = ANY(%(symmetric)s)
           OR f.beziehung IN (SELECT beziehung FROM near WHERE subjekt_id = %(eid)s))
      AND holds_now(f, %(eid)s, %(symmetric)s, %(schwelle)s, now())
    UNION ALL
    SELECT f.*, f.subjekt_id AS n_id FROM fakten f
    WHERE f.objekt_id = %(eid)s AND f.character_id = %(cid)s
      AND f.grund = 'abgeloest' AND f.t_expired IS NULL
      AND (f.timeline_bis IS NOT NULL OR f.t_invalid > now())
      AND f.staerke_decay >= %(schwelle)s AND f.beziehung <> 'typ'
      AND holds_now(f, %(eid)s, %(symmetric)s, %(schwelle)s, now())
),
one AS (
    SELECT * FROM (
        SELECT * FROM near
        UNION ALL
        SELECT a.*, 1 AS grad, NULL::text AS via_id FROM ahead a
        WHERE a.subjekt_id <> %(eid)s AND NOT a.beziehung = ANY(%(symmetric)s)
    ) x
    ORDER BY x.staerke_decay DESC, x.last_touched DESC, x.id
    LIMIT %(cap)s
),
nb AS (
    SELECT DISTINCT n_id FROM (SELECT n_id FROM near UNION ALL SELECT n_id FROM ahead) x
    WHERE n_id IS NOT NULL AND (SELECT count(*) FROM one) < %(cap)s
),
far AS (
    SELECT y.*, 2 AS grad, nb.n_id AS via_id
    FROM nb
    CROSS JOIN LATERAL (
        SELECT z.* FROM (
            SELECT f.*, f.objekt_id AS n_id FROM fakten f
            WHERE f.subjekt_id = nb.n_id AND f.character_id = %(cid)s
              AND (f.aktiv OR f.grund = 'abgeloest' AND f.t_expired IS NULL
                   AND (f.timeline_bis IS NOT NULL OR f.t_invalid > now())
                   AND holds_now(f, %(eid)s, %(symmetric)s, %(schwelle)s, now()))
              AND f.staerke_decay >= %(schwelle)s AND f.beziehung <> 'typ'
              AND f.objekt_id IS DISTINCT FROM %(eid)s
            UNION ALL
            SELECT f.*, f.subjekt_id AS n_id FROM fakten f
            WHERE f.objekt_id = nb.n_id AND f.character_id = %(cid)s
              AND (f.aktiv OR f.grund = 'abgeloest' AND f.t_expired IS NULL
                   AND (f.timeline_bis IS NOT NULL OR f.t_invalid > now())
                   AND holds_now(f, %(eid)s, %(symmetric)s, %(schwelle)s, now()))
              AND f.staerke_decay >= %(schwelle)s AND f.beziehung <> 'typ'
              AND f.subjekt_id <> %(eid)s
        ) z
        ORDER BY z.staerke_decay DESC, z.last_touched DESC, z.id
        LIMIT %(cap)s
    ) y
),
top AS (
    SELECT * FROM (
        SELECT DISTINCT ON (id) * FROM (SELECT * FROM one UNION ALL SELECT * FROM far) a
        ORDER BY id, grad
    ) d
    ORDER BY grad, staerke_decay DESC, last_touched DESC, id
    LIMIT %(cap)s
),
hist AS (
    SELECT * FROM (
        SELECT f.*, f.objekt_id AS n_id FROM fakten f
        WHERE f.subjekt_id = %(eid)s AND f.character_id = %(cid)s AND f.grund = 'abgeloest'
          AND f.t_expired IS NULL AND f.beziehung <> 'typ'
        UNION ALL
        SELECT f.*, f.subjekt_id AS n_id FROM fakten f
        WHERE f.objekt_id = %(eid)s AND f.character_id = %(cid)s AND f.grund = 'abgeloest'
          AND f.t_expired IS NULL AND f.beziehung = ANY(%(symmetric)s)
          AND f.subjekt_id <> %(eid)s
    ) x
    ORDER BY x.t_invalid DESC, x.id
    LIMIT %(cap)s
),
walk AS (
    SELECT f0.id AS r0, f0.beziehung AS rel, f1.objekt_id AS x_id,
           ARRAY[f0.objekt_id, f1.objekt_id] AS ids, 1 AS depth
    -- derived from the facts it shows and its own values that still hold
    FROM (SELECT id, beziehung, subjekt_id, objekt_id FROM near
          UNION ALL
          SELECT id, beziehung, subjekt_id, objekt_id FROM ahead) f0
    JOIN fakten f1 ON f1.subjekt_id = f0.objekt_id
    WHERE f0.subjekt_id = %(eid)s AND f0.beziehung = ANY(%(via)s)
      AND f1.beziehung = %(trans)s AND f1.character_id = %(cid)s AND f1.aktiv
      AND f1.staerke_decay >= %(schwelle)s
    UNION ALL
    SELECT w.r0, w.rel, f.objekt_id, w.ids || f.objekt_id, w.depth + 1
    FROM walk w
    JOIN fakten f ON f.subjekt_id = w.x_id
    WHERE f.beziehung = %(trans)s AND f.character_id = %(cid)s AND f.aktiv
      AND f.staerke_decay >= %(schwelle)s AND NOT f.objekt_id = ANY(w.ids) AND w.depth < 32
),
derived AS (  -- a target once per relation, however many values lead there
    SELECT DISTINCT ON (rel, x_id) rel, x_id, ids, depth FROM walk
    WHERE x_id <> %(eid)s
    ORDER BY rel, x_id, depth
)
SELECT
    e.id, e.name,
    coalesce((SELECT f.wert FROM fakten f
              WHERE f.subjekt_id = %(eid)s AND f.character_id = %(cid)s
                AND f.beziehung = 'typ' AND f.aktiv LIMIT 1), 'sonstiges') AS typ,
    (SELECT coalesce(json_agg(json_build_object(
                'id', t.id, 'rel', t.beziehung, 'grad', t.grad, 'via', v.name,
                'herkunft', t.herkunft, 's_id', t.subjekt_id, 's_name', s.name,
                'o_id', t.objekt_id, 'o_name', o.name, 'wert', t.wert,
                'staerke', t.staerke_decay, 'aktiv', t.aktiv, 'grund', t.grund,
                't_valid', t.t_valid, 't_invalid', t.t_invalid,
                't_recorded', t.t_recorded, 't_expired', t.t_expired,
                'tl_beginn', ta.beginn, 'tl_genauigkeit', ta.genauigkeit,
                'tl_abgesagt', ta.abgesagt)
             ORDER BY t.grad, t.staerke_decay DESC, t.last_touched DESC, t.id), '[]')
     FROM top t
     JOIN entitaeten s ON s.id = t.subjekt_id
     LEFT JOIN entitaeten o ON o.id = t.objekt_id
     LEFT JOIN entitaeten v ON v.id = t.via_id
     LEFT JOIN LATERAL (
         WITH RECURSIVE chain AS (
             SELECT tl.* FROM timeline tl WHERE tl.id = t.timeline_id
             UNION ALL
             SELECT tl.* FROM timeline tl JOIN chain c ON tl.id = c.nachfolger_id
         )
         SELECT chain.beginn, chain.genauigkeit, chain.abgesagt FROM chain
         WHERE chain.nachfolger_id IS NULL LIMIT 1
     ) ta ON true) AS fakten,
    (SELECT coalesce(json_agg(json_build_object(
                'id', h.id, 'rel', h.beziehung, 'herkunft', h.herkunft, 'o_id', h.n_id,
                'o_name', o.name, 'wert', h.wert, 'staerke', h.staerke_decay,
                'aktiv', h.aktiv, 'grund', h.grund, 't_valid', h.t_valid,
                't_invalid', h.t_invalid, 't_recorded', h.t_recorded,
                't_expired', h.t_expired, 'tl_beginn', ta.beginn,
                'tl_genauigkeit', ta.genauigkeit, 'tlb_beginn', tb.beginn,
                'tlb_genauigkeit', tb.genauigkeit)
             ORDER BY h.t_invalid DESC, h.id), '[]')
     FROM hist h
     LEFT JOIN entitaeten o ON o.id = h.n_id
     LEFT JOIN LATERAL (
         WITH RECURSIVE chain AS (
             SELECT tl.* FROM timeline tl WHERE tl.id = h.timeline_id
             UNION ALL
             SELECT tl.* FROM timeline tl JOIN chain c ON tl.id = c.nachfolger_id
         )
         SELECT chain.beginn, chain.genauigkeit FROM chain
         WHERE chain.nachfolger_id IS NULL LIMIT 1
     ) ta ON true
     LEFT JOIN LATERAL (
         WITH RECURSIVE chain AS (
             SELECT tl.* FROM timeline tl WHERE tl.id = h.timeline_bis
             UNION ALL
             SELECT tl.* FROM timeline tl JOIN chain c ON tl.id = c.nachfolger_id
         )
         SELECT chain.beginn, chain.genauigkeit FROM chain
         WHERE chain.nachfolger_id IS NULL LIMIT 1
     ) tb ON true) AS historie,
    (SELECT coalesce(json_agg(json_build_object(
                'rel', d.rel, 'x_id', d.x_id, 'x_name', x.name,
                'pfad', (SELECT array_agg(en.name ORDER BY u.i)
                         FROM unnest(d.ids[1:array_length(d.ids, 1) - 1]) WITH ORDINALITY u(id, i)
                         JOIN entitaeten en ON en.id = u.id))
             ORDER BY d.depth, x.name), '[]')
     FROM derived d JOIN entitaeten x ON x.id = d.x_id
     -- what the entity's own facts say, shown or cut, is not derived again (as in the
     -- Mappe)
     WHERE NOT EXISTS (SELECT 1 FROM fakten t WHERE t.subjekt_id = %(eid)s
                       AND t.character_id = %(cid)s AND t.aktiv
                       AND t.staerke_decay >= %(schwelle)s
                       AND t.beziehung = d.rel AND t.objekt_id = d.x_id)) AS abgeleitet
FROM e
