// name: mappe
// The Mappen of entities (one row each, in one round trip): per entity its type, its facts in both
// directions (degree 1, capped, strongest first), the facts of those neighbours in both
// directions (degree 2, capped per neighbour), the history of its einwertig relations,
// and what the transitive relations derive (closed here, never stored). Only the pair's
// facts; resting edges (strength below $schwelle) are left out. With $asof, facts that
// may have held at $gueltig_am as known at $bekannt_am come back too; the caller then
// applies the exact bi-temporal test (it needs the timeline dates this query returns).
// Value nodes are never traversed further. Paste into Browser with :param for each.
// params: $user_id, $character_id, $entity_ids, $cap, $schwelle, $asof, $bekannt_am, $gueltig_am, $derive
UNWIND $entity_ids AS entity_id
MATCH (e:Entitaet {id: entity_id})
WHERE e.user_id = $user_id
CALL (e) {
  OPTIONAL MATCH (e)-[t:TYP]->(w:Wert)
  WHERE t.character_id = $character_id AND t.aktiv
  RETURN w.wert AS typ LIMIT 1
}
CALL (e) {
  CALL (e) {
    MATCH (e)-[r]-(n)
    WHERE r.character_id = $character_id AND r.staerke_decay >= $schwelle AND type(r) <> 'TYP'
      AND (r.aktiv OR ($asof AND r.grund IS NOT NULL
           AND (r.t_expired > $bekannt_am OR (r.grund = 'abgeloest' AND (r.timeline_bis IS NOT NULL OR r.t_invalid > $gueltig_am)))))
      AND (NOT $asof OR r.t_recorded <= $bekannt_am)
    RETURN r, n
    ORDER BY r.staerke_decay DESC, r.last_touched DESC, r.id
    LIMIT $cap
  }
  RETURN collect({r: r, n: n}) AS near
}
CALL (e, near) {
  CALL (e, near) {
    UNWIND near AS f
    RETURN f.r AS r, 1 AS grad, null AS via
    UNION ALL
    UNWIND near AS f
    WITH f.n AS n1, f.r AS r1
    WHERE n1:Entitaet AND size(near) < $cap
    CALL (n1, r1, e) {
      MATCH (n1)-[r]-(n)
      WHERE r <> r1 AND n <> e
        AND r.character_id = $character_id AND r.staerke_decay >= $schwelle AND type(r) <> 'TYP'
        AND (r.aktiv OR ($asof AND r.grund IS NOT NULL
             AND (r.t_expired > $bekannt_am OR (r.grund = 'abgeloest' AND (r.timeline_bis IS NOT NULL OR r.t_invalid > $gueltig_am)))))
        AND (NOT $asof OR r.t_recorded <= $bekannt_am)
      RETURN r
      ORDER BY r.staerke_decay DESC, r.last_touched DESC, r.id
      LIMIT $cap
    }
    RETURN r, 2 AS grad, n1.name AS via
  }
  WITH r, min(grad) AS grad, head(collect(via)) AS via
  ORDER BY grad, r.staerke_decay DESC, r.last_touched DESC, r.id
  LIMIT $cap
  CALL (r) {
    OPTIONAL MATCH (t0:TimelineEintrag {id: r.timeline_id})-[:NACHFOLGER*0..]->(ta:TimelineEintrag)
    WHERE r.timeline_id IS NOT NULL AND NOT (ta)-[:NACHFOLGER]->(:TimelineEintrag)
    RETURN ta LIMIT 1
  }
  RETURN collect({
    id: r.id, rel: type(r), grad: grad, via: via, herkunft: r.herkunft,
    s_id: startNode(r).id, s_name: startNode(r).name,
    o_id: endNode(r).id, o_name: endNode(r).name, wert: endNode(r).wert,
    staerke: r.staerke_decay, aktiv: r.aktiv, grund: r.grund,
    t_valid: r.t_valid.epochMillis, t_invalid: r.t_invalid.epochMillis,
    t_recorded: CASE WHEN $asof THEN r.t_recorded.epochMillis END,
    t_expired: CASE WHEN $asof THEN r.t_expired.epochMillis END,
    tl_beginn: ta.beginn, tl_genauigkeit: ta.genauigkeit, tl_abgesagt: ta.abgesagt,
    tlb_beginn: null, tlb_genauigkeit: null
  }) AS fakten
}
CALL (e) {
  MATCH (e)-[r]->(n)
  WHERE r.character_id = $character_id AND r.grund = 'abgeloest' AND type(r) <> 'TYP'
    AND (NOT $asof OR (r.t_recorded <= $bekannt_am AND r.t_expired <= $bekannt_am))
  WITH r, n ORDER BY r.t_invalid DESC, r.id LIMIT $cap
  OPTIONAL MATCH (:TimelineEintrag {id: r.timeline_id})-[:NACHFOLGER*0..]->(ta:TimelineEintrag)
  WHERE NOT (ta)-[:NACHFOLGER]->(:TimelineEintrag)
  OPTIONAL MATCH (:TimelineEintrag {id: r.timeline_bis})-[:NACHFOLGER*0..]->(tb:TimelineEintrag)
  WHERE NOT (tb)-[:NACHFOLGER]->(:TimelineEintrag)
  RETURN collect({
    id: r.id, rel: type(r), grad: 1, via: null, herkunft: r.herkunft,
    s_id: e.id, s_name: e.name, o_id: n.id, o_name: n.name, wert: n.wert,
    staerke: r.staerke_decay, aktiv: r.aktiv, grund: r.grund,
    t_valid: r.t_valid.epochMillis, t_invalid: r.t_invalid.epochMillis,
    t_recorded: r.t_recorded.epochMillis, t_expired: r.t_expired.epochMillis,
    tl_beginn: ta.beginn, tl_genauigkeit: ta.genauigkeit, tl_abgesagt: ta.abgesagt,
    tlb_beginn: tb.beginn, tlb_genauigkeit: tb.genauigkeit
  }) AS historie
}
CALL (e) {
  UNWIND $derive AS d
  MATCH (e)-[r0]->(o:Entitaet)
  WHERE type(r0) = d.via AND r0.character_id = $character_id AND r0.staerke_decay >= $schwelle
    AND (r0.aktiv OR ($asof AND r0.t_recorded <= $bekannt_am AND r0.t_expired > $bekannt_am))
  MATCH p = (o) (()-[t]->() WHERE type(t) = d.trans AND t.character_id = $character_id
                 AND t.staerke_decay >= $schwelle
                 AND (t.aktiv OR ($asof AND t.t_recorded <= $bekannt_am AND t.t_expired > $bekannt_am))){1,}
            (x:Entitaet)
  WHERE x <> e AND x <> o
  WITH r0, x, p ORDER BY length(p)
  WITH r0, x, head(collect([n IN nodes(p) | n.name])) AS pfad
  RETURN collect({rel: type(r0), x_id: x.id, x_name: x.name, pfad: pfad[..-1]})[..$cap] AS abgeleitet
}
RETURN e.id AS id, e.name AS name, coalesce(typ, 'sonstiges') AS typ, fakten, historie, abgeleitet;

// name: history
// Every value a relation of an entity ever had in the pair (corrected ones never), for
// "where did Lena live before?", with the timeline dates of *ab* and *bis*.
// params: $user_id, $character_id, $entity_id, $rel_types
MATCH (e:Entitaet {id: $entity_id})-[r]->(n)
WHERE e.user_id = $user_id AND r.character_id = $character_id
  AND ($rel_types IS NULL OR type(r) IN $rel_types)
  AND NOT coalesce(r.grund, '') IN ['berichtigt', 'abgesagt']
OPTIONAL MATCH (:TimelineEintrag {id: r.timeline_id})-[:NACHFOLGER*0..]->(ta:TimelineEintrag)
WHERE NOT (ta)-[:NACHFOLGER]->(:TimelineEintrag)
OPTIONAL MATCH (:TimelineEintrag {id: r.timeline_bis})-[:NACHFOLGER*0..]->(tb:TimelineEintrag)
WHERE NOT (tb)-[:NACHFOLGER]->(:TimelineEintrag)
RETURN r.id AS id, type(r) AS rel, 1 AS grad, null AS via, r.herkunft AS herkunft,
       e.id AS s_id, e.name AS s_name, n.id AS o_id, n.name AS o_name, n.wert AS wert,
       r.staerke_decay AS staerke, r.aktiv AS aktiv, r.grund AS grund,
       r.t_valid.epochMillis AS t_valid, r.t_invalid.epochMillis AS t_invalid,
       r.t_recorded.epochMillis AS t_recorded, r.t_expired.epochMillis AS t_expired, ta.beginn AS tl_beginn, ta.genauigkeit AS tl_genauigkeit,
       ta.abgesagt AS tl_abgesagt, tb.beginn AS tlb_beginn, tb.genauigkeit AS tlb_genauigkeit
ORDER BY type(r), r.t_valid, r.id;
