// The idempotency key of an order is the pair's: (user_id, character_id, auftrag_id).
// Two characters of one human may each use "turn-1"; 0001's key per user refused the
// second and is replaced. Idempotent: each statement is IF EXISTS / IF NOT EXISTS.

DROP CONSTRAINT auftrag_key IF EXISTS;

CREATE CONSTRAINT auftrag_pair_key IF NOT EXISTS
FOR (a:Auftrag) REQUIRE (a.user_id, a.character_id, a.id) IS UNIQUE;
