// The Mappe of an entity, drawn as a graph: its active facts in both directions
// (degree 1), the active facts of its entity neighbours (degree 2), its type, and the
// active timeline entries about it. The same pattern as the library's `mappe` query,
// without the cap, the history and the derived facts. Resting edges (strength below
// $ruhe_schwelle, the library's KG_RUHE_SCHWELLE) are left out, like in the Mappe.
// Value nodes are shown but never followed.
// A value superseded from a day still ahead holds until then ("wohnt in Berlin (noch bis
// 1. März"; a type too) but is no longer active: it is drawn too, and an entity's facts
// of degree 2 through it, as the library's Mappe reaches through it; as there, the
// entity's own, one told of it (Lena in Kassel, in Kassel's Mappe) and its neighbours',
// each only where its subject's relation has a current value that is awake (or the
// relation is symmetric, $symmetrisch: read from both ends), and only while it holds now
// (its start and end from its events where it has them), or, told of another (Lena's
// Kassel from March until January, in Kassel's Mappe or at degree 2), while it is to
// come. A value node that still holds is drawn as well (the library's Mappe shows it in
// the history, "Lehrerin (noch bis …)").
//
// Set the parameters first; `kg browser mappe -u u1 -c nova --entity Lena` prints them
// with the library's values (the entity's id, found as `kg mappe` finds it, the
// configured threshold, the canon's symmetric relations):
// :param user_id => 'u1'
// :param character_id => 'nova'
// :param entity => 'lena'
// :param ruhe_schwelle => 0.1
// :param symmetrisch => ['PARTNER', 'GESCHWISTER', 'BEFREUNDET_MIT']
// `entity` is the entity's id or, typed by hand, its name as the library normalises it
// (kg.models.normalize_name: NFKC, case-folded, inner spaces collapsed; two namesakes
// then show as one picture, which `kg browser` refuses).
// Turn off "Connect result nodes" in the Browser settings: it would draw every
// relationship between the shown nodes, other pairs' facts included.
MATCH (e:Entitaet {user_id: $user_id})
WHERE e.id = $entity OR e.name_norm = $entity
MATCH p1 = (e)-[r1]-(n1)
WHERE r1.character_id = $character_id AND r1.staerke_decay >= $ruhe_schwelle
  AND (r1.aktiv OR (
    r1.grund = 'abgeloest' AND r1.t_expired IS NULL
    AND (type(r1) IN $symmetrisch OR EXISTS {
      WITH startNode(r1) AS s
      MATCH (s)-[c]->() WHERE type(c) = type(r1) AND c.aktiv AND c.character_id = $character_id
                              AND c.staerke_decay >= $ruhe_schwelle })
    AND EXISTS {
      OPTIONAL MATCH (:TimelineEintrag {id: r1.timeline_id})-[:NACHFOLGER*0..]->(ta:TimelineEintrag)
      WHERE NOT (ta)-[:NACHFOLGER]->()
      OPTIONAL MATCH (:TimelineEintrag {id: r1.timeline_bis})-[:NACHFOLGER*0..]->(tb:TimelineEintrag)
      WHERE NOT (tb)-[:NACHFOLGER]->()
      // (a day stored as something else reads as none, as the library reads it)
      WITH CASE WHEN ta IS NULL THEN r1.t_valid WHEN ta.beginn IS :: DATE
                  THEN datetime({date: ta.beginn, timezone: 'UTC'}) END AS ab,
           CASE WHEN tb IS NULL THEN r1.t_invalid WHEN tb.beginn IS :: DATE
                  THEN datetime({date: tb.beginn, timezone: 'UTC'}) END AS bis
      WHERE ab < bis AND datetime() < bis
        AND (ab <= datetime() OR (startNode(r1) <> e AND NOT type(r1) IN $symmetrisch))
    }))
// Degree 2: the same tests for r2 as for r1 above (twins: change both; r2 is never the
// entity's own, so one to come is drawn too).
OPTIONAL MATCH p2 = (n1:Entitaet)-[r2]-(n2)
WHERE r2 <> r1 AND n2 <> e
  AND r2.character_id = $character_id AND r2.staerke_decay >= $ruhe_schwelle
  AND (r2.aktiv OR (
    r2.grund = 'abgeloest' AND r2.t_expired IS NULL
    AND (type(r2) IN $symmetrisch OR EXISTS {
      WITH startNode(r2) AS s
      MATCH (s)-[c]->() WHERE type(c) = type(r2) AND c.aktiv AND c.character_id = $character_id
                              AND c.staerke_decay >= $ruhe_schwelle })
    AND EXISTS {
      OPTIONAL MATCH (:TimelineEintrag {id: r2.timeline_id})-[:NACHFOLGER*0..]->(ta:TimelineEintrag)
      WHERE NOT (ta)-[:NACHFOLGER]->()
      OPTIONAL MATCH (:TimelineEintrag {id: r2.timeline_bis})-[:NACHFOLGER*0..]->(tb:TimelineEintrag)
      WHERE NOT (tb)-[:NACHFOLGER]->()
      WITH CASE WHEN ta IS NULL THEN r2.t_valid WHEN ta.beginn IS :: DATE
                  THEN datetime({date: ta.beginn, timezone: 'UTC'}) END AS ab,
           CASE WHEN tb IS NULL THEN r2.t_invalid WHEN tb.beginn IS :: DATE
                  THEN datetime({date: tb.beginn, timezone: 'UTC'}) END AS bis
      WHERE ab < bis AND datetime() < bis
    }))
OPTIONAL MATCH p3 = (e)<-[:BETRIFFT]-(t:TimelineEintrag)
WHERE t.character_id = $character_id AND t.aktiv
RETURN p1, p2, p3;
