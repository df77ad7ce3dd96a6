// name: rename_entities
// Store the names and keys of some of a user's entities as this version's writer stores
// them (`kg.names.renormalize`, which computes them: Cypher cannot normalise a name),
// each only if its name and key are still those read ($rows: id, name, name_norm as read,
// neuer_name and neuer_name_norm as the writer stores them). Run in the transaction that
// holds the user's write lock. Returns the ids renamed, and how many of them now share
// their key with another entity of the user (namesakes).
// params: $user_id, $rows
// :param user_id => 'demo-user'
// :param rows => [{id: 'e1', name: 'Jürgen\u034f', name_norm: 'jürgen\u034f', neuer_name: 'Jürgen', neuer_name_norm: 'jürgen'}]
UNWIND $rows AS r
MATCH (e:Entitaet {id: r.id})
WHERE e.user_id = $user_id AND e.name = r.name AND e.name_norm = r.name_norm
SET e.name = r.neuer_name, e.name_norm = r.neuer_name_norm
WITH collect(e) AS renamed
CALL (renamed) {
  UNWIND renamed AS e
  MATCH (o:Entitaet {user_id: $user_id, name_norm: e.name_norm})
  WHERE o <> e
  RETURN count(DISTINCT e) AS namesakes
}
RETURN [e IN renamed | e.id] AS renamed, namesakes;

// name: rename_namesakes
// rename_entities' count of namesakes, without renaming: of $rows, those whose new key
// another entity of the user has, or another of $rows would have.
// params: $user_id, $rows
// :param user_id => 'demo-user'
// :param rows => [{id: 'e1', name: 'Jürgen\u034f', name_norm: 'jürgen\u034f', neuer_name: 'Jürgen', neuer_name_norm: 'jürgen'}]
UNWIND $rows AS r
CALL (r) {
  OPTIONAL MATCH (o:Entitaet {user_id: $user_id, name_norm: r.neuer_name_norm})
  WHERE NOT o.id IN [x IN $rows | x.id]
  WITH count(o) AS stored
  RETURN stored + size([x IN $rows WHERE x.neuer_name_norm = r.neuer_name_norm
                                    AND x.id <> r.id]) AS others
}
RETURN count(CASE WHEN others > 0 THEN r END) AS namesakes;
