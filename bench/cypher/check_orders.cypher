// The bench of `kg check`'s order_results (bench/check_orders.py).

// name: check_orders_copy
// $copies copies of the pair's order $auftrag_id, each with an id of its own and its
// stored result naming it, as the writer would have stored it.
// params: $user_id, $character_id, $auftrag_id, $copies
// :param user_id => 'check-orders-1'
// :param character_id => 'nova'
// :param auftrag_id => 'seed'
// :param copies => 10
MATCH (a:Auftrag {user_id: $user_id, character_id: $character_id, id: $auftrag_id})
UNWIND range(1, $copies) AS i
CALL (a, i) {
  CREATE (b:Auftrag)
  SET b = a {.*, id: a.id + '-' + i,
             ergebnis: replace(a.ergebnis, '"' + a.id + '"', '"' + a.id + '-' + i + '"')}
} IN TRANSACTIONS OF 10000 ROWS;
