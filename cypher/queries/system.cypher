// name: ping
// The cheapest round trip: the floor every other query is compared with.
RETURN 1 AS ok;

// name: server_info
// Version and edition of the server.
CALL dbms.components() YIELD name, versions, edition
RETURN name, versions[0] AS version, edition;

// name: clear_plans
// Empty the server's cache of query plans: for the tests and benchmarks that count the
// plans a workload makes (one per query: docs/operations.md).
CALL db.clearQueryCaches() YIELD value
RETURN value;

// name: store_counts
// How many entities and fact relationships (active and all) the store holds.
CALL () { MATCH (e:Entitaet) RETURN count(e) AS entities }
CALL () {
  MATCH (:Entitaet)-[r]->()
  WHERE r.herkunft IS NOT NULL
  RETURN count(r) AS facts, count(CASE WHEN r.aktiv THEN 1 END) AS active_facts
}
RETURN entities, facts, active_facts;

// name: schema_applied
// The migrations recorded in the graph; when each was applied in epoch microseconds (every
// command checks the schema first, and a DateTime costs the driver more to decode).
MATCH (m:SchemaMigration)
RETURN m.version AS version, m.name AS name, m.checksum AS checksum,
       m.applied_at.epochSeconds * 1000000 + m.applied_at.microsecond AS applied_us
ORDER BY m.version;

// name: schema_record
// Record one applied migration.
// params: $version, $name, $checksum
// :param version => 1
// :param name => 'constraints'
// :param checksum => '0123abcd'
MERGE (m:SchemaMigration {version: $version})
SET m.name = $name, m.checksum = $checksum, m.applied_at = datetime();
