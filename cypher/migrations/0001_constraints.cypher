// Unique ids and the lookups every query anchors on.
// Each statement is idempotent (IF NOT EXISTS); statements end with ';'.

CREATE CONSTRAINT entitaet_id IF NOT EXISTS
FOR (e:Entitaet) REQUIRE e.id IS UNIQUE;

CREATE INDEX entitaet_name IF NOT EXISTS
FOR (e:Entitaet) ON (e.user_id, e.name_norm);

CREATE INDEX entitaet_user IF NOT EXISTS
FOR (e:Entitaet) ON (e.user_id);

CREATE CONSTRAINT timeline_eintrag_id IF NOT EXISTS
FOR (t:TimelineEintrag) REQUIRE t.id IS UNIQUE;

CREATE INDEX timeline_eintrag_pair IF NOT EXISTS
FOR (t:TimelineEintrag) ON (t.user_id, t.character_id, t.beginn);

CREATE CONSTRAINT auftrag_key IF NOT EXISTS
FOR (a:Auftrag) REQUIRE (a.user_id, a.id) IS UNIQUE;

CREATE INDEX auftrag_received IF NOT EXISTS
FOR (a:Auftrag) ON (a.empfangen);

CREATE CONSTRAINT nutzer_id IF NOT EXISTS
FOR (n:Nutzer) REQUIRE n.id IS UNIQUE;

CREATE CONSTRAINT decay_lauf_tag IF NOT EXISTS
FOR (d:DecayLauf) REQUIRE d.tag IS UNIQUE;
