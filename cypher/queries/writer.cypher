// fragment: user_clock
// Take the user's lock node and the store's clock `jetzt`: the server's clock once the
// lock is held, or just after the user's last write if that is later (`uhr`), so it
// strictly increases per user. The counter's write comes first: Cypher takes a write
// lock before it reads a property that a SET depends on directly, so `uhr` is read under
// the lock. (Read before it, a transaction waiting for the lock kept the `uhr` of before
// the write it waited for, and recorded its versions earlier than that write's.) The
// clock too is read after the lock (`datetime.realtime()`, evaluated as the row passes,
// after the SET): the transaction's clock (`datetime.transaction()`) is its start, and
// an order that had waited for the lock was recorded before reads made while it waited,
// which had not seen it ("as known at" such a read then answered otherwise).
// A purge deletes the lock node in the transaction that holds its lock: a transaction
// that had found the node and waited for its lock holds, once the purge commits, the
// lock of a node that is gone, which serialises nothing. Its clock is then null (the
// node found by the id is not the one locked), and the library runs it again
// (kg.db.LockLost), on a lock node that is there.
MERGE (lock:Nutzer {id: $user_id})
SET lock.writes = coalesce(lock.writes, 0) + 1
{{ clock_tick }}
WITH lock, CASE WHEN COUNT { (live:Nutzer {id: $user_id}) WHERE live = lock } = 1
                THEN jetzt END AS jetzt

// fragment: clock_tick
// The user's clock on the lock node `lock`, whose lock the transaction holds: the
// server's clock now, or just after the user's last write if that is later (`uhr`), so
// it strictly increases per user; `jetzt`, and stored as the new `uhr`.
WITH lock, datetime.realtime() AS clock
WITH lock, CASE WHEN lock.uhr IS NOT NULL AND lock.uhr >= clock
                THEN lock.uhr + duration({nanoseconds: 1000}) ELSE clock END AS jetzt
SET lock.uhr = jetzt

// fragment: type_in_pair
// The type of the entity `e` in the pair (`typ`, null when it has none): the value of
// its TYP fact of $character_id that holds now, and before the first value the first.
// (A type told to begin on a day ahead is the active version; the one before it holds
// until that day.) The first is the earliest that holds somewhere (a version squeezed
// to nothing never held). The Mappe reads its current type so too.
CALL (e) {
  OPTIONAL MATCH (e)-[r:TYP]->(w:Wert)
  WHERE r.character_id = $character_id AND r.t_expired IS NULL
    AND coalesce(r.grund, 'abgeloest') = 'abgeloest'
  OPTIONAL CALL (r) {
    {{ span_at_the_read }}
    RETURN ab, bis, now
  }
  WITH w, r, ab, coalesce(ab <= now AND (bis IS NULL OR now < bis), false) AS held,
       coalesce(bis <= ab, false) AS leer
  ORDER BY held DESC, leer, ab, r.t_valid, r.aktiv DESC
  RETURN w.wert AS typ LIMIT 1
}

// fragment: chain_days
// The days the event chains of the fact version `r` have now, as stored (null without
// a chain): `ab_tag`, of the active end of the chain it begins with (`timeline_id`),
// and `bis_tag`, of the chain of the value that follows it (`timeline_bis`).
OPTIONAL CALL (r) {
  WITH r WHERE r.timeline_id IS NOT NULL
  MATCH (:TimelineEintrag {id: r.timeline_id})-[:NACHFOLGER*0..]->(ta:TimelineEintrag)
  WHERE NOT (ta)-[:NACHFOLGER]->(:TimelineEintrag)
  RETURN ta.beginn AS ab_tag LIMIT 1
}
OPTIONAL CALL (r) {
  WITH r WHERE r.timeline_bis IS NOT NULL
  MATCH (:TimelineEintrag {id: r.timeline_bis})-[:NACHFOLGER*0..]->(tb:TimelineEintrag)
  WHERE NOT (tb)-[:NACHFOLGER]->(:TimelineEintrag)
  RETURN tb.beginn AS bis_tag LIMIT 1
}

// fragment: typed_span
// Where a fact `r` that binds a type begins and ends: `ab_tag` and `bis_tag`, the days
// of its events' chains as they are now (`chain_days`), and `t_valid` and `t_invalid`
// in epoch microseconds (a value of another type, an edit by hand, as it is). The type
// checks compare a type with the facts within its span: Bello is a tier until he
// becomes a car, and Lena's home in Kassel until 2098 does not contradict Kassel the
// organisation from 2099.
{{ chain_days }}
WITH r, o, ab_tag, bis_tag,
     CASE WHEN r.t_valid IS :: ZONED DATETIME
       THEN r.t_valid.epochSeconds * 1000000 + r.t_valid.microsecond
       ELSE r.t_valid END AS t_valid,
     CASE WHEN r.t_invalid IS :: ZONED DATETIME
       THEN r.t_invalid.epochSeconds * 1000000 + r.t_invalid.microsecond
       ELSE r.t_invalid END AS t_invalid

// fragment: holds_at_the_read
// The fact version `r` of the current record holds at the instant of the read
// (`span_at_the_read`): a value squeezed to nothing never holds.
EXISTS {
  {{ span_at_the_read }}
  WHERE ab <= now AND (bis IS NULL OR now < bis)
}

// fragment: holds_on_from_the_read
// The fact version `r` of the current record holds at the instant of the read or later
// (`span_at_the_read`): not ended by then, and not squeezed to nothing.
EXISTS {
  {{ span_at_the_read }}
  WHERE ab IS NOT NULL AND (bis IS NULL OR (ab < bis AND now < bis))
}

// fragment: span_at_the_read
// The start `ab` and end `bis` of the fact version `r` in epoch microseconds, each from
// its event's chain as it is now (the active entry's day, UTC), else from its valid
// time (the end only of a superseded value; an end before the start is the start), and
// the instant of the read (`now`, `datetime.realtime()`). A day or an instant stored
// as something else reads as none, so the version holds nowhere here; the writer and
// the reader name it. (`span_now` of kg check and `span_read` of the Mappe are the
// same rule, with their guards and chains.)
OPTIONAL MATCH (:TimelineEintrag {id: r.timeline_id})-[:NACHFOLGER*0..]->(ta:TimelineEintrag)
WHERE NOT (ta)-[:NACHFOLGER]->(:TimelineEintrag)
OPTIONAL MATCH (:TimelineEintrag {id: r.timeline_bis})-[:NACHFOLGER*0..]->(tb:TimelineEintrag)
WHERE NOT (tb)-[:NACHFOLGER]->(:TimelineEintrag)
WITH CASE WHEN ta IS NULL AND r.t_valid IS :: ZONED DATETIME NOT NULL
            THEN r.t_valid.epochSeconds * 1000000 + r.t_valid.microsecond
          WHEN ta.beginn IS :: DATE NOT NULL
            THEN datetime({date: ta.beginn, timezone: 'UTC'}).epochSeconds * 1000000
          END AS ab,
     CASE WHEN tb.beginn IS :: DATE NOT NULL
            THEN datetime({date: tb.beginn, timezone: 'UTC'}).epochSeconds * 1000000
          WHEN tb IS NULL AND r.grund = 'abgeloest' AND r.t_invalid IS :: ZONED DATETIME NOT NULL
            THEN r.t_invalid.epochSeconds * 1000000 + r.t_invalid.microsecond
          END AS ende,
     datetime.realtime() AS clock
WITH ab, CASE WHEN ende < ab THEN ab ELSE ende END AS bis,
     clock.epochSeconds * 1000000 + clock.microsecond AS now

// fragment: namesake_merkmale
// What tells the entity `e` apart from its namesakes (`merkmale`), as the Mappe would
// show it: its three facts in the pair touched last of those the Mappe reads (active,
// not resting: staerke_decay at least $schwelle), its type left out (a candidate
// carries it as `typ`).
MATCH (e)-[r]-(o)
WHERE r.character_id = $character_id AND r.aktiv AND type(r) <> 'TYP'
  AND r.staerke_decay >= $schwelle
WITH r, o ORDER BY r.last_touched DESC LIMIT 3
RETURN collect({rel: type(r), out: startNode(r) = e, other: coalesce(o.name, o.wert)}) AS merkmale

// fragment: order_names_the_other_end
// Of the order's relations not in $refs.whole_types (those are the einwertig ones and
// TYP, whose values the plan ends, and ist_ein, whose classes imply types), a fact `r`
// at the entity whose other end `o` the order names (by normalised name, id or value):
// the only ones the plan looks at (a fact that says the same is touched, not written
// again; values compare in lower case, and $refs.werte holds each value as written and
// in lower case, composed, as stored, and decomposed, as a value stored before may be:
// kg.models.value_key; a value is found by either, as Neo4j's toLower leaves some
// letters of Unicode 14 as they are). What the type checks need beyond them comes with
// `typed`, below. A person's hundred hobbies are not read for an order that names one.
// Everything with $refs.all_history (corrections, events of referenced chains).
AND (type(r) IN $refs.whole_types OR $refs.all_history OR o.name_norm IN $refs.names
     OR o.id IN $refs.ids OR o.wert IN $refs.werte OR toLower(o.wert) IN $refs.werte)

// fragment: temporal_props
// A new fact version `r` written from `f.props`: its instants and its day come apart in
// `f.zeit` as ISO text (cheaper for the writer to pack than temporal values) and are
// stored as the values they name. A value that is not an instant or a day where one
// belongs (an edit by hand) stays in `f.props` as it was, and is carried forward.
SET r.t_valid = coalesce(datetime(f.zeit.t_valid), r.t_valid),
    r.t_invalid = coalesce(datetime(f.zeit.t_invalid), r.t_invalid),
    r.t_expired = coalesce(datetime(f.zeit.t_expired), r.t_expired),
    r.last_touched = coalesce(datetime(f.zeit.last_touched), r.last_touched),
    r.decay_am = coalesce(date(f.zeit.decay_am), r.decay_am)

// name: user_lock
// Serialise the writes of one user: the first statement takes the user's lock node for
// the rest of the transaction, so entity creation by name, einwertig supersession and
// the idempotency check cannot race. Returns the store's clock for the transaction
// (`jetzt`): the system time of everything it records. It is the server's clock once the
// lock is held, strictly increasing per user (so two writes of one user never share an
// instant).
// params: $user_id
// :param user_id => 'demo-user'
{{ user_clock }}
RETURN jetzt;

// name: entity_candidates
// The user's entities with this normalised name, with their type in the pair and a
// few facts that tell them apart (namesake_merkmale).
// params: $user_id, $character_id, $name_norm, $schwelle
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param name_norm => 'lena'
// :param schwelle => 0.1
MATCH (e:Entitaet {user_id: $user_id, name_norm: $name_norm})
{{ type_in_pair }}
CALL (e) {
  {{ namesake_merkmale }}
}
RETURN e.id AS id, e.name AS name, coalesce(typ, 'sonstiges') AS typ, merkmale
ORDER BY e.erstellt, e.id;

// name: entity_by_id
// One entity of the user by id, with its type in the pair (nothing for a foreign id).
// params: $user_id, $character_id, $entity_id
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param entity_id => '<id of Lena>'
MATCH (e:Entitaet {id: $entity_id})
WHERE e.user_id = $user_id
{{ type_in_pair }}
RETURN e.id AS id, e.name AS name, coalesce(typ, 'sonstiges') AS typ;

// name: order_state
// An order's first query: take the user's lock (so entity creation by name, einwertig
// supersession and the replay check cannot race) and the store's clock, find a
// replayed order, and read everything the triples depend on: the user's entities by
// normalised name and by id, each with its type in the pair, a few facts that tell it
// apart, and the current versions (t_expired null) of the pair's facts of the relations
// involved: the active ones, and for relations whose valid time is a partition
// ($refs.history_types: einwertig and corrected relations) the ended ones too, each with
// the dates of the timeline chains it starts and ends with. Plus the timeline chains the
// order references. The writer plans the order against this in Python and writes it
// with order_apply.
// The order's own lists and values come in one map, $refs: the server keys a cached
// plan by the type of each parameter, and types an empty list apart from a list of
// texts (and null apart from a datetime), so with them apart an order that left one
// list empty where the last had filled it was planned anew (~1 s). A map is one type
// whatever it holds: one plan for every order.
// The idempotency key is the pair's: another pair's order of the same auftrag_id is
// never found. For the type checks, each entity brings a few of its active facts in
// the pair per relation that says something about its type ($typed_out: as subject,
// $typed_in: as object); a few per relation type, so a hub's edges are never all
// walked. For the cycle check of transitive relations ($trans_types), the active
// transitive facts reachable from the ends of the order's transitive triples
// ($refs.trans_names, $refs.trans_ids; empty for an order without transitive triples).
// Past values that ended before the order's earliest valid start are not read: the
// plan never looks at them (one that ends exactly there is read: a partner squeezed to
// nothing there is followed by the order's new value too). That start is the earliest
// of $refs.since (the order's `zeitpunkt` and event days, null if it has none) and the
// store's clock (the valid time of everything else); with $refs.all_history
// (corrections, events of referenced chains) all are read. So a long history of
// superseded values costs the walk over its relationships, never reading them out. Of
// the other relations (not in $refs.whole_types) only the facts whose other end the
// order names are read (see order_names_the_other_end).
// params: $user_id, $auftrag_id, $character_id, $refs, $typed_out, $typed_in, $trans_types, $schwelle
// :param user_id => 'demo-user'
// :param auftrag_id => 'turn-1'
// :param character_id => 'nova'
// :param refs => {names: ['lena', 'kassel'], ids: [], werte: ['ärztin'], whole_types: ['TYP', 'WOHNT_IN'], rel_types: ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN'], incoming_types: ['PARTNER'], far_types: [], follow_types: ['PARTNER'], history_types: ['TYP', 'WOHNT_IN'], since: datetime() - duration('P1D'), all_history: false, timeline_ids: [], claims: {lena: ['person'], kassel: ['ort']}, trans_names: [], trans_ids: []}
// :param typed_out => ['BERUF']
// :param typed_in => ['WOHNT_IN']
// :param trans_types => ['LIEGT_IN']
// :param schwelle => 0.1
{{ user_clock }}
{{ order_state_reads }}

// name: event_state
// The state of an order the timeline gives the writer (a cancel's, a move's), read in
// the transaction that took the user's lock and its clock ($jetzt) first: order_state
// without taking the lock a second time. (Taken a second time in one transaction
// while other writers of the user waited for it, Neo4j reported a deadlock and failed
// one of them: concurrent cancels of one user were retried, and the driver said so on
// stderr.)
// params: $user_id, $auftrag_id, $character_id, $refs, $typed_out, $typed_in, $trans_types, $jetzt, $schwelle
// :param user_id => 'demo-user'
// :param auftrag_id => 'turn-1'
// :param character_id => 'nova'
// :param refs => {names: ['lena', 'kassel'], ids: [], werte: ['ärztin'], whole_types: ['TYP', 'WOHNT_IN'], rel_types: ['WOHNT_IN', 'BERUF', 'TYP', 'LIEGT_IN'], incoming_types: ['PARTNER'], far_types: [], follow_types: ['PARTNER'], history_types: ['TYP', 'WOHNT_IN'], since: datetime() - duration('P1D'), all_history: false, timeline_ids: [], claims: {lena: ['person'], kassel: ['ort']}, trans_names: [], trans_ids: []}
// :param typed_out => ['BERUF']
// :param typed_in => ['WOHNT_IN']
// :param trans_types => ['LIEGT_IN']
// :param schwelle => 0.1
// :param jetzt => datetime()
WITH $jetzt AS jetzt
{{ order_state_reads }}

// fragment: order_state_reads
// What order_state reads once it holds the user's lock and its clock (`jetzt`).
WITH jetzt, CASE WHEN $refs.all_history THEN null
                 WHEN $refs.since IS NOT NULL AND $refs.since < jetzt THEN $refs.since
                 ELSE jetzt END AS since
OPTIONAL MATCH (a:Auftrag {user_id: $user_id, character_id: $character_id, id: $auftrag_id})
CALL (since) {
  // The indexes named: the server plans without the lists' sizes (the launcher's
  // setting), and on a small store it would walk all of the user's entities instead.
  CALL () {
    MATCH (e:Entitaet) USING INDEX e:Entitaet(user_id, name_norm)
    WHERE e.user_id = $user_id AND e.name_norm IN $refs.names
    RETURN e
    UNION
    MATCH (e:Entitaet) USING INDEX e:Entitaet(id)
    WHERE e.id IN $refs.ids AND e.user_id = $user_id
    RETURN e
  }
  {{ type_in_pair }}
  // What tells namesakes apart is only needed when a name is ambiguous (and a hub
  // entity would otherwise sort all its edges for nothing).
  // (The count once per entity, before its edges are walked at all; its index named,
  // as on an empty store the planner sought all of the user's entities instead.)
  CALL (e) {
    WITH e WHERE COUNT {
      MATCH (n:Entitaet) USING INDEX n:Entitaet(user_id, name_norm)
      WHERE n.user_id = $user_id AND n.name_norm = e.name_norm
    } > 1
    {{ namesake_merkmale }}
  }
  // Outgoing facts, and incoming ones only for the symmetric relations
  // $refs.incoming_types (those whose other end the order may not name, see
  // Refs.incoming_types): a hub's many incoming edges are never walked for nothing.
  CALL (e, since) {
    OPTIONAL MATCH (e)-[r]->(o)
    WHERE type(r) IN $refs.rel_types AND r.character_id = $character_id
      AND r.t_expired IS NULL
      AND (r.aktiv OR (type(r) IN $refs.history_types AND (since IS NULL
           OR r.timeline_bis IS NOT NULL OR r.t_invalid >= since)))
      {{ order_names_the_other_end }}
    RETURN collect({r: r, start_id: e.id, end_id: o.id, wert: o.wert}) AS outgoing
  }
  CALL (e, since) {
    OPTIONAL MATCH (e)<-[r]-(o)
    WHERE size($refs.incoming_types) > 0 AND type(r) IN $refs.incoming_types
      AND r.character_id = $character_id AND r.t_expired IS NULL
      AND (r.aktiv OR (type(r) IN $refs.history_types AND (since IS NULL
           OR r.timeline_bis IS NOT NULL OR r.t_invalid >= since)))
      {{ order_names_the_other_end }}
    RETURN collect({r: r, start_id: o.id, end_id: e.id, wert: null}) AS incoming
  }
  // A correction or a cancel may reinstate a fact of a symmetric einwertig relation
  // ($refs.far_types, see Refs.far_types) that ends at an entity the order does not name;
  // its value then holds up to that entity's next value too, so the facts of that
  // relation at the far end of each such fact are read as well.
  // (Nothing is walked for an order without: most orders.)
  CALL (e, outgoing, incoming) {
    WITH e, outgoing, incoming WHERE size($refs.far_types) > 0
    UNWIND outgoing + incoming AS near
    WITH near.r AS r0 WHERE r0 IS NOT NULL AND type(r0) IN $refs.far_types
    WITH DISTINCT r0, CASE WHEN startNode(r0) = e THEN endNode(r0) ELSE startNode(r0) END AS far
    MATCH (far)-[r]-(o)
    WHERE type(r) = type(r0) AND r <> r0 AND r.character_id = $character_id
      AND r.t_expired IS NULL
    WITH DISTINCT r
    RETURN collect({r: r, start_id: startNode(r).id, end_id: endNode(r).id, wert: null}) AS far
  }
  // A value of a symmetric einwertig relation ($refs.follow_types, see
  // Refs.follow_types) squeezed to nothing follows a new value only if the values that
  // squeezed it at this end begin after it; those may have ended before `since` and
  // not been read, so the facts its `abgeloest_durch` names at this entity are read
  // too. (The entity's edges
  // are walked again only when a fact read there names one that was not read: a partner
  // value whose follower ended before `since`. An order without partners walks nothing.)
  CALL (e, outgoing, incoming) {
    WITH e, outgoing, incoming WHERE size($refs.follow_types) > 0
    UNWIND outgoing + incoming AS near
    WITH e, near.r AS r0 WHERE r0 IS NOT NULL
    WITH e, collect(r0.id) AS seen,
         collect(CASE WHEN type(r0) IN $refs.follow_types THEN r0.abgeloest_durch END)
           AS named
    WITH e, seen, [fid IN reduce(acc = [], ids IN named | acc + ids)
                   WHERE NOT fid IN seen] AS missing
    WHERE size(missing) > 0
    MATCH (e)-[r]-(o)
    WHERE type(r) IN $refs.follow_types AND r.id IN missing AND r.character_id = $character_id
      AND r.t_expired IS NULL
    RETURN collect({r: r, start_id: startNode(r).id, end_id: endNode(r).id, wert: null})
           AS followers
  }
  CALL (outgoing, incoming, far, followers) {
    UNWIND outgoing + incoming + far + followers AS f
    WITH f, f.r AS r WHERE r IS NOT NULL
    {{ chain_days }}
    // Instants as epoch microseconds, the day of the last decay as yyyymmdd: the
    // driver's temporal types cost the writer more CPU to decode than the rest of the
    // order. A value of another type (an edit by hand) comes as it is.
    RETURN collect({rel: type(r), eid: elementId(r),
                    props: r {.*,
                      t_valid: CASE WHEN r.t_valid IS :: ZONED DATETIME
                        THEN r.t_valid.epochSeconds * 1000000 + r.t_valid.microsecond
                        ELSE r.t_valid END,
                      t_invalid: CASE WHEN r.t_invalid IS :: ZONED DATETIME
                        THEN r.t_invalid.epochSeconds * 1000000 + r.t_invalid.microsecond
                        ELSE r.t_invalid END,
                      t_recorded: CASE WHEN r.t_recorded IS :: ZONED DATETIME
                        THEN r.t_recorded.epochSeconds * 1000000 + r.t_recorded.microsecond
                        ELSE r.t_recorded END,
                      t_expired: CASE WHEN r.t_expired IS :: ZONED DATETIME
                        THEN r.t_expired.epochSeconds * 1000000 + r.t_expired.microsecond
                        ELSE r.t_expired END,
                      last_touched: CASE WHEN r.last_touched IS :: ZONED DATETIME
                        THEN r.last_touched.epochSeconds * 1000000 + r.last_touched.microsecond
                        ELSE r.last_touched END,
                      decay_am: CASE WHEN r.decay_am IS :: DATE
                        THEN r.decay_am.year * 10000 + r.decay_am.month * 100 + r.decay_am.day
                        ELSE r.decay_am END},
                    start_id: f.start_id,
                    end_id: f.end_id, wert: f.wert, ab_tag: ab_tag,
                    bis_tag: bis_tag}) AS facts
  }
  // What its facts say about its type: up to 10 facts per relation type that hold now
  // or later (active, or superseded from a day ahead), of the relations that imply a
  // type and of any whose triple carried one (`subjekt_typ`), found in one walk over
  // its edges (a dynamic type in a pattern does not narrow the walk, so
  // one walk per type would walk them all again for each).
  // (The ten are picked before their fields are read: a person with hundreds of
  // friends reads ten.) An order that reads every past value ($refs.all_history: a
  // take-back, a move, an order naming an entry) reads up to 100, those that stand
  // first, then the current versions that held (superseded, not taken back): a type
  // that a value superseded implies stays when a later one is taken back (Tom's home in
  // Kassel of 2010 to 2015 keeps Kassel an ort once Lena's is corrected).
  // Only where the plan checks them: for an entity the order may give a type other
  // than its type in the pair ($refs.claims, by normalised name and by id), or any type
  // where the order tells a time of its own ($refs.since: another type may hold then,
  // "Bello typ organisation" from April beside "ist ein Auto" from March), and for
  // corrections (a type only the corrected facts implied goes with them).
  WITH *, $refs.all_history
       OR any(t IN coalesce($refs.claims[e.name_norm], [])
                   + coalesce($refs.claims[e.id], [])
              WHERE typ IS NULL OR t <> typ OR $refs.since IS NOT NULL) AS checked
  CALL (e, checked) {
    WITH e WHERE checked
    MATCH (e)-[r]->(o)
    WHERE (type(r) IN $typed_out OR r.subjekt_typ IS NOT NULL)
      AND r.character_id = $character_id
      AND (r.aktiv OR r.grund = 'abgeloest' AND r.t_expired IS NULL)
    WITH r, o, CASE WHEN r.aktiv THEN true ELSE
      {{ holds_on_from_the_read }}
    END AS steht
    WHERE steht OR $refs.all_history
    WITH r, o ORDER BY steht DESC
    WITH type(r) AS rel,
         collect([r, o])[..CASE WHEN $refs.all_history THEN 100 ELSE 10 END] AS few
    UNWIND few AS f
    WITH f[0] AS r, f[1] AS o
    {{ typed_span }}
    RETURN collect({id: r.id, rel: type(r), start_id: e.id, end_id: o.id, wert: o.wert,
                    other: o.name, auftrag_id: r.auftrag_id, herkunft: r.herkunft,
                    subjekt_typ: r.subjekt_typ, t_valid: t_valid, ab_tag: ab_tag,
                    t_invalid: t_invalid, bis_tag: bis_tag, aktiv: r.aktiv, grund: r.grund})
           AS typed_out
  }
  CALL (e, checked) {
    WITH e WHERE checked
    MATCH (e)<-[r]-(o:Entitaet)
    WHERE type(r) IN $typed_in AND r.character_id = $character_id
      AND (r.aktiv OR r.grund = 'abgeloest' AND r.t_expired IS NULL)
    WITH r, o, CASE WHEN r.aktiv THEN true ELSE
      {{ holds_on_from_the_read }}
    END AS steht
    WHERE steht OR $refs.all_history
    WITH r, o ORDER BY steht DESC
    WITH type(r) AS rel,
         collect([r, o])[..CASE WHEN $refs.all_history THEN 100 ELSE 10 END] AS few
    UNWIND few AS f
    WITH f[0] AS r, f[1] AS o
    {{ typed_span }}
    RETURN collect({id: r.id, rel: type(r), start_id: o.id, end_id: e.id, wert: null,
                    other: o.name, auftrag_id: r.auftrag_id, herkunft: r.herkunft,
                    t_valid: t_valid, ab_tag: ab_tag, t_invalid: t_invalid, bis_tag: bis_tag,
                    aktiv: r.aktiv, grund: r.grund}) AS typed_in
  }
  RETURN collect({id: e.id, name: e.name, name_norm: e.name_norm, typ: typ,
                  merkmale: merkmale, facts: facts, typed: typed_out + typed_in}) AS entities
}
CALL () {
  CALL () {
    MATCH (e:Entitaet) USING INDEX e:Entitaet(user_id, name_norm)
    WHERE e.user_id = $user_id AND e.name_norm IN $refs.trans_names
    RETURN e
    UNION
    MATCH (e:Entitaet) USING INDEX e:Entitaet(id)
    WHERE e.id IN $refs.trans_ids AND e.user_id = $user_id
    RETURN e
  }
  MATCH ANY (e) (()-[t]->(:Entitaet) WHERE type(t) IN $trans_types
                 AND t.character_id = $character_id AND t.aktiv)* (x:Entitaet)
  WITH DISTINCT x
  MATCH (x)-[t]->(y:Entitaet)
  WHERE type(t) IN $trans_types AND t.character_id = $character_id AND t.aktiv
  RETURN collect({id: t.id, rel: type(t), start_id: x.id, end_id: y.id, start_name: x.name,
                  end_name: y.name, auftrag_id: t.auftrag_id, herkunft: t.herkunft}) AS transitive
}
CALL () {
  UNWIND $refs.timeline_ids AS given
  MATCH (t:TimelineEintrag {id: given})
  WHERE t.user_id = $user_id AND t.character_id = $character_id
  MATCH (first:TimelineEintrag)-[:NACHFOLGER*0..]->(t)
  WHERE NOT (:TimelineEintrag)-[:NACHFOLGER]->(first)
  MATCH (t)-[:NACHFOLGER*0..]->(last:TimelineEintrag)
  WHERE NOT (last)-[:NACHFOLGER]->(:TimelineEintrag)
  RETURN collect({given: given, first_id: first.id, beginn: last.beginn,
                  genauigkeit: last.genauigkeit, abgesagt: coalesce(last.abgesagt, false)}) AS chains
}
RETURN jetzt.epochSeconds * 1000000 + jetzt.microsecond AS jetzt, a IS NOT NULL AS recorded,
       a.ergebnis AS ergebnis, a.inhalt AS inhalt, a.erfasst AS erfasst, entities, chains,
       transitive;

// name: order_apply
// Write a planned order at once: new entities, new event entries, closed fact versions
// (t_expired: they stop being the current record, never edited otherwise), touched
// facts (their strength, last touch, and the type a triple told again carried for its
// subject, where the fact has none: `subjekt_typ`), new fact versions (reference and value facts; types from the canon only), and
// the order's audit. $jetzt is the store's clock from order_state, as ISO text (and so is
// the audit's `empfangen`): the driver's packing of a Python datetime costs the writer
// more CPU than the text's parse costs the server. A version to close
// or touch is found by the element id order_state read it with (`eid`, in the same
// transaction), not by a walk over its entity's edges, which holds every old version.
// params: $user_id, $jetzt, $entities, $entries, $close, $touch, $ref_facts, $value_facts, $auftrag
// :param user_id => 'demo-user'
// :param jetzt => '2026-12-01T12:00:00.000001+00:00'
// :param entities => []
// :param entries => []
// :param close => []
// :param touch => []
// :param ref_facts => []
// :param value_facts => []
// :param auftrag => {id: 'turn-1', character_id: 'nova', empfangen: '2026-12-01T12:00:00+00:00', status: 'ok', ergebnis: '{}', anzahl_tripel: 0, inhalt: 'x'}
WITH datetime($jetzt) AS jetzt
CALL (jetzt) {
  UNWIND $entities AS e
  CREATE (n:Entitaet)
  SET n = e, n.user_id = $user_id, n.erstellt = jetzt
}
CALL (jetzt) {
  UNWIND $entries AS entry
  CREATE (t:TimelineEintrag)
  SET t = entry.props, t.user_id = $user_id, t.t_recorded = jetzt
  WITH t, entry
  MATCH (p:Entitaet {id: entry.betrifft_id})
  WHERE p.user_id = $user_id
  CREATE (t)-[:BETRIFFT]->(p)
}
CALL (jetzt) {
  UNWIND $close AS f
  MATCH ()-[r]->()
  WHERE elementId(r) = f.eid
  WITH f, r, startNode(r) AS s
  WHERE s.id = f.start_id AND s.user_id = $user_id
    AND r.id = f.id AND r.version = f.version AND r.t_expired IS NULL
  SET r.t_expired = jetzt, r.aktiv = false
}
CALL (jetzt) {
  UNWIND $touch AS f
  MATCH ()-[r]->()
  WHERE elementId(r) = f.eid
  WITH f, r, startNode(r) AS s
  WHERE s.id = f.start_id AND s.user_id = $user_id AND r.id = f.id AND r.t_expired IS NULL
  SET r.last_touched = CASE WHEN r.last_touched > jetzt THEN r.last_touched ELSE jetzt END,
      r.staerke_decay = 1.0,
      r.subjekt_typ = coalesce(r.subjekt_typ, f.subjekt_typ)
}
CALL (jetzt) {
  UNWIND $ref_facts AS f
  MATCH (s:Entitaet {id: f.start_id})
  MATCH (o:Entitaet {id: f.end_id})
  WHERE s.user_id = $user_id AND o.user_id = $user_id
  CREATE (s)-[r:$(f.rel)]->(o)
  SET r = f.props, r.t_recorded = jetzt
  {{ temporal_props }}
}
CALL (jetzt) {
  UNWIND $value_facts AS f
  MATCH (s:Entitaet {id: f.start_id})
  WHERE s.user_id = $user_id
  CREATE (s)-[r:$(f.rel)]->(:Wert {wert: f.wert, user_id: $user_id})
  SET r = f.props, r.t_recorded = jetzt
  {{ temporal_props }}
}
CREATE (a:Auftrag)
SET a = $auftrag, a.user_id = $user_id, a.erfasst = jetzt,
    a.empfangen = datetime($auftrag.empfangen);

// name: audit_list
// The newest orders of a pair (or of all the user's characters when $character_id is null).
// params: $user_id, $character_id, $limit
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param limit => 20
MATCH (a:Auftrag {user_id: $user_id})
WHERE $character_id IS NULL OR a.character_id = $character_id
RETURN a.id AS auftrag_id, a.character_id AS character_id, a.empfangen AS empfangen,
       a.erfasst AS erfasst, a.status AS status, a.anzahl_tripel AS anzahl, a.ergebnis AS ergebnis
ORDER BY a.erfasst DESC
LIMIT $limit;

// name: audit_prune
// Forensics has a retention period instead of decay: delete orders recorded before the
// cutoff, at most $batch in one transaction (the caller repeats it until fewer go).
// params: $before, $batch
// :param before => datetime() - duration('P365D')
// :param batch => 10000
MATCH (a:Auftrag)
WHERE a.erfasst < $before
WITH a LIMIT $batch
DETACH DELETE a
RETURN count(*) AS deleted;

// name: entities_list
// The user's entities with their type and number of active facts in the pair. Entities
// belong to the user, their type and facts to a pair: both come from this pair only.
// params: $user_id, $character_id, $limit
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param limit => 20
MATCH (e:Entitaet {user_id: $user_id})
{{ type_in_pair }}
CALL (e) {
  OPTIONAL MATCH (e)-[r]-()
  WHERE r.character_id = $character_id AND r.aktiv AND type(r) <> 'TYP'
  RETURN count(r) AS fakten
}
RETURN e.id AS id, e.name AS name, coalesce(typ, 'sonstiges') AS typ, fakten
ORDER BY e.name_norm, e.id
LIMIT $limit;
