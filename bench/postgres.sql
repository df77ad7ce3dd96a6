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

-- The day a timeline chain ends on: the beginning of its last entry (after moves).
-- None for a chain that never ends (a cycle, taken after 1,000 steps), as in the graph.
CREATE OR REPLACE FUNCTION chain_day(start_id text) RETURNS date
LANGUAGE plpgsql STABLE AS $$
DECLARE
    cur text := start_id;
    day date;
    nxt text;
BEGIN
    FOR step IN 1..1000 LOOP
        SELECT beginn, nachfolger_id INTO day, nxt FROM timeline WHERE id = cur;
        IF NOT FOUND OR nxt IS NULL THEN
            RETURN day;
        END IF;
        cur := nxt;
    END LOOP;
    RETURN NULL;
END
$$;

-- A value superseded from a day ahead that still holds at `jetzt` (the Mappe's rule,
-- docs/time.md): the current version of a superseded fact, its end (its end event's
-- day, else t_invalid) after `jetzt` and after its start (its event's day, else
-- t_valid), while its subject has an active value of the relation that is not resting
-- (a bond's need not). One to come (starting after `jetzt`) only where it is not the
-- entity `e`'s own: from its subject, or from either partner of a symmetric relation.
-- The cheap tests first.
CREATE OR REPLACE FUNCTION holds_now(
    f fakten, e text, symmetrisch text[], schwelle double precision, jetzt timestamptz
) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
DECLARE
    ab timestamptz;
    bis timestamptz := f.t_invalid;
BEGIN
    IF f.grund IS DISTINCT FROM 'abgeloest' OR f.t_expired IS NOT NULL THEN
        RETURN false;
    END IF;
    IF f.timeline_bis IS NOT NULL THEN
        bis := coalesce(chain_day(f.timeline_bis)::timestamp AT TIME ZONE 'UTC', bis);
    END IF;
    IF bis IS NULL OR bis <= jetzt THEN
        RETURN false;
    END IF;
    ab := f.t_valid;
    IF f.timeline_id IS NOT NULL THEN
        ab := coalesce(chain_day(f.timeline_id)::timestamp AT TIME ZONE 'UTC', ab);
    END IF;
    IF ab IS NULL OR ab >= bis THEN
        RETURN false;  -- squeezed to nothing: it never held
    END IF;
    IF ab > jetzt AND (f.subjekt_id = e OR f.objekt_id = e AND f.beziehung = ANY(symmetrisch))
    THEN
        RETURN false;  -- the entity's own to come: a line of its history only
    END IF;
    RETURN f.beziehung = ANY(symmetrisch) OR EXISTS (
        SELECT 1 FROM fakten c
        WHERE c.subjekt_id = f.subjekt_id AND c.character_id = f.character_id
          AND c.beziehung = f.beziehung AND c.aktiv AND c.staerke_decay >= schwelle);
END
$$;
