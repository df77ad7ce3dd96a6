// The invariants `kg check` proves. Neo4j Community has no existence or type
// constraints, so these queries are where the guarantees of SQL CHECK constraints live.
// Each returns `count` (violations) and `samples` (a few ids to look at). $user_id null
// checks the whole database; a user id checks that user's data only. Fact edges are the
// relationships of a canon type ($rel_types) leaving an :Entitaet.

// fragment: fact_edges
// The fact edges in scope: `r`, a relationship of a canon type ($rel_types) from its
// subject `s`, an entity of $user_id (of every user when it is null), to its object `o`
// (an entity or a value node). A query goes on with `AND ...` for its own conditions.
MATCH (s:Entitaet)-[r]->(o)
WHERE ($user_id IS NULL OR s.user_id = $user_id) AND type(r) IN $rel_types

// fragment: active_edge_decay
// The decay state of the active fact edges in scope: `active`, those `with_strength`, the
// `newest` decay_am up to $day, and how many carry one after it (`future`: a run for a
// day that has not come is no measurement). A decay_am that is not a date is no run.
CALL () {
  {{ fact_edges }}
    AND r.aktiv = true
  WITH r, r.decay_am IS :: DATE AS dated
  RETURN count(r) AS active, count(r.staerke_decay) AS with_strength,
         max(CASE WHEN dated AND r.decay_am <= $day THEN r.decay_am END) AS newest,
         count(CASE WHEN dated AND r.decay_am > $day THEN 1 END) AS future
}

// fragment: missed_by_newest_run
// The active fact edges in scope the run of day `newest` missed (`missed`, with a few
// ids as `samples`): last touched before that day, yet not swept by it.
CALL (newest) {
  {{ fact_edges }}
    AND newest IS NOT NULL AND r.aktiv = true
    AND r.last_touched < datetime({date: newest, timezone: 'UTC'})
    AND coalesce(r.decay_am < newest, true)
  RETURN count(r) AS missed, collect(r.id)[..$samples] AS samples
}

// fragment: wrongly_typed
// The properties of `x` (a node or relationship) that do not have their type: `failed`,
// of the names in `fields` grouped by type as `kg.models.field_types` groups them
// (_OR_NULL allows null, NUMBER is a float or an integer).
WITH x,
     [k IN coalesce(fields['STRING'], []) WHERE NOT x[k] IS :: STRING NOT NULL]
     + [k IN coalesce(fields['STRING_OR_NULL'], []) WHERE NOT x[k] IS :: STRING]
     + [k IN coalesce(fields['STRING_LIST_OR_NULL'], [])
        WHERE NOT x[k] IS :: LIST<STRING NOT NULL>]
     + [k IN coalesce(fields['DATETIME'], []) WHERE NOT x[k] IS :: ZONED DATETIME NOT NULL]
     + [k IN coalesce(fields['DATETIME_OR_NULL'], []) WHERE NOT x[k] IS :: ZONED DATETIME]
     + [k IN coalesce(fields['DATE'], []) WHERE NOT x[k] IS :: DATE NOT NULL]
     + [k IN coalesce(fields['DATE_OR_NULL'], []) WHERE NOT x[k] IS :: DATE]
     + [k IN coalesce(fields['INTEGER'], []) WHERE NOT x[k] IS :: INTEGER NOT NULL]
     + [k IN coalesce(fields['INTEGER_OR_NULL'], []) WHERE NOT x[k] IS :: INTEGER]
     + [k IN coalesce(fields['BOOLEAN'], []) WHERE NOT x[k] IS :: BOOLEAN NOT NULL]
     + [k IN coalesce(fields['BOOLEAN_OR_NULL'], []) WHERE NOT x[k] IS :: BOOLEAN]
     + [k IN coalesce(fields['NUMBER'], [])
        WHERE NOT (x[k] IS :: FLOAT NOT NULL OR x[k] IS :: INTEGER NOT NULL)] AS failed

// fragment: bad_text
// Adds to `failed` the text properties of `x` (`texts`: each name with the most
// characters it may have, `kg.check.TEXTS`) that an export refuses, as its validators
// read a text ($rules: `kg.check.TEXT_RULES`): nothing left once stripped of whitespace
// and bidi controls, whitespace at either end (which the export strips: $spaces,
// `kg.check.SPACES`), longer (from
// the first to the last character a strip keeps), or with a control character. A
// property of the wrong type is `wrongly_typed`'s.
WITH x, failed + [k IN keys(texts)
                  WHERE x[k] IS :: STRING AND NOT k IN failed
                    AND (x[k] =~ $rules.blank OR x[k] =~ $rules.control
                         OR left(x[k], 1) IN $spaces OR right(x[k], 1) IN $spaces
                         OR (size(x[k]) > texts[k]
                             AND x[k] =~ '(?s).*' + $rules.solid + '.{'
                                 + toString(texts[k] - 1) + ',}' + $rules.solid + '.*'))
                 ] AS failed

// fragment: unknown_keys
// Adds to `failed` the properties of `x` that the export's records do not know (`known`:
// `kg.check.known_properties`): set by hand, they make an export refuse the store.
WITH x, failed + [k IN keys(x) WHERE NOT k IN known | k + ' (unknown)'] AS failed

// name: check_node_fields
// Item 1: every entity, timeline entry and order (of $user_id, of every user when it is
// null) carries its properties with their types ($entity, $entry, $order: as
// `kg.models.ENTITY_PROPERTIES`, TIMELINE_PROPERTIES and ORDER_PROPERTIES declare them,
// grouped like check_fact_fields' $fields) and the values an export takes: an entry's
// typ and genauigkeit are known ones ($typen), one of month precision begins on the 1st
// and a span of it ends on a month's last day, no span ends before it begins; an order's
// status is ok, teilweise or abgelehnt; and its texts within the bounds an export
// takes ($texts, $rules: `bad_text`). Samples: label, id and what is wrong.
// params: $user_id, $entity, $entry, $order, $typen, $texts, $rules, $spaces, $known, $samples
// :param user_id => 'demo-user'
// :param entity => {STRING: ['id', 'user_id', 'name', 'name_norm'], DATETIME_OR_NULL: ['erstellt']}
// :param entry => {STRING: ['id', 'user_id', 'character_id', 'typ', 'titel', 'genauigkeit'], DATE: ['beginn'], DATE_OR_NULL: ['ende'], BOOLEAN: ['aktiv']}
// :param order => {STRING: ['id', 'user_id', 'character_id', 'status'], STRING_OR_NULL: ['ergebnis', 'inhalt']}
// :param typen => ['termin', 'ereignis']
// :param texts => {Entitaet: {id: 200, user_id: 200, name: 200}, TimelineEintrag: {id: 200, user_id: 200, character_id: 200, titel: 200}, Auftrag: {id: 200, user_id: 200, character_id: 200}, fact: {id: 200, user_id: 200, character_id: 200, auftrag_id: 200, timeline_id: 200, timeline_bis: 200}, Wert: {wert: 2000}}
// :param rules => {control: '(?s).*[\\x00-\\x1F\\x7F-\\x9F].*', blank: '[\\s]*', invisible: '[\\s[\\p{Cf}\\x{34F}\\x{FE00}-\\x{FE0F}]]*', solid: '[^\\s]'}
// :param spaces => [' ', '\t', '\n', '\u00a0']
// :param known => {Entitaet: ['id', 'user_id', 'name', 'name_norm', 'erstellt'], TimelineEintrag: ['id', 'user_id', 'character_id', 'typ', 'titel', 'beginn', 'ende', 'genauigkeit', 'aktiv', 'abgesagt', 't_recorded', 'ersetzt_am', 'abgesagt_am'], Auftrag: ['id', 'user_id', 'character_id', 'empfangen', 'erfasst', 'status', 'ergebnis', 'anzahl_tripel', 'inhalt'], fact: ['id', 'user_id', 'character_id', 'herkunft', 'auftrag_id', 't_valid', 't_invalid', 'timeline_id', 'timeline_bis', 'abgeloest_durch', 't_recorded', 't_expired', 'version', 'aktiv', 'grund', 'staerke_decay', 'last_touched', 'decay_am', 'gesagt']}
// :param samples => 5
CALL () {
  MATCH (x:Entitaet)
  WHERE $user_id IS NULL OR x.user_id = $user_id
  WITH x, $entity AS fields
  {{ wrongly_typed }}
  WITH x, failed, $texts.Entitaet AS texts
  {{ bad_text }}
  WITH x, failed, $known.Entitaet AS known
  {{ unknown_keys }}
  RETURN x, 'Entitaet' AS label, failed
      + CASE WHEN x.name IS :: STRING AND NOT 'name' IN failed AND x.name =~ $rules.invisible
             THEN ['name (nothing visible)'] ELSE [] END AS failed
  UNION ALL
  MATCH (x:TimelineEintrag)
  WHERE $user_id IS NULL OR x.user_id = $user_id
  WITH x, $entry AS fields
  {{ wrongly_typed }}
  WITH x, failed, $texts.TimelineEintrag AS texts
  {{ bad_text }}
  WITH x, failed, $known.TimelineEintrag AS known
  {{ unknown_keys }}
  RETURN x, 'TimelineEintrag' AS label, failed
      + CASE WHEN x.typ IS :: STRING AND NOT x.typ IN $typen THEN ['typ'] ELSE [] END
      + CASE WHEN x.genauigkeit IS :: STRING AND NOT x.genauigkeit IN ['tag', 'monat']
             THEN ['genauigkeit'] ELSE [] END
      + CASE WHEN x.genauigkeit = 'monat' AND x.beginn IS :: DATE AND x.beginn.day <> 1
             THEN ['beginn (monat: the 1st)'] ELSE [] END
      + CASE WHEN x.genauigkeit = 'monat' AND x.ende IS :: DATE
                  AND (x.ende + duration('P1D')).day <> 1
             THEN ['ende (monat: a last day)'] ELSE [] END
      + CASE WHEN x.beginn IS :: DATE AND x.ende IS :: DATE AND x.ende < x.beginn
             THEN ['ende (before beginn)'] ELSE [] END AS failed
  UNION ALL
  MATCH (x:Auftrag)
  WHERE $user_id IS NULL OR x.user_id = $user_id
  WITH x, $order AS fields
  {{ wrongly_typed }}
  WITH x, failed, $texts.Auftrag AS texts
  {{ bad_text }}
  WITH x, failed, $known.Auftrag AS known
  {{ unknown_keys }}
  RETURN x, 'Auftrag' AS label, failed
      + CASE WHEN x.status IS :: STRING AND NOT x.status IN ['ok', 'teilweise', 'abgelehnt']
             THEN ['status'] ELSE [] END AS failed
}
WITH x, label, failed WHERE failed <> []
RETURN count(x) AS count,
       collect(label + ' ' + coalesce(toString(x.id), elementId(x)) + ' ('
               + reduce(t = '', k IN failed | t + CASE t WHEN '' THEN '' ELSE ', ' END + k)
               + ')')[..$samples] AS samples;

// name: check_fact_fields
// Item 1: every fact edge carries its required fields with their types, as
// `kg.models.FACT_PROPERTIES` declares them ($fields: the names grouped by type, from
// `kg.models.field_types`; _OR_NULL allows null, NUMBER is a float or an integer), its
// texts and its value node's `wert` within the bounds an export takes ($texts,
// $rules: `bad_text`). Samples name the fields, in the model's order ($order).
// params: $user_id, $rel_types, $fields, $order, $texts, $rules, $spaces, $known, $typen, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param typen => ['person', 'ort', 'organisation', 'tier', 'objekt']
// :param fields => {STRING: ['id', 'user_id', 'character_id', 'auftrag_id'], INTEGER: ['version'], DATETIME: ['t_valid', 't_recorded', 'last_touched'], DATETIME_OR_NULL: ['t_invalid', 't_expired'], STRING_OR_NULL: ['timeline_id', 'timeline_bis', 'subjekt_typ'], BOOLEAN: ['aktiv'], NUMBER: ['staerke_decay'], DATE_OR_NULL: ['decay_am'], BOOLEAN_OR_NULL: ['gesagt']}
// :param order => ['id', 'version', 'user_id', 'character_id', 't_valid', 't_invalid', 'timeline_id', 'timeline_bis', 't_recorded', 't_expired', 'aktiv', 'staerke_decay', 'last_touched', 'decay_am', 'wert']
// :param texts => {Entitaet: {id: 200, user_id: 200, name: 200}, TimelineEintrag: {id: 200, user_id: 200, character_id: 200, titel: 200}, Auftrag: {id: 200, user_id: 200, character_id: 200}, fact: {id: 200, user_id: 200, character_id: 200, auftrag_id: 200, timeline_id: 200, timeline_bis: 200}, Wert: {wert: 2000}}
// :param rules => {control: '(?s).*[\\x00-\\x1F\\x7F-\\x9F].*', blank: '[\\s]*', invisible: '[\\s[\\p{Cf}\\x{34F}\\x{FE00}-\\x{FE0F}]]*', solid: '[^\\s]'}
// :param spaces => [' ', '\t', '\n', '\u00a0']
// :param known => {Entitaet: ['id', 'user_id', 'name', 'name_norm', 'erstellt'], TimelineEintrag: ['id', 'user_id', 'character_id', 'typ', 'titel', 'beginn', 'ende', 'genauigkeit', 'aktiv', 'abgesagt', 't_recorded', 'ersetzt_am', 'abgesagt_am'], Auftrag: ['id', 'user_id', 'character_id', 'empfangen', 'erfasst', 'status', 'ergebnis', 'anzahl_tripel', 'inhalt'], fact: ['id', 'user_id', 'character_id', 'herkunft', 'auftrag_id', 't_valid', 't_invalid', 'timeline_id', 'timeline_bis', 'abgeloest_durch', 't_recorded', 't_expired', 'version', 'aktiv', 'grund', 'staerke_decay', 'last_touched', 'decay_am', 'gesagt']}
// :param samples => 5
{{ fact_edges }}
WITH r AS x, $fields AS fields
{{ wrongly_typed }}
WITH x, failed, $texts.fact AS texts
{{ bad_text }}
WITH x, failed, $known.fact AS known
{{ unknown_keys }}
// `gesagt` marks a type fact a `typ` triple stated: on another fact it is set by hand.
// `subjekt_typ`, the type a triple carried for its subject, is one of the specific
// types ($typen), and never on a type fact (whose triple carries none).
WITH x AS r, failed + CASE WHEN x.gesagt IS NOT NULL AND type(x) <> 'TYP'
                           THEN ['gesagt (only on a type fact)'] ELSE [] END
                    + CASE WHEN x.subjekt_typ IS NOT NULL
                                AND (NOT x.subjekt_typ IN $typen OR type(x) = 'TYP')
                           THEN ['subjekt_typ (a specific type, not on a type fact)']
                           ELSE [] END AS failed
// Its value node's `wert`, by the same rules.
CALL (r) {
  WITH endNode(r) AS x
  WITH x, CASE WHEN x:Wert AND NOT x.wert IS :: STRING NOT NULL THEN ['wert'] ELSE [] END
          AS failed, CASE WHEN x:Wert THEN $texts.Wert ELSE {} END AS texts
  {{ bad_text }}
  RETURN failed AS value_failed
}
WITH r, failed + value_failed AS failed
WHERE failed <> []
WITH r, [k IN $order WHERE k IN failed] + [k IN failed WHERE k ENDS WITH ')'] AS bad
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' ' + type(r) + ' ('
               + reduce(t = '', k IN bad | t + CASE t WHEN '' THEN '' ELSE ', ' END + k)
               + ')')[..$samples] AS samples;

// name: check_fact_herkunft
// Item 1: every fact edge's herkunft is one of the four allowed ($herkunft); no default.
// params: $user_id, $rel_types, $herkunft, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param herkunft => ['mensch', 'nova', 'modell', 'recherche']
// :param samples => 5
{{ fact_edges }}
  AND NOT coalesce(r.herkunft IN $herkunft, false)
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' (herkunft '
               + CASE WHEN r.herkunft IS NULL THEN 'missing'
                      ELSE coalesce(toStringOrNull(r.herkunft), valueType(r.herkunft)) END
               + ')')[..$samples] AS samples;

// name: check_fact_strength
// Item 1: a fact edge's strength lies in [0, 1] (a missing strength is check_fact_fields').
// params: $user_id, $rel_types, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param samples => 5
{{ fact_edges }}
  AND (r.staerke_decay IS :: FLOAT NOT NULL OR r.staerke_decay IS :: INTEGER NOT NULL)
  AND NOT (0.0 <= r.staerke_decay <= 1.0)
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' (staerke_decay ' + toString(r.staerke_decay) + ')')[..$samples] AS samples;

// name: check_audit_retention
// Item 6: forensics keeps a retention period instead of decay (convention §2): no order
// was recorded before $before, the retention (KG_AUDIT_RETENTION_DAYS) and the decay
// checks' allowance of days before the day checked. Orders older show that `kg audit
// prune` does not run (the audit would grow with every turn, for good).
// params: $user_id, $before, $samples
// :param user_id => null
// :param before => datetime() - duration('P367D')
// :param samples => 5
MATCH (a:Auftrag)
WHERE ($user_id IS NULL OR a.user_id = $user_id) AND a.erfasst < $before
RETURN count(a) AS count,
       collect(CASE WHEN a.id IS :: STRING NOT NULL THEN a.id ELSE elementId(a) END
               + ' (erfasst ' + toString(a.erfasst) + ')')[..$samples] AS samples;

// name: check_decay_strength
// Item 6: every active fact edge's strength is the one its sweep wrote: exp(-$rate * days
// from last_touched to the start of its decay_am, UTC), 1 when it was touched at or after
// that instant, or when no sweep has reached it yet (no decay_am). A strength set by hand
// (a fact at 0 rests, out of every Mappe, until the next sweep) or left behind by a touch
// that did not reset it. Within a millionth: the sweep counts whole seconds, the bench's
// generator and Python exact ones. A strength or time of the wrong type is another
// check's (fact_fields).
// params: $user_id, $rel_types, $rate, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param rate => 0.0015
// :param samples => 5
{{ fact_edges }}
  AND r.aktiv = true AND r.last_touched IS :: ZONED DATETIME NOT NULL
  AND (r.staerke_decay IS :: FLOAT NOT NULL OR r.staerke_decay IS :: INTEGER NOT NULL)
  AND (r.decay_am IS NULL OR r.decay_am IS :: DATE)
WITH r, CASE WHEN r.decay_am IS NULL THEN 0.0
             ELSE duration.inSeconds(r.last_touched,
                    datetime({date: r.decay_am, timezone: 'UTC'})).seconds / 86400.0
        END AS days
WITH r, CASE WHEN days <= 0 THEN 1.0 ELSE exp(-$rate * days) END AS swept
WHERE abs(r.staerke_decay - swept) > 0.000001
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' (staerke_decay ' + toString(r.staerke_decay)
               + ', by its last_touched and decay_am ' + toString(round(swept, 6)) + ')')[..$samples]
       AS samples;

// name: check_fact_aktiv
// Item 1: aktiv agrees with the version's state. Without grund the value holds
// open-ended (no t_invalid, no timeline_bis, no abgeloest_durch: nothing follows it),
// and the version is active exactly while it is the current record (no t_expired).
// Superseded (abgeloest) it has a t_invalid, and is of an einwertig relation
// ($einwertig: the values of the others are a set, each holding until taken back);
// taken back (berichtigt, abgesagt) it never held, so t_invalid = t_valid, and a
// cancelled one (abgesagt) rests on the event that was cancelled (timeline_id); none of
// them is active.
// A closed version (t_expired: a later version replaced it) keeps the state it recorded.
// params: $user_id, $rel_types, $einwertig, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param einwertig => ['WOHNT_IN', 'BERUF', 'TYP']
// :param samples => 5
{{ fact_edges }}
  AND r.aktiv IS :: BOOLEAN NOT NULL
  AND NOT coalesce(CASE
    WHEN r.grund IS NULL
      THEN r.t_invalid IS NULL AND r.timeline_bis IS NULL AND r.abgeloest_durch IS NULL
           AND r.aktiv = (r.t_expired IS NULL)
    WHEN r.grund = 'abgeloest'
      THEN r.t_invalid IS NOT NULL AND NOT r.aktiv AND type(r) IN $einwertig
    WHEN r.grund = 'berichtigt' THEN r.t_invalid = r.t_valid AND NOT r.aktiv
    WHEN r.grund = 'abgesagt'
      THEN r.t_invalid = r.t_valid AND NOT r.aktiv AND r.timeline_id IS NOT NULL
    ELSE false
  END, false)
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' (aktiv ' + toString(r.aktiv) + ', grund '
               + coalesce(toString(r.grund), 'null') + ')')[..$samples] AS samples;

// name: check_fact_interval
// Item 9: no valid interval ends before it starts (t_invalid >= t_valid).
// params: $user_id, $rel_types, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param samples => 5
{{ fact_edges }}
  AND r.t_invalid < r.t_valid
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' v' + toString(r.version) + ' (valid '
               + toString(r.t_valid) + ' until ' + toString(r.t_invalid) + ')')[..$samples]
       AS samples;

// name: check_fact_followers
// Item 9: every fact a current version names as following it (`abgeloest_durch`) is
// another current fact of the same relation and pair in a partition the version is in:
// at its subject, and of a symmetric relation ($symmetric) at either end; a list names
// at least one (an empty one, set by hand, passed, and a later correction left the
// value ended with nothing after it), each once. A list that is not of strings is
// fact_fields' finding.
// params: $user_id, $rel_types, $symmetric, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN', 'PARTNER']
// :param symmetric => ['PARTNER']
// :param samples => 5
{{ fact_edges }}
  AND r.t_expired IS NULL AND r.abgeloest_durch IS :: LIST<STRING NOT NULL>
// (An empty list names no follower: a take-back would find none to give way to.)
UNWIND CASE r.abgeloest_durch WHEN [] THEN ['(none)'] ELSE r.abgeloest_durch + [
  i IN range(1, coalesce(size(r.abgeloest_durch), 0) - 1)
  WHERE r.abgeloest_durch[i] IN r.abgeloest_durch[..i] | r.abgeloest_durch[i] + ' (twice)'
] END AS fid
WITH s, r, o, fid, type(r) IN $symmetric AS both
WHERE fid = r.id OR fid = '(none)' OR fid ENDS WITH ' (twice)' OR NOT (
  EXISTS {
    MATCH (s)-[f]-()
    WHERE type(f) = type(r) AND f.id = fid AND (both OR startNode(f) = s)
      AND f.character_id = r.character_id AND f.t_expired IS NULL
  }
  OR (both AND EXISTS {
    MATCH (o)-[f]-()
    WHERE type(f) = type(r) AND f.id = fid
      AND f.character_id = r.character_id AND f.t_expired IS NULL
  }))
WITH r, collect(fid) AS unknown
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' v' + toString(r.version) + ' (followed by '
               + reduce(t = '', x IN unknown | t + CASE t WHEN '' THEN '' ELSE ', ' END + x)
               + ')')[..$samples] AS samples;

// name: check_fact_end_event
// Item 9: a current version that ends with an event (`timeline_bis`) and names its
// followers (`abgeloest_durch`) is followed by a value of that event: one of them begins
// with it (`timeline_id`). Its end as read is that event's day; bound to an event none
// of its followers has, it would end on a day where nothing follows it in its partition,
// and move with an event of another partition. Versions from before followers were
// named carry none and are left alone.
// A follower is in the version's partition: at its subject, and of a symmetric relation
// ($symmetric) also at its object (expanded only then: an object such as a country can
// have many facts).
// params: $user_id, $rel_types, $symmetric, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN', 'PARTNER']
// :param symmetric => ['PARTNER']
// :param samples => 5
{{ fact_edges }}
  AND r.t_expired IS NULL AND r.timeline_bis IS NOT NULL
  AND r.abgeloest_durch IS :: LIST<STRING NOT NULL>
  AND NOT EXISTS {
    MATCH (s)-[f]-()
    WHERE type(f) = type(r) AND f.id IN r.abgeloest_durch
      AND f.timeline_id = r.timeline_bis AND f.t_expired IS NULL
      AND f.character_id = r.character_id
  }
  AND NOT (type(r) IN $symmetric AND EXISTS {
    MATCH (o)-[f]-()
    WHERE type(f) = type(r) AND f.id IN r.abgeloest_durch
      AND f.timeline_id = r.timeline_bis AND f.t_expired IS NULL
      AND f.character_id = r.character_id
  })
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' v' + toString(r.version) + ' (ends with '
               + r.timeline_bis + ')')[..$samples] AS samples;

// name: check_fact_system_time
// Item 9: no version stops being the record before it was recorded (t_expired >=
// t_recorded), and none was recorded, replaced or touched after now: system time is the
// store's clock, which has not reached the future (an as-of read of today would miss the
// version). "Now" is the clock as each row is read, with a second's grace: a check that
// runs while orders commit sees them.
// params: $user_id, $rel_types, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param samples => 5
{{ fact_edges }}
  AND (r.t_expired < r.t_recorded
       OR r.t_recorded > datetime.realtime() + duration('PT1S')
       OR r.t_expired > datetime.realtime() + duration('PT1S')
       OR r.last_touched > datetime.realtime() + duration('PT1S'))
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' v' + toString(r.version) + ' (recorded '
               + coalesce(toString(r.t_recorded), '-') + ', replaced '
               + coalesce(toString(r.t_expired), 'not yet') + ', touched '
               + coalesce(toString(r.last_touched), '-') + ')')[..$samples]
       AS samples;

// name: check_fact_first_touch
// Item 9: no first version was touched before it was recorded: the writer records and
// touches a new fact at one instant, and a touch is later (a later version keeps the
// touch of the one before). Touched "in 2022", a fact recorded today rests at the next
// sweep and leaves the Mappe. The code before 2026-11-29 recorded a fact at the order's
// zeitpunkt and touched it at the zeitpunkt of the order that told it again, which could
// be earlier: an import takes that state (`IMPORT_TAKES`), a touch mends it.
// params: $user_id, $rel_types, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param samples => 5
{{ fact_edges }}
  AND r.version = 1 AND r.last_touched < r.t_recorded
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' (recorded ' + toString(r.t_recorded)
               + ', touched ' + toString(r.last_touched) + ')')[..$samples] AS samples;

// name: check_user_clock
// Item 9: no user's clock is after now, nor before the user's own records: `uhr` on the
// user's lock node is the system time of its last write, and the next one is recorded
// just after it when that is later than the store's clock, so a clock in the future would
// record every later write there; a Mappe stands at it (`stand`), and read again as known
// then it tells what held then, so a clock set back before the user's records made that
// read say nothing (a stranger's attack). The records: its facts' versions (recorded,
// replaced), its timeline entries (recorded, replaced, cancelled), its orders (recorded)
// and its entities (created); each label read once, the latest per user, as the other
// checks read them (a look per user went through every entry and order again for each).
// With a second's grace, like fact_system_time. A clock that is not an instant is found
// too; a time of the wrong type is fact_fields' and node_fields' finding.
// params: $user_id, $rel_types, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param samples => 5
CALL () {
  MATCH (n:Nutzer)
  WHERE ($user_id IS NULL OR n.id = $user_id) AND n.uhr IS NOT NULL
    AND (NOT n.uhr IS :: ZONED DATETIME OR n.uhr > datetime.realtime() + duration('PT1S'))
  RETURN n, null AS latest
  UNION ALL
  CALL () {
    MATCH (s:Entitaet)
    WHERE $user_id IS NULL OR s.user_id = $user_id
    RETURN s.user_id AS u, max(CASE WHEN s.erstellt IS :: ZONED DATETIME THEN s.erstellt END) AS t
    UNION ALL
    {{ fact_edges }}
    UNWIND [r.t_recorded, r.t_expired] AS x
    RETURN s.user_id AS u, max(CASE WHEN x IS :: ZONED DATETIME THEN x END) AS t
    UNION ALL
    MATCH (e:TimelineEintrag)
    WHERE $user_id IS NULL OR e.user_id = $user_id
    UNWIND [e.t_recorded, e.ersetzt_am, e.abgesagt_am] AS x
    RETURN e.user_id AS u, max(CASE WHEN x IS :: ZONED DATETIME THEN x END) AS t
    UNION ALL
    MATCH (a:Auftrag)
    WHERE $user_id IS NULL OR a.user_id = $user_id
    RETURN a.user_id AS u, max(CASE WHEN a.erfasst IS :: ZONED DATETIME THEN a.erfasst END) AS t
  }
  WITH u, max(t) AS latest
  MATCH (n:Nutzer {id: u})
  WHERE n.uhr IS :: ZONED DATETIME AND latest > n.uhr
  RETURN n, latest
}
WITH n, max(latest) AS latest
RETURN count(n) AS count,
       collect(coalesce(n.id, elementId(n)) + ' (' + toString(n.uhr)
               + CASE WHEN latest IS NOT NULL THEN ', before its record of ' + toString(latest)
                 ELSE '' END + ')')[..$samples]
       AS samples;

// name: check_node_system_time
// Item 9: no entity was created (`erstellt`), and no order recorded (`erfasst`), after now:
// both are the store's clock, like a fact's t_recorded (an export of them is refused by
// any import, "after this store's clock", and an order recorded in the future outlives
// its retention). With a second's grace, like fact_system_time.
// params: $user_id, $samples
// :param user_id => 'demo-user'
// :param samples => 5
// (One branch per label: the orders' by the index on `erfasst`, 0004.)
CALL () {
  MATCH (n:Entitaet)
  WHERE n.erstellt > datetime.realtime() + duration('PT1S')
    AND ($user_id IS NULL OR n.user_id = $user_id)
  RETURN n, 'erstellt ' + toString(n.erstellt) AS what
  UNION ALL
  MATCH (n:Auftrag)
  WHERE n.erfasst > datetime.realtime() + duration('PT1S')
    AND ($user_id IS NULL OR n.user_id = $user_id)
  RETURN n, 'erfasst ' + toString(n.erfasst) AS what
}
RETURN count(n) AS count,
       collect(labels(n)[0] + ' ' + coalesce(toStringOrNull(n.id), elementId(n))
               + ' (' + what + ')')[..$samples] AS samples;

// name: check_version_chains
// Item 9: every fact's versions form one well-formed chain: numbered 1..n, each replaced
// exactly when the next was recorded, only the last one current (no t_expired), and all
// of one relation, subject, object (or value) and pair.
// params: $user_id, $rel_types, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param samples => 5
{{ fact_edges }}
WITH s, r, o ORDER BY r.id, r.version
WITH r.id AS id, collect({v: r.version, rec: r.t_recorded,
                          exp: r.t_expired, rel: type(r), s: s.id,
                          c: r.character_id, o: coalesce(o.id, o.wert)}) AS vs
// (A missing time or field makes a comparison null, never true: coalesce to a violation.)
WHERE NOT coalesce(
  [x IN vs | x.v] = range(1, size(vs))
  AND vs[-1].exp IS NULL
  AND all(i IN range(0, size(vs) - 2) WHERE vs[i].exp = vs[i + 1].rec)
  AND all(x IN vs WHERE x.rel = vs[0].rel AND x.s = vs[0].s AND x.c = vs[0].c
                        AND x.o = vs[0].o),
  false)
RETURN count(*) AS count,
       collect(coalesce(id, '(no id)') + ' (versions '
               + reduce(t = '', x IN vs | t + CASE t WHEN '' THEN '' ELSE ', ' END
                        + coalesce(toString(x.v), '?')
                        + CASE WHEN x.exp IS NULL THEN '*' ELSE '' END) + ')')[..$samples]
       AS samples;

// fragment: span_now
// The start `ab` and end `bis` (epoch microseconds; bis null: open) of the current fact
// version `x` as recorded now, as a reader takes them: from the end of its events'
// chains (timeline_id, timeline_bis: the day's start, UTC), else its valid time; the end
// only of a superseded value, an end before the start being the start (`bis_roh`: the
// end as stored, also where it lies before the start).
CALL (x) {
  OPTIONAL MATCH (:TimelineEintrag {id: x.timeline_id})-[:NACHFOLGER*0..]->(ta:TimelineEintrag)
  WHERE NOT (ta)-[:NACHFOLGER]->()
  OPTIONAL MATCH (:TimelineEintrag {id: x.timeline_bis})-[:NACHFOLGER*0..]->(tb:TimelineEintrag)
  WHERE NOT (tb)-[:NACHFOLGER]->()
  WITH x, ta, tb LIMIT 1
  WITH x, CASE WHEN ta IS NULL THEN x.t_valid.epochSeconds * 1000000 + x.t_valid.microsecond
               ELSE datetime({date: ta.beginn, timezone: 'UTC'}).epochSeconds * 1000000
          END AS ab,
       CASE WHEN coalesce(x.grund, '') <> 'abgeloest' THEN null
            WHEN tb IS NOT NULL
              THEN datetime({date: tb.beginn, timezone: 'UTC'}).epochSeconds * 1000000
            ELSE x.t_invalid.epochSeconds * 1000000 + x.t_invalid.microsecond END AS bis
  RETURN ab, CASE WHEN bis < ab THEN ab ELSE bis END AS bis, bis AS bis_roh
}

// name: check_einwertig_followed
// Item 9: valid time has no gaps: where a value of an einwertig relation ends (a current
// version, superseded), another value of the partition holds or begins (at its subject;
// of a symmetric relation at either end: a partner may end because the other took a new
// one, who may in turn be squeezed to nothing by a partner of the far end told for the
// same instant), as recorded now. A superseded value is always followed by one, and a
// value taken back gives the time it held to the one before it; so a value that ends
// with nothing after it, or a gap between two values, was edited by hand (or left by a
// take-back: a stranger's hunt found a month's value reinstated up to a value squeezed
// to nothing, where nothing held after it). A value that held ends, in a relation of
// one partition per subject, where a value begins that holds somewhere; a partner may
// end where one begins that its far end squeezes, unless that one comes before it (a
// value of a third pair that squeezed it in their shared partition begins no later than
// the partner that ends: a cancel ended Anna–Ben of 3 December where Anna–Lena of the 24th begins,
// which Anna–Tom "in December" squeezes, and nobody had a partner from the 24th).
// A value squeezed to nothing (its end before its start) ends where the value it was
// placed before begins (one of a month's event that it began inside of), or at its own
// start (told for the instant of another), or at its start as recorded, an instant
// (kept squeezed by a take-back, its event moved later since): an end between, where no
// value begins, was edited by hand (a stranger moved one back between its start and its
// event's day, and every read showed it "bis" a day nothing began on).
// params: $user_id, $rel_types, $einwertig, $symmetric, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN', 'PARTNER']
// :param einwertig => ['WOHNT_IN', 'BERUF', 'TYP', 'PARTNER']
// :param symmetric => ['PARTNER']
// :param samples => 5
{{ fact_edges }}
  AND type(r) IN $einwertig AND r.t_expired IS NULL AND r.grund = 'abgeloest'
WITH s, r, o, r AS x
{{ span_now }}
WITH s, r, o, ab AS von, bis_roh AS ende
WHERE ende <> von
  // (squeezed and kept so by a take-back, its end fixed at its start as recorded then:
  // its own event moved later since, it holds nowhere, before and after)
  AND NOT (ende < von AND r.timeline_bis IS NULL
           AND r.t_invalid.epochSeconds = r.t_valid.epochSeconds
           AND r.t_invalid.nanosecond = r.t_valid.nanosecond)
CALL (s, r, o, von, ende) {
  UNWIND CASE WHEN type(r) IN $symmetric THEN [s, o] ELSE [s] END AS e
  MATCH (e)-[x]-()
  WHERE type(x) = type(r) AND x <> r AND x.character_id = r.character_id
    AND x.t_expired IS NULL AND coalesce(x.grund, 'abgeloest') = 'abgeloest'
    AND (startNode(x) = e OR type(x) IN $symmetric)
  {{ span_now }}
  WITH e, x, ab, bis
  // (Where a value that held ends, of a relation with one partition per subject, a value
  // that holds somewhere begins: of the values after it beginning there, the last told
  // holds, so one squeezed there alone marks a gap. A partner squeezed to nothing ends
  // one of another pair only where it comes after it: not where a value of a third
  // pair that squeezed it in their shared partition begins no later than the one that
  // ends, which it therefore precedes, or the ending one itself. Another value of the
  // ending one's own pair may come after it all the same: of two values of one pair the
  // later is kept from ending at the earlier, so the check does not conclude there.)
  WHERE (ab = ende AND (ende < von OR bis IS NULL OR bis > ab
                        OR (type(r) IN $symmetric
                            AND ((startNode(x) IN [s, o] AND endNode(x) IN [s, o])
                                 OR NOT EXISTS {
                                   MATCH (e)-[y]-()
                                   WHERE type(y) = type(r) AND y.id IN coalesce(x.abgeloest_durch, [])
                                     AND (y = r OR NOT (startNode(y) IN [s, o] AND endNode(y) IN [s, o]))
                                     AND y.character_id = r.character_id AND y.t_expired IS NULL
                                     AND coalesce(y.grund, 'abgeloest') = 'abgeloest'
                                   OPTIONAL MATCH (:TimelineEintrag {id: y.timeline_id})
                                                  -[:NACHFOLGER*0..]->(ya:TimelineEintrag)
                                   WHERE NOT (ya)-[:NACHFOLGER]->()
                                   WITH y, ya
                                   WHERE CASE WHEN ya IS NULL
                                           THEN y.t_valid.epochSeconds * 1000000 + y.t_valid.microsecond
                                           ELSE datetime({date: ya.beginn, timezone: 'UTC'})
                                                .epochSeconds * 1000000 END <= von
                               }))))
     OR (von < ende AND ab < ende AND (bis IS NULL OR ende < bis))
  RETURN count(*) AS holding
}
WITH r, von, ende WHERE holding = 0
RETURN count(r) AS count,
       collect(r.id + ' v' + toString(r.version) + ' (ends '
               + toString(datetime({epochMillis: ende / 1000}))
               + CASE WHEN ende > von THEN ', nothing holds after it)'
                 ELSE ' before it begins ' + toString(datetime({epochMillis: von / 1000}))
                      + ', where no value begins)' END)[..$samples]
       AS samples;

// name: check_einwertig_overlap
// Item 9: valid time is a partition: no two versions of an einwertig relation (subject
// and pair; a symmetric one from both ends) hold at the same point of valid time as known
// at the same point of system time. Valid intervals are taken as readers take them: from
// the entry of a timeline chain where they start or end with an event, each chain as it
// was known at that point of system time (a later move does not reach back), an end
// before the start being the start; corrected and cancelled values hold nowhere. Two
// versions are compared when both were the record (as the later of them began to be,
// at each move of one of their chains meanwhile, and as the first of them stopped being
// it, or now).
// params: $user_id, $einwertig, $symmetric, $samples
// :param user_id => 'demo-user'
// :param einwertig => ['WOHNT_IN', 'BERUF', 'TYP']
// :param symmetric => ['PARTNER']
// :param samples => 5
MATCH (s:Entitaet)
WHERE $user_id IS NULL OR s.user_id = $user_id
CALL (s) {
  MATCH (s)-[r]-()
  WHERE type(r) IN $einwertig AND (startNode(r) = s OR type(r) IN $symmetric)
    AND coalesce(r.grund, 'abgeloest') = 'abgeloest'
  // Each chain as the list of its entries in order: when each was recorded, its day.
  // (Instants as epoch microseconds: the writer keeps valid times to the microsecond.)
  CALL (r) {
    OPTIONAL MATCH p = (:TimelineEintrag {id: r.timeline_id})-[:NACHFOLGER*0..]->(:TimelineEintrag)
    WITH p ORDER BY length(p) DESC LIMIT 1
    RETURN CASE WHEN p IS NULL THEN null
           ELSE [t IN nodes(p) | [
                  coalesce(t.t_recorded.epochSeconds * 1000000 + t.t_recorded.microsecond, 0),
                  datetime({date: t.beginn, timezone: 'Z'}).epochSeconds * 1000000]]
           END AS von_chain
  }
  CALL (r) {
    OPTIONAL MATCH p = (:TimelineEintrag {id: r.timeline_bis})-[:NACHFOLGER*0..]->(:TimelineEintrag)
    WITH p ORDER BY length(p) DESC LIMIT 1
    RETURN CASE WHEN p IS NULL THEN null
           ELSE [t IN nodes(p) | [
                  coalesce(t.t_recorded.epochSeconds * 1000000 + t.t_recorded.microsecond, 0),
                  datetime({date: t.beginn, timezone: 'Z'}).epochSeconds * 1000000]]
           END AS bis_chain
  }
  WITH type(r) AS rel, r.character_id AS c,
       collect({id: r.id, v: r.version,
                t_valid: r.t_valid.epochSeconds * 1000000 + r.t_valid.microsecond,
                t_invalid: r.t_invalid.epochSeconds * 1000000 + r.t_invalid.microsecond,
                von_chain: von_chain, bis_chain: bis_chain,
                rec: r.t_recorded.epochSeconds * 1000000 + r.t_recorded.microsecond,
                exp: coalesce(r.t_expired.epochSeconds * 1000000 + r.t_expired.microsecond,
                         9223372036854775807)}) AS vs
  WHERE size(vs) > 1
  UNWIND vs AS a
  UNWIND vs AS b
  WITH rel, c, a, b
  WHERE (a.id < b.id OR (a.id = b.id AND a.v < b.v))
    AND a.rec < b.exp AND b.rec < a.exp
  // The points of system time: both became the record; each move of one of their
  // chains while both were (a chain state that lasted only between two moves has
  // intervals of its own); the last moment both were.
  WITH rel, c, a, b, CASE WHEN a.rec > b.rec THEN a.rec ELSE b.rec END AS since,
       CASE WHEN a.exp < b.exp THEN a.exp ELSE b.exp END AS until
  UNWIND [[since, true], [until, false]]
         + [e IN coalesce(a.von_chain, []) + coalesce(a.bis_chain, [])
                 + coalesce(b.von_chain, []) + coalesce(b.bis_chain, [])
            WHERE since < e[0] < until | [e[0], true]] AS point
  WITH rel, c, a, b, point[0] AS at, point[1] AS inclusive
  WITH rel, c, a, b, [x IN [a, b] |
         [CASE WHEN x.von_chain IS NULL THEN x.t_valid
               ELSE last([e IN x.von_chain WHERE e[0] < at OR (inclusive AND e[0] = at)])[1] END,
          CASE WHEN x.bis_chain IS NULL THEN x.t_invalid
               ELSE last([e IN x.bis_chain WHERE e[0] < at OR (inclusive AND e[0] = at)])[1] END]
       ] AS iv
  WITH rel, c, a, b, [x IN iv | [x[0], CASE WHEN x[1] IS NULL THEN 9223372036854775807
                                           WHEN x[1] < x[0] THEN x[0] ELSE x[1] END]] AS iv
  WHERE iv[0][0] < iv[0][1] AND iv[1][0] < iv[1][1]
    AND iv[0][0] < iv[1][1] AND iv[1][0] < iv[0][1]
  WITH DISTINCT rel, c, a, b
  RETURN rel, c, a, b
}
RETURN count(*) AS count,
       collect(s.id + ' ' + rel + ' in pair (' + coalesce(s.user_id, '?') + ', '
               + coalesce(c, '?') + '): ' + a.id + ' v' + toString(a.v) + ' and ' + b.id
               + ' v' + toString(b.v))[..$samples] AS samples;

// name: check_einwertig_unique
// Item 2: at most one active fact per (subject, einwertig relation, pair); a symmetric
// einwertig relation (partner) counts in both directions. Samples: entity, relation, pair.
// params: $user_id, $einwertig, $symmetric, $samples
// :param user_id => 'demo-user'
// :param einwertig => ['WOHNT_IN', 'BERUF', 'TYP']
// :param symmetric => ['PARTNER']
// :param samples => 5
MATCH (s:Entitaet)
WHERE $user_id IS NULL OR s.user_id = $user_id
CALL (s) {
  MATCH (s)-[r]-()
  WHERE type(r) IN $einwertig AND r.aktiv = true AND (startNode(r) = s OR type(r) IN $symmetric)
  WITH type(r) AS rel, r.character_id AS character_id, count(r) AS n
  WHERE n > 1
  RETURN rel, character_id, n
}
RETURN count(*) AS count,
       collect(s.id + ' ' + rel + ' in pair (' + coalesce(s.user_id, '?') + ', '
               + coalesce(character_id, '?') + ') (' + toString(n) + ' active)')[..$samples]
       AS samples;

// name: check_duplicate_facts
// Item 2: no two identical active facts (same subject, relation, pair and object: the
// same entity, or a value node with the same wert). For symmetric relations A→B and
// B→A are the same fact (counted once, from the smaller id). Samples: the fact ids.
// params: $user_id, $rel_types, $symmetric, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param symmetric => ['PARTNER']
// :param samples => 5
MATCH (s:Entitaet)
WHERE $user_id IS NULL OR s.user_id = $user_id
CALL (s) {
  MATCH (s)-[r]-(o)
  WHERE type(r) IN $rel_types AND r.aktiv = true
    AND CASE WHEN type(r) IN $symmetric THEN s.id < o.id ELSE startNode(r) = s END
  WITH type(r) AS rel, r.character_id AS character_id,
       CASE WHEN o:Wert THEN o.wert ELSE o END AS objekt,
       collect(coalesce(r.id, elementId(r))) AS ids
  WHERE size(ids) > 1
  RETURN rel, ids
}
RETURN count(*) AS count,
       collect(s.id + ' ' + rel + ': '
               + reduce(t = '', i IN ids | t + CASE t WHEN '' THEN '' ELSE ', ' END + i))[..$samples] AS samples;

// name: check_duplicate_values
// Item 2: no two active values of one subject, relation and pair that differ only in
// case: the writer compares values in lower case ("Schach" and "schach" are one hobby),
// and a store written before that rule may hold both. An import takes them (a backup of
// such a store restores); told again, the value touches one of them, and a correction
// retires both. Samples: the fact ids.
// params: $user_id, $rel_types, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['HOBBY', 'BERUF', 'HAT']
// :param samples => 5
{{ fact_edges }}
  AND r.aktiv = true AND o:Wert AND o.wert IS :: STRING
WITH s, type(r) AS rel, r.character_id AS character_id, toLower(o.wert) AS key,
     collect(DISTINCT o.wert) AS forms, collect(coalesce(r.id, elementId(r))) AS ids
WHERE size(forms) > 1
RETURN count(*) AS count,
       collect(s.id + ' ' + rel + ': '
               + reduce(t = '', i IN ids | t + CASE t WHEN '' THEN '' ELSE ', ' END + i))[..$samples] AS samples;

// name: check_relation_in_canon
// Item 3: every relationship leaving an entity is a fact of a canon relation, and every
// relationship of a canon type leaves an entity (never a timeline entry or a value node).
// params: $user_id, $rel_types, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param samples => 5
CALL () {
  MATCH (s:Entitaet)-[r]->()
  WHERE ($user_id IS NULL OR s.user_id = $user_id) AND NOT type(r) IN $rel_types
  RETURN r
  UNION ALL
  MATCH (x)-[r]->()
  WHERE NOT x:Entitaet AND ($user_id IS NULL OR x.user_id = $user_id) AND type(r) IN $rel_types
  RETURN r
}
RETURN count(r) AS count,
       collect(type(r) + ' ' + coalesce(r.id, elementId(r)))[..$samples] AS samples;

// name: check_relation_form
// Item 3: a fact has the canon's form: a value relation ($value_types) ends at a Wert
// node, an entity relation at an entity.
// params: $user_id, $rel_types, $value_types, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param value_types => ['BERUF', 'TYP', 'IST_EIN', 'HAT']
// :param samples => 5
{{ fact_edges }}
  AND CASE WHEN type(r) IN $value_types THEN NOT o:Wert ELSE NOT o:Entitaet END
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' ' + type(r) + ' → '
               + coalesce(head(labels(o)), 'unlabelled node'))[..$samples] AS samples;

// name: check_wert_nodes
// Item 3: every value node is the object of exactly one value fact (from an entity) and
// has no other edge: never shared, never traversed further. Samples: the value, the ids
// of the facts that end at it (a value node has no id of its own) and its element id.
// params: $user_id, $value_types, $samples
// :param user_id => 'demo-user'
// :param value_types => ['BERUF', 'TYP', 'IST_EIN', 'HAT']
// :param samples => 5
MATCH (w:Wert)
WHERE $user_id IS NULL OR w.user_id = $user_id
WITH w, COUNT { (w)<--() } AS incoming, COUNT { (w)-->() } AS outgoing,
     COUNT { (w)<-[r]-(:Entitaet) WHERE type(r) IN $value_types } AS facts
WHERE NOT (incoming = 1 AND facts = 1 AND outgoing = 0)
WITH w, incoming, outgoing, facts,
     COLLECT { MATCH (w)<-[r]-() RETURN coalesce(toStringOrNull(r.id), type(r)) LIMIT 3 }
       AS named
RETURN count(w) AS count,
       collect(coalesce(left(toStringOrNull(w.wert), 40), valueType(w.wert)) + ' of '
               + CASE WHEN named = [] THEN 'no fact'
                      ELSE reduce(t = '', x IN named | t + CASE t WHEN '' THEN '' ELSE ', '
                                                          END + x) END
               + ' (' + toString(incoming) + ' in, ' + toString(facts)
               + ' facts, ' + toString(outgoing) + ' out; ' + elementId(w) + ')')[..$samples]
       AS samples;

// name: check_nachfolger_unique
// Item 4: a timeline entry has at most one successor and at most one predecessor.
// params: $user_id, $samples
// :param user_id => 'demo-user'
// :param samples => 5
MATCH (t:TimelineEintrag)
WHERE $user_id IS NULL OR t.user_id = $user_id
WITH t, COUNT { (t)-[:NACHFOLGER]->() } AS next, COUNT { (t)<-[:NACHFOLGER]-() } AS prev
WHERE next > 1 OR prev > 1
RETURN count(t) AS count,
       collect(coalesce(t.id, elementId(t)) + ' (' + toString(next) + ' successors, '
               + toString(prev) + ' predecessors)')[..$samples] AS samples;

// name: check_nachfolger_cycles
// Item 4: no NACHFOLGER chain returns to an entry it passed. Samples: entries on a cycle.
// params: $user_id, $samples
// :param user_id => 'demo-user'
// :param samples => 5
MATCH (t:TimelineEintrag)
WHERE ($user_id IS NULL OR t.user_id = $user_id)
  AND EXISTS { (t)-[:NACHFOLGER*1..]->(t) }
RETURN count(t) AS count, collect(coalesce(t.id, elementId(t)))[..$samples] AS samples;

// name: check_timeline_active_end
// Item 4: exactly the end of a chain is active — an entry with a successor is inactive,
// the end is active unless its event was cancelled (abgesagt: then inactive, and it has
// no successor).
// params: $user_id, $samples
// :param user_id => 'demo-user'
// :param samples => 5
MATCH (t:TimelineEintrag)
WHERE $user_id IS NULL OR t.user_id = $user_id
WITH t, EXISTS { (t)-[:NACHFOLGER]->() } AS moved, coalesce(t.abgesagt, false) AS abgesagt
WHERE NOT coalesce(t.aktiv = (NOT moved AND NOT abgesagt), false) OR (moved AND abgesagt)
RETURN count(t) AS count,
       collect(coalesce(t.id, elementId(t)) + ' (aktiv ' + coalesce(toString(t.aktiv), 'null')
               + CASE WHEN moved THEN ', has a successor' ELSE ', chain end' END
               + CASE WHEN abgesagt THEN ', abgesagt)' ELSE ')' END)[..$samples] AS samples;

// name: check_timeline_references
// Item 4: every timeline_id (and timeline_bis) on a fact names an existing first entry
// (one without a predecessor) of the fact's own pair; and a fact valid from an event
// starts (`t_valid`) on a day of that event's chain: the writer records each version
// from the day its chain has then (the start of that day, UTC), and a move keeps the
// day it replaced in the chain. (A stranger pointed a fact at another event of the
// pair by hand: it passed, and the history read "20. Dezember bis 20. Dezember".) A
// time of the wrong type is fact_fields' finding.
// params: $user_id, $rel_types, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param samples => 5
{{ fact_edges }}
  AND (r.timeline_id IS NOT NULL OR r.timeline_bis IS NOT NULL)
UNWIND [ref IN [r.timeline_id, r.timeline_bis] WHERE ref IS NOT NULL] AS ref
OPTIONAL MATCH (t:TimelineEintrag {id: ref})
WITH s, r, ref, t,
     ref = r.timeline_id AND t IS NOT NULL AND r.t_valid IS :: ZONED DATETIME
     AND NOT EXISTS {
       MATCH (t)-[:NACHFOLGER*0..]->(c:TimelineEintrag)
       // (as instants: two DateTimes of two zones that name one instant are not equal)
       WHERE c.beginn IS :: DATE AND r.t_valid.nanosecond = 0
         AND datetime({date: c.beginn, timezone: 'UTC'}).epochSeconds = r.t_valid.epochSeconds
     } AS elsewhere
WHERE t IS NULL
   OR NOT coalesce(t.user_id = s.user_id AND t.character_id = r.character_id, false)
   OR EXISTS { (:TimelineEintrag)-[:NACHFOLGER]->(t) }
   OR elsewhere
RETURN count(*) AS count,
       collect(coalesce(r.id, elementId(r)) + ' → ' + toString(ref)
               + CASE WHEN t IS NULL THEN ' (no such entry)'
                      WHEN elsewhere THEN ' (starts ' + toString(r.t_valid)
                                          + ', on no day of that chain)'
                      ELSE '' END)[..$samples] AS samples;

// name: check_timeline_cancelled
// Item 4: no active fact rests on a cancelled event: a cancel takes back every fact the
// event's chain caused (they are corrected, grund 'abgesagt'), so none of them holds on.
// params: $user_id, $rel_types, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param samples => 5
{{ fact_edges }}
  AND r.aktiv = true AND r.timeline_id IS NOT NULL
MATCH (:TimelineEintrag {id: r.timeline_id})-[:NACHFOLGER*0..]->(end:TimelineEintrag)
WHERE NOT (end)-[:NACHFOLGER]->() AND end.abgesagt = true
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' → ' + r.timeline_id + ' (cancelled '
               + coalesce(toString(end.abgesagt_am), '?') + ')')[..$samples] AS samples;

// name: check_timeline_person
// Item 4: an entry names at most one person (BETRIFFT), and a moved entry's successor
// the same person as the entry it follows (a move copies the link). An entry naming two
// is listed once per person by `kg timeline` and carries both into every move.
// params: $user_id, $samples
// :param user_id => 'demo-user'
// :param samples => 5
MATCH (t:TimelineEintrag)
WHERE $user_id IS NULL OR t.user_id = $user_id
WITH t, COLLECT { MATCH (t)-[:BETRIFFT]->(x) RETURN x } AS named
WITH t, named, COLLECT {
       MATCH (prev:TimelineEintrag)-[:NACHFOLGER]->(t)
       WHERE COLLECT { MATCH (prev)-[:BETRIFFT]->(y) RETURN y } <> named
       RETURN prev } AS other
WHERE size(named) > 1 OR other <> []
RETURN count(t) AS count,
       collect(coalesce(t.id, elementId(t)) + CASE WHEN size(named) > 1
               THEN ' (names ' + toString(size(named)) + ')'
               ELSE ' (names another than the entry it follows)' END)[..$samples]
       AS samples;

// name: check_ereignis_person
// Item 4: an event of a person (typ ereignis) names that person (BETRIFFT, contract rule
// 7). The library refuses to add one without; an older version took it (`kg timeline
// add --typ ereignis` without --betrifft), and an import takes such an entry (a backup
// of such a store restores). `kg timeline link` names its person (a cancel would take
// back the facts valid from it).
// params: $user_id, $samples
// :param user_id => 'demo-user'
// :param samples => 5
MATCH (t:TimelineEintrag)
WHERE ($user_id IS NULL OR t.user_id = $user_id) AND t.typ = 'ereignis'
  AND NOT EXISTS { (t)-[:BETRIFFT]->(:Entitaet) }
RETURN count(t) AS count,
       collect(coalesce(t.id, elementId(t)) + ' (' + coalesce(toString(t.titel), '?')
               + ')')[..$samples] AS samples;

// name: check_timeline_system_time
// Item 9: the timeline's own record of system time, which as-of reads follow: no entry
// recorded (t_recorded) after now; a moved entry's successor recorded after it, and the
// entry replaced (ersetzt_am) when it was (not before it was recorded, and as its
// successor was recorded, within a second); a cancelled one
// cancelled (abgesagt_am) after it was recorded and not after now. "Now" is the clock as
// each row is read, with a second's grace: a check that runs while orders commit sees
// them. (Entries of a store from before system time was kept carry neither t_recorded
// nor ersetzt_am, and moves made then set the two a few microseconds apart: neither is
// a violation.)
// params: $user_id, $samples
// :param user_id => 'demo-user'
// :param samples => 5
MATCH (t:TimelineEintrag)
WHERE $user_id IS NULL OR t.user_id = $user_id
OPTIONAL MATCH (t)-[:NACHFOLGER]->(n:TimelineEintrag)
WITH t, n,
     CASE
       WHEN t.t_recorded > datetime.realtime() + duration('PT1S') THEN 'recorded in the future'
       WHEN n IS NOT NULL AND t.ersetzt_am IS NULL AND n.t_recorded IS NOT NULL
         THEN 'moved, no ersetzt_am'
       WHEN n IS NOT NULL AND n.t_recorded IS NULL AND t.ersetzt_am IS NOT NULL
         THEN 'successor without t_recorded'
       WHEN n IS NOT NULL AND n.t_recorded <= t.t_recorded
         THEN 'successor recorded before it'
       WHEN n IS NOT NULL AND t.ersetzt_am < t.t_recorded
         THEN 'replaced before it was recorded'
       WHEN n IS NOT NULL
            AND abs(t.ersetzt_am.epochMillis - n.t_recorded.epochMillis) > 1000
         THEN 'replaced at ' + toString(t.ersetzt_am) + ', its successor recorded at '
              + toString(n.t_recorded)
       WHEN n IS NULL AND t.ersetzt_am IS NOT NULL THEN 'ersetzt_am without a successor'
       WHEN coalesce(t.abgesagt, false)
            AND NOT coalesce(coalesce(t.t_recorded, t.abgesagt_am) <= t.abgesagt_am
                             <= datetime.realtime() + duration('PT1S'), false)
         THEN 'cancelled at ' + coalesce(toString(t.abgesagt_am), 'no time')
     END AS why
WHERE why IS NOT NULL
RETURN count(t) AS count,
       collect(coalesce(t.id, elementId(t)) + ' (' + why + ')')[..$samples] AS samples;

// name: check_one_user_per_fact
// Item 5: no fact links entities of two different users: the fact's user_id, its
// subject's and its object's (entity or value node) are the same. Scoped to a user,
// also the facts of other users' entities that end at one of the user's entities: they
// would show in the user's Mappen. (A value node has one fact, found from its subject.)
// params: $user_id, $rel_types, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param samples => 5
CALL () {
  {{ fact_edges }}
    AND NOT coalesce(r.user_id = s.user_id AND o.user_id = s.user_id, false)
  RETURN s, r, o
  UNION
  MATCH (o:Entitaet {user_id: $user_id})<-[r]-(s)
  WHERE type(r) IN $rel_types
    AND coalesce(s.user_id <> $user_id, true)
  RETURN s, r, o
}
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' (fact of '
               + coalesce(toStringOrNull(r.user_id), valueType(r.user_id)) + ': '
               + coalesce(toStringOrNull(s.user_id), '?') + ' → '
               + coalesce(toStringOrNull(o.user_id), '?') + ')')[..$samples] AS samples;

// name: check_timeline_pair
// Item 5: NACHFOLGER joins entries of one pair (both directions are checked) and
// BETRIFFT joins an entry to an entity of the same user.
// params: $user_id, $samples
// :param user_id => 'demo-user'
// :param samples => 5
MATCH (t:TimelineEintrag)
WHERE $user_id IS NULL OR t.user_id = $user_id
CALL (t) {
  MATCH (t)-[l:NACHFOLGER]-(x)
  WHERE NOT coalesce(x:TimelineEintrag AND x.user_id = t.user_id
                     AND x.character_id = t.character_id, false)
  RETURN l
  UNION ALL
  MATCH (t)-[l:BETRIFFT]->(x)
  WHERE NOT coalesce(x:Entitaet AND x.user_id = t.user_id, false)
  RETURN l
}
RETURN count(l) AS count,
       collect(coalesce(t.id, elementId(t)) + ' ' + type(l))[..$samples] AS samples;

// name: check_pair_ids
// Item 5: the ids that name a pair (a user's, a character's) on entities, timeline
// entries, orders and lock nodes are ids as an order's are: not empty, without control
// characters, without whitespace at either end ($spaces, `kg.check.SPACES`: no surface
// reaches "nova ", and an export writes it as "nova"), at most $max_id characters (a pair
// named by an empty id or a line break could not be exported, nor told apart). A fact's
// ids are fact_fields'.
// params: $user_id, $max_id, $spaces, $samples
// :param user_id => 'demo-user'
// :param max_id => 200
// :param spaces => [' ', '\t', '\n', '\u00a0']
// :param samples => 5
MATCH (n)
WHERE (n:Entitaet OR n:TimelineEintrag OR n:Auftrag)
  AND ($user_id IS NULL OR n.user_id = $user_id)
   OR n:Nutzer AND ($user_id IS NULL OR n.id = $user_id)
WITH n, CASE WHEN n:Nutzer THEN [n.id] ELSE [n.user_id, n.character_id] END AS ids,
     CASE WHEN n:Entitaet THEN 1 ELSE 2 END AS wanted
WITH n, [x IN ids[..wanted] WHERE NOT coalesce(
            x IS :: STRING AND size(trim(x)) > 0 AND size(x) <= $max_id
            AND NOT x =~ '(?s).*\\p{Cc}.*'
            AND NOT (left(x, 1) IN $spaces OR right(x, 1) IN $spaces), false)] AS bad
WHERE bad <> []
RETURN count(n) AS count,
       collect(labels(n)[0] + ' ' + coalesce(n.id, elementId(n)) + ' ('
               + reduce(t = '', x IN bad | t + CASE t WHEN '' THEN '' ELSE ', ' END
                        + coalesce(left(toString(x), 20), 'null')) + ')')[..$samples]
       AS samples;

// name: check_table_labels
// Item 7, the decay convention's §4 table for node labels: per label how many nodes,
// which decay properties they carry (keys ending in _decay, and decay_am), the newest
// decay_am, and how many are the target of a relationship.
// params: $user_id
// :param user_id => 'demo-user'
MATCH (n)
WHERE $user_id IS NULL OR n.user_id = $user_id
WITH n, [k IN keys(n) WHERE k ENDS WITH '_decay' OR k = 'decay_am'] AS decay_keys,
     EXISTS { (n)<--() } AS targeted
UNWIND labels(n) AS label
RETURN label, count(n) AS count, collect(DISTINCT decay_keys) AS decay_keys,
       max(CASE WHEN n.decay_am IS :: DATE THEN n.decay_am END) AS newest,
       count(CASE WHEN targeted THEN 1 END) AS targeted
ORDER BY label;

// name: check_table_relationships
// Item 7, the §4 table for relationship types: per type how many, which decay
// properties they carry, the newest decay_am, how many are active, and how many active
// ones carry a strength that no recent run covers: their decay_am is missing or before
// $oldest (the oldest day that still counts as recent), and they were last touched
// before the store's newest run $run (null: there is none). An edge written after the
// run, and a type whose edges are all inactive (never swept again), need no run.
// params: $user_id, $run, $oldest
// :param user_id => 'demo-user'
// :param run => date()
// :param oldest => date() - duration('P2D')
MATCH (x)-[r]->()
WHERE $user_id IS NULL OR x.user_id = $user_id
RETURN type(r) AS type, count(r) AS count,
       collect(DISTINCT [k IN keys(r) WHERE k ENDS WITH '_decay' OR k = 'decay_am']) AS decay_keys,
       max(CASE WHEN r.decay_am IS :: DATE THEN r.decay_am END) AS newest,
       count(CASE WHEN r.aktiv = true THEN 1 END) AS active,
       count(CASE WHEN r.aktiv = true AND r.staerke_decay IS NOT NULL
                   AND NOT coalesce(r.decay_am IS :: DATE AND r.decay_am >= $oldest, false)
                   AND ($run IS NULL
                        OR NOT coalesce(r.last_touched >= datetime({date: $run, timezone: 'UTC'}),
                                        false))
                  THEN 1 END) AS unswept
ORDER BY type;

// name: check_self_loops
// Item 8: no fact is about one entity on both ends (a self-reference splits nothing
// and means nothing; the writer refuses it as selbstbezug).
// params: $user_id, $rel_types, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param samples => 5
{{ fact_edges }}
  AND o = s
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' ' + type(r) + ' on ' + coalesce(s.id, '?'))[..$samples] AS samples;

// name: name_norm_rows
// Item 8: the entities whose stored name_norm may not be their name as the writer
// normalises it (name_judged_in_python), for `kg.check` to compare exactly.
// params: $user_id
// :param user_id => 'demo-user'
MATCH (e:Entitaet)
{{ name_judged_in_python }}
RETURN e.id AS id, e.user_id AS user_id, e.name AS name, e.name_norm AS name_norm;

// name: order_pairs
// Item 1: the pairs (of $user_id; of every user when it is null) that have orders, for
// `kg.check` to read their stored results page by page (order_result_page). One user's
// are an index seek; the whole store's a scan that runs only when $user_id is null.
// params: $user_id
// :param user_id => 'demo-user'
CALL () {
  WITH $user_id AS whole WHERE whole IS NULL
  MATCH (a:Auftrag) WHERE a.user_id IS NOT NULL AND a.character_id IS NOT NULL
  RETURN DISTINCT a.user_id AS user_id, a.character_id AS character_id
  UNION
  MATCH (a:Auftrag)
  WHERE a.user_id = $user_id AND a.character_id IS NOT NULL AND a.id IS NOT NULL
  RETURN DISTINCT a.user_id AS user_id, a.character_id AS character_id
}
RETURN user_id, character_id;

// name: check_order_facts
// Item 1, with order_results: of the facts the stored results of orders of the pair
// ($user_id, $character_id) say they wrote or touched ($refs: per subject the facts
// written at it, subjekt_id, and their ids as the keys of a map, ids), the ones the pair
// has (`found`, by the ref's place `n` in $refs); the caller names the others (deleted,
// or moved to another pair, by hand). Each subject's edges are read once, each looked
// up in the map (no index finds a fact by its id, and `IN` a list of thousands compares
// with each). A purge takes a pair's orders with its facts; a correction or a cancel
// keeps the fact's versions.
// params: $user_id, $character_id, $refs
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param refs => [{subjekt_id: '<id of Lena>', ids: {`<a fact id>`: true}}]
UNWIND range(0, size($refs) - 1) AS n
WITH n, $refs[n] AS ref
OPTIONAL MATCH (s:Entitaet {id: ref.subjekt_id})
WHERE s.user_id = $user_id
CALL (s, ref) {
  OPTIONAL MATCH (s)-[r]-()
  WHERE r.character_id = $character_id AND ref.ids[toStringOrNull(r.id)] IS NOT NULL
  RETURN collect(DISTINCT r.id) AS found
}
RETURN n, found;

// name: order_result_page
// Item 1: up to $limit orders of the pair ($user_id, $character_id) from the id $after
// on (itself included), in the order of the pair key's index, for `kg.check` to read each
// stored result as a replay and an import read it (Cypher cannot parse JSON). A page is
// its own short read: a store keeps an order for every turn of a chat. check_node_fields
// reports a result that is not text, and an id that is not.
// params: $user_id, $character_id, $after, $limit
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param after => ''
// :param limit => 1000
MATCH (a:Auftrag {user_id: $user_id, character_id: $character_id})
WHERE a.id >= $after
WITH a ORDER BY a.user_id, a.character_id, a.id LIMIT $limit
RETURN a.id AS id, a.user_id AS user_id, a.character_id AS character_id,
       a.status AS status, a.anzahl_tripel AS anzahl_tripel, a.ergebnis AS ergebnis;

// name: check_type_contradicts_fact
// Item 8: an entity's type in a pair contradicts none of the facts that stand in that
// pair (active, or superseded from a day ahead and holding on: "noch bis"), within the
// type's span from the read on: the active type, and one that holds now until a type to
// come, as the Mappe reads them. A contradiction is a relation whose subject cannot be
// of that type ($subjekt_typen: rel type → allowed types), the object of a relation
// whose object is another type ($objekt_typ: rel type → type), or a class of another
// type ($klassen: class → type). sonstiges never conflicts. A fact that begins where the
// type has ended, or ends by where it begins (their days: `span_now`), is none: Bello
// is a tier until 2099, when he becomes a car. (The writer checks a type from the
// order's time on, as this does from the read's.) Samples: the type fact and the fact
// it contradicts.
// params: $user_id, $subjekt_typen, $objekt_typ, $klassen, $samples
// :param user_id => 'demo-user'
// :param subjekt_typen => {BERUF: ['person']}
// :param objekt_typ => {WOHNT_IN: 'ort'}
// :param klassen => {hund: 'tier', stadt: 'ort'}
// :param samples => 5
MATCH (e:Entitaet)-[r:TYP]->(tw:Wert)
WHERE ($user_id IS NULL OR e.user_id = $user_id) AND tw.wert <> 'sonstiges'
  AND (r.aktiv OR r.grund = 'abgeloest' AND r.t_expired IS NULL AND
    {{ holds_at_the_read }}
  )
WITH e, r AS t, tw
CALL (e, t, tw) {
  MATCH (e)-[r]->(o)
  WHERE r.character_id = t.character_id AND type(r) IN keys($subjekt_typen)
    AND NOT tw.wert IN $subjekt_typen[type(r)]
    AND
      {{ stands }}
  RETURN r
  UNION
  MATCH (e)<-[r]-(:Entitaet)
  WHERE r.character_id = t.character_id AND type(r) IN keys($objekt_typ)
    AND $objekt_typ[type(r)] <> tw.wert
    AND
      {{ stands }}
  RETURN r
  UNION
  MATCH (e)-[r:IST_EIN]->(w:Wert)
  WHERE r.character_id = t.character_id
    AND $klassen[toLower(trim(w.wert))] IS NOT NULL AND $klassen[toLower(trim(w.wert))] <> tw.wert
    AND
      {{ stands }}
  RETURN r
}
// Only where one is found: the type's span, and the fact's.
CALL (t) {
  WITH t AS r
  {{ span_at_the_read }}
  RETURN CASE WHEN ab > now THEN ab ELSE now END AS t_von, bis AS t_bis
}
WITH t, tw, t_von, t_bis, r AS x
{{ span_now }}
WITH t, tw, x AS r, ab, bis, t_von, t_bis
WHERE coalesce(ab < t_bis, true) AND coalesce(bis > t_von, true)
RETURN count(*) AS count,
       collect(coalesce(t.id, elementId(t)) + ' (' + tw.wert + ') vs ' + type(r) + ' '
               + coalesce(r.id, elementId(r)))[..$samples] AS samples;

// name: check_type_missing
// Item 8: an entity that a fact standing in a pair gives a type (active, or holding on
// until a day ahead: the object of a relation whose object has one, $objekt_typ; the
// subject of one that allows one subject type, $subjekt_typ; a known class of
// `ist_ein`, $klassen) has a specific type in that pair: a current type fact of a value
// other than sonstiges, not squeezed to nothing, at any time (the Mappe reads the first
// before it begins). A type a triple carried in its own `typ` field is what was said
// with the fact, not what it needs, and may be corrected away. A cancel took back the
// type "Kassel ist eine Stadt" of its event gave, beside "Lena wohnt in Kassel", and
// Kassel read sonstiges. The pairs with a type are read first (an entity's few type
// facts), then only its edges of another pair are asked whether they stand. Samples:
// the entity and a fact.
// params: $user_id, $objekt_typ, $subjekt_typ, $klassen, $samples
// :param user_id => 'demo-user'
// :param objekt_typ => {WOHNT_IN: 'ort'}
// :param subjekt_typ => {BERUF: 'person'}
// :param klassen => {hund: 'tier', stadt: 'ort'}
// :param samples => 5
MATCH (e:Entitaet)
WHERE $user_id IS NULL OR e.user_id = $user_id
WITH e, [(e)-[t:TYP]->(w:Wert)
         WHERE t.t_expired IS NULL AND coalesce(t.grund, 'abgeloest') = 'abgeloest'
           AND w.wert <> 'sonstiges'
           AND (t.t_invalid IS NULL OR t.t_invalid > t.t_valid OR t.timeline_bis IS NOT NULL)
         | t.character_id] AS typed
CALL (e, typed) {
  MATCH (e)<-[r]-(:Entitaet)
  WHERE type(r) IN keys($objekt_typ) AND NOT r.character_id IN typed
    AND
      {{ stands }}
  RETURN r
  UNION
  MATCH (e)-[r]->()
  WHERE type(r) IN keys($subjekt_typ) AND NOT r.character_id IN typed
    AND
      {{ stands }}
  RETURN r
  UNION
  MATCH (e)-[r:IST_EIN]->(w:Wert)
  WHERE NOT r.character_id IN typed AND w.wert IS :: STRING
    AND $klassen[toLower(trim(w.wert))] IS NOT NULL
    AND
      {{ stands }}
  RETURN r
}
WITH e, r.character_id AS character_id, min(type(r) + ' ' + coalesce(r.id, elementId(r))) AS fakt
RETURN count(*) AS count,
       collect(coalesce(e.name, e.id, elementId(e)) + ' (no type) vs ' + fakt)[..$samples]
         AS samples;

// name: check_sonstiges_after_type
// Item 8, rule 4 over time: "no specific type yet" never follows a specific type. No
// current `sonstiges` version of an entity's pair that holds somewhere (not taken back,
// not squeezed to nothing) begins where or after a specific type of that pair begins
// (a current version never taken back; one squeezed to nothing counts too: it comes
// before the value that squeezed it), nor is named as the value that follows one
// (`abgeloest_durch`: a type that began within the sonstiges's event's precision, ended
// by it). Days as a reader takes them (`span_now`). "Rex sonstiges" told for the day an
// objekt to come began ended that objekt, and Rex read sonstiges from then. Samples:
// the sonstiges and the type it follows.
// params: $user_id, $samples
// :param user_id => 'demo-user'
// :param samples => 5
MATCH (e:Entitaet)-[x:TYP]->(:Wert {wert: 'sonstiges'})
WHERE ($user_id IS NULL OR e.user_id = $user_id) AND x.t_expired IS NULL
  AND coalesce(x.grund, 'abgeloest') = 'abgeloest'
  AND EXISTS {
    MATCH (e)-[t:TYP]->(w:Wert)
    WHERE t.t_expired IS NULL AND t.character_id = x.character_id AND w.wert <> 'sonstiges'
      AND coalesce(t.grund, 'abgeloest') = 'abgeloest'
  }
{{ span_now }}
WITH e, x, ab, bis
WHERE bis IS NULL OR bis > ab
WITH e, x AS s, ab AS s_ab
MATCH (e)-[x:TYP]->(w:Wert)
WHERE x.t_expired IS NULL AND x.character_id = s.character_id AND w.wert <> 'sonstiges'
  AND coalesce(x.grund, 'abgeloest') = 'abgeloest'
{{ span_now }}
WITH s, s_ab, x AS t, w, ab
WHERE ab <= s_ab
   OR s.id IN CASE WHEN t.abgeloest_durch IS :: LIST<ANY> THEN t.abgeloest_durch ELSE [] END
WITH s, min(w.wert + ' ' + coalesce(t.id, elementId(t))) AS typ
RETURN count(*) AS count,
       collect(coalesce(s.id, elementId(s)) + ' (sonstiges) after ' + typ)[..$samples]
         AS samples;

// fragment: stands
// The fact version `r` stands: active, or a value superseded from a day ahead that holds
// on (`holds_on_from_the_read`).
(r.aktiv OR r.grund = 'abgeloest' AND r.t_expired IS NULL AND
  {{ holds_on_from_the_read }}
)

// name: check_transitive_cycles
// Item 8: no active facts of a transitive relation ($transitive) form a cycle within a
// pair (derivation closes them at read time; a cycle makes a place lie in itself).
// Samples: a fact on a cycle.
// params: $user_id, $transitive, $samples
// :param user_id => 'demo-user'
// :param transitive => ['LIEGT_IN']
// :param samples => 5
MATCH (s:Entitaet)-[r]->(o:Entitaet)
WHERE ($user_id IS NULL OR s.user_id = $user_id) AND type(r) IN $transitive AND r.aktiv
  AND EXISTS {
    MATCH (o) (()-[t]->() WHERE type(t) = type(r) AND t.aktiv
               AND t.character_id = r.character_id)* (s)
  }
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' ' + type(r) + ' ' + coalesce(s.name, '?') + ' → '
               + coalesce(o.name, '?'))[..$samples] AS samples;

// name: check_typ_values
// Item 8: every type fact's value is one of the six types ($typen).
// params: $user_id, $typen, $samples
// :param user_id => 'demo-user'
// :param typen => ['person', 'ort', 'organisation', 'tier', 'objekt', 'sonstiges']
// :param samples => 5
MATCH (s:Entitaet)-[r:TYP]->(w)
WHERE ($user_id IS NULL OR s.user_id = $user_id) AND NOT coalesce(w.wert IN $typen, false)
RETURN count(r) AS count,
       collect(coalesce(r.id, elementId(r)) + ' (typ ' + coalesce(toString(w.wert), 'missing') + ')')[..$samples] AS samples;

// name: check_auftrag_key
// Item 8: an idempotency key (auftrag_id) is used at most once in a pair.
// params: $user_id, $samples
// :param user_id => 'demo-user'
// :param samples => 5
MATCH (a:Auftrag)
WHERE $user_id IS NULL OR a.user_id = $user_id
WITH a.user_id AS user_id, a.character_id AS character_id, a.id AS id, count(*) AS n
WHERE n > 1
RETURN count(*) AS count,
       collect(coalesce(user_id, '?') + '/' + coalesce(character_id, '?') + ' ' + coalesce(toString(id), '?')
               + ' (' + toString(n) + ' orders)')[..$samples] AS samples;

// name: check_decay_state
// Item 6, the decay state of the active fact edges (of one user when $user_id is set).
// The store's newest run is the newer of the newest recorded global sweep (DecayLauf)
// and the newest decay_am of the edges in scope, both up to $day: so a user whose
// edges were all written after today's global sweep has that run too, and the per-user
// and the whole-store check agree. Returns how many edges carry a strength, that run
// (`newest`), how many carry a decay_am after $day (no run can have measured a day to
// come), how many carry a strength no recent run covers (`stale`: decay_am missing or
// before $oldest, last touched before the run), and how many the run missed (last
// touched before its day, yet not swept by it), with a few ids; and the days of
// recorded runs after tomorrow (`runs_ahead`, against the store's clock, not $day, which
// a check of an earlier day sets: no sweep has run on a day to come, and one recorded so
// makes `kg decay run --if-due` skip that day as done; a day's grace, as the import
// gives a decay_am, for a host whose clock runs ahead at midnight).
// params: $user_id, $rel_types, $day, $oldest, $samples
// :param user_id => 'demo-user'
// :param rel_types => ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN']
// :param day => date()
// :param oldest => date() - duration('P2D')
// :param samples => 5
CALL () {
  OPTIONAL MATCH (d:DecayLauf)
  WHERE d.tag IS :: DATE
  RETURN max(CASE WHEN d.tag <= $day THEN d.tag END) AS swept,
         [t IN collect(d.tag) WHERE t > date.realtime('UTC') + duration('P1D')] AS runs_ahead
}
{{ active_edge_decay }}
WITH active, with_strength, future, runs_ahead,
     CASE WHEN swept IS NULL OR (newest IS NOT NULL AND newest > swept)
          THEN newest ELSE swept END AS newest
CALL (newest) {
  {{ fact_edges }}
    AND r.aktiv = true AND r.staerke_decay IS NOT NULL
    AND NOT coalesce(r.decay_am IS :: DATE AND r.decay_am >= $oldest, false)
    AND (newest IS NULL
         OR NOT coalesce(r.last_touched >= datetime({date: newest, timezone: 'UTC'}), false))
  RETURN count(r) AS stale
}
{{ missed_by_newest_run }}
RETURN active, with_strength, newest, future, stale, missed, samples, runs_ahead;

// name: check_user_held
// Whether the store holds anything of $user_id: an entity (every fact leaves one), a
// timeline entry, an order or the lock node — what a purge of the user deletes. A check
// of a user with none of them proves nothing (a typo in the id, most likely) and is
// refused, so that a job with a wrong --user does not report clean forever.
// params: $user_id
// :param user_id => 'demo-user'
RETURN (
  {{ user_has_data }}
) OR EXISTS { MATCH (:Nutzer {id: $user_id}) } AS held;
