// A timeline chain, drawn as a graph: every entry of the chain an entry belongs to
// (old -[:NACHFOLGER]-> new; the last one is active unless cancelled), the entities the
// entries are about (BETRIFFT), and the pair's facts that are valid from the chain
// (they reference its first entry by `timeline_id`, so they move with it).
//
// Set the parameters first (or print them: `kg browser timeline_kette -u u1 -c nova
// --eintrag ID`):
// :param user_id => 'u1'
// :param character_id => 'nova'
// :param eintrag_id => '<any entry id of the chain>'
// Entry ids: `kg timeline list -u u1 -c nova`, or the table of
//   MATCH (t:TimelineEintrag {user_id: $user_id, character_id: $character_id})
//   RETURN t.id, t.titel, t.beginn, t.aktiv
MATCH (t:TimelineEintrag {id: $eintrag_id})
WHERE t.user_id = $user_id AND t.character_id = $character_id
MATCH (first:TimelineEintrag)-[:NACHFOLGER*0..]->(t)
WHERE NOT ()-[:NACHFOLGER]->(first)
MATCH kette = (first)-[:NACHFOLGER*0..]->(last:TimelineEintrag)
WHERE NOT (last)-[:NACHFOLGER]->()
OPTIONAL MATCH betrifft = (:TimelineEintrag {id: last.id})-[:BETRIFFT]->(:Entitaet)
OPTIONAL MATCH fakt = (:Entitaet)-[r]->()
WHERE r.timeline_id = first.id AND r.character_id = $character_id
  AND startNode(r).user_id = $user_id
RETURN kette, betrifft, fakt;
