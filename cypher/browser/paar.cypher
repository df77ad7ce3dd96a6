// The whole graph of one pair: every fact (active and inactive) with its entities and
// value nodes, every timeline entry with its NACHFOLGER and BETRIFFT links, and the
// audited orders (as loose nodes). Large pairs: raise or lower $limit.
//
// Set the parameters first (or print them: `kg browser paar -u u1 -c nova`):
// :param user_id => 'u1'
// :param character_id => 'nova'
// :param limit => 300
// Turn off "Connect result nodes" in the Browser settings: it would add every
// relationship between the shown nodes, other pairs' facts included.
CALL () {
  MATCH p = (s:Entitaet {user_id: $user_id})-[r]->()
  WHERE r.character_id = $character_id
  RETURN p
  ORDER BY r.aktiv DESC, r.last_touched DESC
  LIMIT toInteger($limit)
  UNION
  MATCH (t:TimelineEintrag)
  WHERE t.user_id = $user_id AND t.character_id = $character_id
  OPTIONAL MATCH p = (t)-[:NACHFOLGER|BETRIFFT]->()
  RETURN coalesce(p, t) AS p
  UNION
  MATCH (a:Auftrag {user_id: $user_id})
  WHERE a.character_id = $character_id
  RETURN a AS p
  ORDER BY a.empfangen DESC
  LIMIT toInteger($limit)
}
RETURN p;
