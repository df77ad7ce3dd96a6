// The audit's retention reads the store's clock: `kg audit prune` deletes, and the check
// `audit_retention` counts, the orders recorded (`erfasst`) before a cutoff. Without an
// index on `erfasst` both read every order of every user, each day. The index on
// `empfangen` (0001) served an earlier prune by the caller's time, and nothing reads it
// now. Idempotent: each statement is IF EXISTS / IF NOT EXISTS.

DROP INDEX auftrag_received IF EXISTS;

CREATE INDEX auftrag_recorded IF NOT EXISTS
FOR (a:Auftrag) ON (a.erfasst);
