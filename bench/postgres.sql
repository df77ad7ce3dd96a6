-- The system the store replaces: the original design's tables in PostgreSQL 15.
-- entitaeten holds the entities (global per user), fakten one row per version of a fact
-- (id, version) with its validity (t_valid/t_invalid, system time t_recorded/t_expired),
-- herkunft, the pair (user_id, character_id) and the strength (staerke_decay); a value
-- fact keeps its value in `wert` (the check makes a fact either a reference or a value).
-- As in the graph, a change closes a version (t_expired) and adds the next one. Timeline
-- entries carry `nachfolger_id`, the successor after a move.

CREATE TABLE IF NOT EXISTS entitaeten (
    id        text PRIMARY KEY,
    user_id   text NOT NULL,
    name      text NOT NULL,
    name_norm text NOT NULL,
    erstellt  timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS entitaeten_user_name ON entitaeten (user_id, name_norm);

CREATE TABLE IF NOT EXISTS timeline (
    id            text PRIMARY KEY,
    user_id       text NOT NULL,
    character_id  text NOT NULL,
    typ           text NOT NULL,
    titel         text NOT NULL,
    beginn        date NOT NULL,
    ende          date,
    genauigkeit   text NOT NULL CHECK (genauigkeit IN ('tag', 'monat')),
    aktiv         boolean NOT NULL,
    abgesagt      boolean NOT NULL DEFAULT false,
    betrifft_id   text REFERENCES entitaeten (id),
    nachfolger_id text REFERENCES timeline (id) DEFERRABLE INITIALLY DEFERRED
);

CREATE TABLE IF NOT EXISTS fakten (
    id            text NOT NULL,
    version       integer NOT NULL CHECK (version >= 1),
    user_id       text NOT NULL,
    character_id  text NOT NULL,
    subjekt_id    text NOT NULL REFERENCES entitaeten (id),
    beziehung     text NOT NULL,
    objekt_id     text REFERENCES entitaeten (id),
    wert          text,
    herkunft      text NOT NULL CHECK (herkunft IN ('mensch', 'nova', 'modell', 'recherche')),
    t_valid       timestamptz NOT NULL,
    t_invalid     timestamptz,
    t_recorded    timestamptz NOT NULL,
    t_expired     timestamptz,
    aktiv         boolean NOT NULL,
    grund         text CHECK (grund IN ('abgeloest', 'berichtigt', 'abgesagt')),
    staerke_decay double precision NOT NULL,
    last_touched  timestamptz NOT NULL,
    decay_am      date,
    timeline_id   text,
    timeline_bis  text,
    PRIMARY KEY (id, version),
    CHECK ((objekt_id IS NULL) <> (wert IS NULL))
);
-- Both directions of the Mappe, the pair in the key; the sort keys ride along.
CREATE INDEX IF NOT EXISTS fakten_subjekt
    ON fakten (subjekt_id, character_id) INCLUDE (aktiv, staerke_decay, beziehung);
CREATE INDEX IF NOT EXISTS fakten_objekt
    ON fakten (objekt_id, character_id) INCLUDE (aktiv, staerke_decay, beziehung)
    WHERE objekt_id IS NOT NULL;
