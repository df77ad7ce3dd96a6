// fragment: name_judged_in_python
// The entities `e` (of one user when $user_id is set) whose stored name_norm may not be
// their name as the writer normalises it, which only Python can tell (NFKC, case
// folding, what shows as nothing removed: `kg.models.normalize_name`). Left out is only
// what is certainly right: a name of printable ASCII words with single spaces, whose
// normalisation is its lower case, stored as such (both printable ASCII, so no locale's
// lower case can make a wrong one match). Text names only: check_node_fields reports
// the others.
WHERE ($user_id IS NULL OR e.user_id = $user_id) AND e.name IS :: STRING NOT NULL
  AND NOT coalesce(e.name =~ '[!-~]+( [!-~]+)*' AND e.name_norm =~ '[!-~]+( [!-~]+)*'
                   AND e.name_norm = toLower(e.name), false)

// name: name_rows_page
// name_norm_rows page by page, in the order of the entities' ids: at most $page after
// the id $after ('' for the first page), for `kg.names.renormalize`.
// params: $user_id, $after, $page
// :param user_id => 'demo-user'
// :param after => ''
// :param page => 1000
MATCH (e:Entitaet)
{{ name_judged_in_python }}
  AND e.id > $after
RETURN e.id AS id, e.user_id AS user_id, e.name AS name, e.name_norm AS name_norm
ORDER BY e.id
LIMIT $page;

// name: rename_entities
// Store the names and keys of some of a user's entities as this version's writer stores
// them (`kg.names.renormalize`, which computes them: Cypher cannot normalise a name),
// each only if its name and key are still those read ($rows: id, name, name_norm as read
// (a key may be missing: null), neuer_name and neuer_name_norm as the writer stores
// them). Run in the transaction that holds the user's write lock. Returns the ids
// renamed.
// params: $user_id, $rows
// :param user_id => 'demo-user'
// :param rows => [{id: 'e1', name: 'Jürgen\u034f', name_norm: 'jürgen\u034f', neuer_name: 'Jürgen', neuer_name_norm: 'jürgen'}]
UNWIND $rows AS r
MATCH (e:Entitaet {id: r.id})
WHERE e.user_id = $user_id AND e.name = r.name
  AND coalesce(e.name_norm = r.name_norm, e.name_norm IS NULL AND r.name_norm IS NULL)
SET e.name = r.neuer_name, e.name_norm = r.neuer_name_norm
RETURN collect(e.id) AS renamed;

// name: entities_by_keys
// The ids of the entities stored with each key of $pairs (user_id, key): `kg check`'s
// format_namesakes looks for another entity stored with a wrong one's key, and
// `kg.names.renormalize` counts the namesakes it made (or, in a dry run, would make).
// params: $pairs
// :param pairs => [{user_id: 'demo-user', key: 'jürgen'}]
UNWIND $pairs AS p
MATCH (o:Entitaet {user_id: p.user_id, name_norm: p.key})
RETURN p.user_id AS user_id, p.key AS key, collect(o.id) AS ids;
