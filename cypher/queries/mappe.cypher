// fragment: event_days
// The days the fact `r` starts and ends on, from its events: `ta`, the end of the chain of
// r.timeline_id, and `tb`, of r.timeline_bis (null without one), each chain as it is now
// ($asof false) or as it was known at $at.bekannt_am (its last entry recorded by then;
// an entry of a store from before system time was kept carries no t_recorded, and is
// known from the start, as `kg check` takes it).
// (Most facts have no event: the index is asked only for the ones that have.)
OPTIONAL CALL (r) {
  WITH r WHERE r.timeline_id IS NOT NULL
  OPTIONAL MATCH (:TimelineEintrag {id: r.timeline_id})-[:NACHFOLGER*0..]->(ta:TimelineEintrag)
  WHERE NOT EXISTS { (ta)-[:NACHFOLGER]->(nx)
                     WHERE NOT $asof OR coalesce(nx.t_recorded <= $at.bekannt_am, true) }
    AND (NOT $asof OR coalesce(ta.t_recorded <= $at.bekannt_am, true))
  RETURN ta LIMIT 1
}
OPTIONAL CALL (r) {
  WITH r WHERE r.timeline_bis IS NOT NULL
  OPTIONAL MATCH (:TimelineEintrag {id: r.timeline_bis})-[:NACHFOLGER*0..]->(tb:TimelineEintrag)
  WHERE NOT EXISTS { (tb)-[:NACHFOLGER]->(nx)
                     WHERE NOT $asof OR coalesce(nx.t_recorded <= $at.bekannt_am, true) }
    AND (NOT $asof OR coalesce(tb.t_recorded <= $at.bekannt_am, true))
  RETURN tb LIMIT 1
}

// fragment: span_then
// The start `ab` and end `bis` of the fact version `r` as known at $at.bekannt_am, in epoch
// microseconds (exact; DateTimes of two zones that name one instant are not equal in
// Cypher): from its events' chains as known then (the day's start, UTC), else from its
// valid time; the end only of a superseded value. (kg.mappe.effective is the same rule
// for the dates a Mappe shows.)
{{ event_days }}
WITH CASE WHEN ta IS NULL THEN r.t_valid.epochSeconds * 1000000 + r.t_valid.microsecond
          ELSE datetime({date: ta.beginn, timezone: 'UTC'}).epochSeconds * 1000000 END AS ab,
     CASE WHEN tb IS NOT NULL
            THEN datetime({date: tb.beginn, timezone: 'UTC'}).epochSeconds * 1000000
          WHEN r.grund = 'abgeloest'
            THEN r.t_invalid.epochSeconds * 1000000 + r.t_invalid.microsecond END AS bis

// fragment: span_read
// The start `ab` and end `bis` of the superseded fact version `r` in epoch microseconds,
// as the reader dates them (kg.mappe.effective): from its events' days (`ta` and `tb`
// of `event_days`), else from its valid time; an end before the start (an event of the
// month it began in, or moved before it) is the start. A day or an instant stored as
// something else reads as none (the reader names it). Every variable in scope goes on.
WITH *,
     CASE WHEN ta.beginn IS NULL AND r.t_valid IS :: ZONED DATETIME NOT NULL
            THEN r.t_valid.epochSeconds * 1000000 + r.t_valid.microsecond
          WHEN ta.beginn IS :: DATE NOT NULL
            THEN datetime({date: ta.beginn, timezone: 'UTC'}).epochSeconds * 1000000
          END AS ab,
     CASE WHEN tb.beginn IS :: DATE NOT NULL
            THEN datetime({date: tb.beginn, timezone: 'UTC'}).epochSeconds * 1000000
          WHEN r.t_invalid IS :: ZONED DATETIME NOT NULL
            THEN r.t_invalid.epochSeconds * 1000000 + r.t_invalid.microsecond
          END AS ende
WITH *, CASE WHEN ende < ab THEN ab ELSE ende END AS bis

// fragment: holds_then
// An as-of read's valid-time test, before the cap: the value of the fact version `r`
// held at `gueltig_am` ($at.gueltig_us, its epoch microseconds; a value superseded where it
// began never holds). Only the facts that held take a place under the cap.
EXISTS {
  {{ span_then }}
  WHERE ab <= $at.gueltig_us AND (bis IS NULL OR $at.gueltig_us < bis)
}

// fragment: holds_now
// A current read's value that still holds: the current version of a value superseded
// from a day ahead (by one told with a later start; docs/time.md), at the instant of
// the read (`datetime.realtime()`). Not one squeezed to nothing (it never held). One
// that begins and ends ahead too, unless it is the entity `e`'s own (there a line of
// the history only, which neither derives nor reaches further): told of Lena, Kassel
// from March until January shows in Kassel's Mappe and at degree 2 as a value to come
// with no end does, with its two days. Its days as the reader dates them
// (`span_read`). The cheap test first, inside: the planner runs an EXISTS before the other
// conditions of its WHERE, and it ran the subquery for every superseded edge (15 % of a
// Mappe's time at degree 2).
EXISTS {
  WITH r WHERE r.grund = 'abgeloest' AND r.t_expired IS NULL
               AND (r.timeline_bis IS NOT NULL OR r.t_invalid > datetime.realtime())
  // Only while a value of its relation holds on at its subject, active and awake: as
  // the subject's Mappe shows no history beside a resting current value, "Lena wohnt in
  // Kassel (noch bis …)" in Kassel's Mappe told of a move to a home none showed.
  WITH r WHERE type(r) IN $symmetric_types OR EXISTS {
    WITH startNode(r) AS s
    MATCH (s)-[c]->()
    WHERE type(c) = type(r) AND c.aktiv AND c.character_id = $character_id
      AND c.staerke_decay >= $schwelle
  }
  {{ event_days }}
  {{ span_read }}
  WITH ab, bis, datetime.realtime() AS clock
  WITH ab, bis, clock.epochSeconds * 1000000 + clock.microsecond AS now
  WHERE ab < bis AND now < bis
    AND (ab <= now OR NOT (startNode(r) = e OR (endNode(r) = e AND type(r) IN $symmetric_types)))
}

// fragment: fact_list
// A fact `r` as the reader takes it: a list in the order of kg.mappe.FACT_FIELDS, with
// `grad`, `via` and its events' chain ends `ta` and `tb` (`event_days`).
[
  r.id, type(r), grad, via, r.herkunft,
  startNode(r).id, startNode(r).name, endNode(r).id, endNode(r).name, endNode(r).wert,
  r.staerke_decay, r.aktiv, r.grund,
  r.t_valid.epochSeconds * 1000000 + r.t_valid.microsecond,
  r.t_invalid.epochSeconds * 1000000 + r.t_invalid.microsecond,
  ta.beginn, ta.genauigkeit, tb.beginn, tb.genauigkeit
]

// fragment: held_then
// The fact version `r` is the record and holds: the active version ($asof false), or the
// version recorded by $at.bekannt_am and not yet replaced then, neither corrected nor
// cancelled (its valid time the caller compares with `gueltig_am`).
CASE WHEN $asof
  THEN r.t_recorded <= $at.bekannt_am AND coalesce(r.t_expired > $at.bekannt_am, true)
       AND coalesce(r.grund, 'abgeloest') = 'abgeloest'
  ELSE r.aktiv END

// fragment: recorded_then
// The fact version `r` is the record: current ($asof false), or recorded by $at.bekannt_am
// and not yet replaced then.
CASE WHEN $asof
  THEN r.t_recorded <= $at.bekannt_am AND coalesce(r.t_expired > $at.bekannt_am, true)
  ELSE r.t_expired IS NULL END

// name: mappe
// The Mappen of entities (one row each, in one round trip): per entity its type, its facts in both
// directions (degree 1, capped, strongest first), the facts of those neighbours in both
// directions (degree 2, after degree 1 within the same cap, strongest first), the history
// of its einwertig relations among its own facts read (symmetric ones from both ends,
// whatever it shows), latest end first, capped, and what the transitive
// relations derive (closed here, never stored). Only the pair's facts; resting edges
// (strength below $schwelle) are left out. Value nodes are never traversed further.
// Compact: each fact, derivation and time is a list, its fields in the order of
// kg.mappe.FACT_FIELDS, DERIVED_FIELDS and TIME_FIELDS (no key strings on the wire);
// valid times as epoch microseconds (exact, as the writer keeps them). A fact of degree 0
// is no fact of the Mappe: another version of the value of a single-valued fact shown
// from its object or at degree 2 (one that still holds, or one told again for an earlier
// time), as known then, for the reader's stay; of the entity's own and its history's
// lines where the history's cap may have cut; and of a partner's lines' bonds.
// A current read ($asof false, $at.bekannt_am null) takes the active fact versions, the
// values that still hold (superseded from a day ahead; the subject's own: its history)
// and the chains' active ends.
// An as-of read takes the fact versions recorded by $at.bekannt_am and not yet replaced then
// (t_recorded <= $at.bekannt_am < t_expired), and each timeline chain as it was known then
// (its last entry recorded by $at.bekannt_am); of them, the type and the facts whose value
// held at $at.gueltig_us (gueltig_am in epoch microseconds), the history's values that had
// ended by then, before each cap (so superseded values take no place), and of the
// facts on the derivations' paths those that held. For derived knowledge it returns
// every path (uncapped, unordered) with the ids of its facts, and the times of those
// facts once each (`wegzeiten`); the caller keeps the paths whose facts all came and,
// per target, the one that holds from the earliest start. The paths begin at every own
// fact of a relation that derives, under the cap or not, and those facts come as
// `eigene` (relation, target id, fact id): the caller derives nothing a cut one says.
// The instants of an as-of read come in one map, $at (empty fields for a current read):
// the server keys a cached plan by each parameter's type, null apart from a number or a
// datetime, so with them apart the first as-of read planned the query anew (seconds
// after a restart); one map is one type, and one plan serves both reads.
// Each row also brings `stand`: the user's clock (`uhr`, the instant of the user's last
// change committed), read first, before any fact (in epoch microseconds; null for a user
// without one), and `stand_nach`, the same clock read again after the row's facts.
// Every change of the user sets the clock, so where the two differ one committed while
// the row was read (Neo4j reads committed data, not a snapshot), and the caller reads
// again (kg.mappe._steady_read; what `stand` promises: kg.mappe.Mappe.stand).
// params: $user_id, $character_id, $entity_ids, $cap, $schwelle, $asof, $at, $derive, $symmetric_types, $einwertig_types
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param entity_ids => ['<id of Lena>']
// :param cap => 60
// :param schwelle => 0.1
// :param asof => false
// :param at => {gueltig_us: datetime('9999-12-31T23:59:59Z').epochSeconds * 1000000, bekannt_am: datetime('9999-12-31T23:59:59Z')}
// :param derive => [{via: 'WOHNT_IN', trans: 'LIEGT_IN'}]
// :param symmetric_types => ['PARTNER', 'GESCHWISTER', 'BEFREUNDET_MIT']
// :param einwertig_types => ['ARBEITET_BEI', 'BERUF', 'GEBURTSORT', 'PARTNER', 'TYP', 'WOHNT_IN']
OPTIONAL MATCH (nutzer:Nutzer {id: $user_id})
WITH nutzer.uhr.epochSeconds * 1000000 + nutzer.uhr.microsecond AS stand
UNWIND $entity_ids AS entity_id
MATCH (e:Entitaet {id: entity_id})
WHERE e.user_id = $user_id
CALL (e) {
  // The type is a single-valued fact: the value that holds now (an as-of read: that held
  // then), and before the first value the first (a type a relation implies begins with
  // the order, while the fact may begin earlier, with its event). A current read looks
  // at every value of the record: a type superseded from a day ahead (by one told to
  // begin later) is no longer active, yet holds until that day, and the active one
  // has not begun. The first is the earliest that holds somewhere: of two versions
  // that begin together, one squeezed to nothing never held (by the order of two
  // equal starts, Rex read sonstiges before a tier of the same month).
  OPTIONAL MATCH (e)-[r:TYP]->(w:Wert)
  WHERE r.character_id = $character_id
    AND CASE WHEN $asof
          THEN
            {{ held_then }}
          ELSE r.t_expired IS NULL AND coalesce(r.grund, 'abgeloest') = 'abgeloest' END
  // Its span as known then (`span_then`, at `gueltig_am`), or at the read.
  OPTIONAL CALL (r) {
    WITH r WHERE $asof
    {{ span_then }}
    RETURN ab, bis, $at.gueltig_us AS t
    UNION
    WITH r WHERE NOT $asof
    {{ span_at_the_read }}
    RETURN ab, bis, now AS t
  }
  WITH w, r, ab, coalesce(ab <= t AND (bis IS NULL OR t < bis), false) AS held,
       coalesce(bis <= ab, false) AS leer
  ORDER BY held DESC, leer, ab, r.t_valid, r.aktiv DESC
  RETURN w.wert AS typ LIMIT 1
}
CALL (e) {
  CALL (e) {
    MATCH (e)-[r]-(n)
    WHERE r.character_id = $character_id AND r.staerke_decay >= $schwelle AND type(r) <> 'TYP'
      AND
        {{ held_then }}
      AND (NOT $asof OR
        {{ holds_then }}
      )
    RETURN r, n
    ORDER BY r.staerke_decay DESC, r.last_touched DESC, r.id
    LIMIT $cap
  }
  RETURN collect({r: r, n: n}) AS near
}
CALL (e, near) {
  // A current read's values that still hold, superseded from a day ahead (the history
  // shows them, "noch bis"): Lena lives in Berlin until March, and the Mappe derives
  // and reaches further from Berlin as from her other places (told Kassel from March,
  // it showed neither "wohnt in Deutschland (über Berlin)" nor "Berlin liegt in
  // Deutschland"). Entities only: a value is never traversed further. The entity's own
  // only where the Mappe shows the relation's current value (else it shows no history of
  // it either, kg.mappe.build); a symmetric relation's from both ends. And the values
  // told of the entity, which the Mappe shows at degree 1 (Lena lives in Kassel until
  // March, when she moves to Paris: "Lena wohnt in Kassel (noch bis …)" in Kassel's
  // Mappe, which left her out). Only one that holds now, or one to come told of another
  // (`holds_now`).
  WITH e, [x IN near WHERE x.r.id IS NOT NULL][..$cap - 1] AS shown
  WHERE NOT $asof  // (an as-of read never expands the entity's edges here)
  MATCH (e)-[r]-(n:Entitaet)
  WHERE r.character_id = $character_id AND r.staerke_decay >= $schwelle AND type(r) <> 'TYP'
    AND (startNode(r) <> e OR type(r) IN $symmetric_types
         OR any(f IN shown WHERE type(f.r) = type(r) AND startNode(f.r) = e))
    AND r.grund = 'abgeloest' AND r.t_expired IS NULL
    AND
      {{ holds_now }}
  RETURN collect({r: r, n: n}) AS ahead
}
CALL (e, near) {
  // The lines of a relation among the entity's own facts under the cap (kg.mappe.build
  // shows only those whose current value it shows, which facts told of the entity may
  // still push out; a partner's from both ends, whatever it shows): lines it would
  // leave out took the places under the cap, and a value that still holds ("noch
  // bis") was cut.
  WITH e, [x IN [y IN near WHERE y.r.id IS NOT NULL][..$cap - 1] WHERE startNode(x.r) = e]
          AS own
  CALL (e, own) {
    MATCH (e)-[r]->(n)
    WHERE r.character_id = $character_id AND type(r) <> 'TYP'
      AND r.grund = 'abgeloest'
      AND (type(r) IN $symmetric_types OR any(x IN own WHERE type(x.r) = type(r)))
      AND
        {{ recorded_then }}
    RETURN r, n
    UNION
    MATCH (e)<-[r]-(n)
    // type(r) IN: half the db hits of a dynamic type in the pattern on a hub's
    // hundreds of incoming facts
    WHERE type(r) IN $symmetric_types
      AND r.character_id = $character_id AND r.grund = 'abgeloest'
      AND
        {{ recorded_then }}
    RETURN r, n
  }
  // An as-of read's history: the values that had ended by `gueltig_am`.
  WITH r, n WHERE NOT $asof OR EXISTS {
    {{ span_then }}
    WHERE bis <= $at.gueltig_us AND ab <= $at.gueltig_us
  }
  // Latest end first, each end as the reader dates it (`span_read`): an event moved
  // since the value was superseded moved its end, where the version keeps the end it
  // was written with; and sorted by its stored end, a version squeezed to nothing on 24
  // December by an event of November went after the lines ending before it, took
  // "Ärztin (1. to 24. December)" into its stay there, and the cap cut that line for
  // an earlier one.
  {{ event_days }}
  {{ span_read }}
  ORDER BY bis DESC, r.id
  // A value squeezed to nothing (superseded where it began) never held: the reader
  // shows no line of it (unless it ends a stay of earlier versions, which it brings
  // along), so it takes no place under the cap. Told four homes for one day, the
  // three that never held took the places of a former job.
  WITH collect({r: r, leer: coalesce(bis <= ab, false), zeile: [
    r.id, type(r), 1, null, r.herkunft, e.id, e.name, n.id, n.name, n.wert,
    r.staerke_decay, r.aktiv, r.grund,
    r.t_valid.epochSeconds * 1000000 + r.t_valid.microsecond,
    r.t_invalid.epochSeconds * 1000000 + r.t_invalid.microsecond,
    ta.beginn, ta.genauigkeit, tb.beginn, tb.genauigkeit
  ]}) AS alle
  WITH alle, [i IN range(0, size(alle) - 1) WHERE NOT alle[i].leer] AS gehalten
  // Nor does a version that another version of its value goes on from, where it
  // ends (told again for an earlier time): the reader joins the two into one stay, and
  // a bond told twice and resting (the reader joins its lines into the bond's stay)
  // took the places of former homes. (Asked only where the places are all taken; a
  // version so told that the reader does not join still comes along.)
  WITH alle, CASE WHEN size(gehalten) < $cap THEN gehalten ELSE [
    i IN gehalten WHERE NOT EXISTS {
      UNWIND [alle[i].r] AS z
      WITH z, startNode(z) AS a, endNode(z) AS o
      MATCH (a)-[w]-(b)
      WHERE type(w) = type(z) AND w <> z AND w.character_id = $character_id
        AND (startNode(w) = a OR type(w) IN $symmetric_types)
        AND (w.t_valid = z.t_invalid OR w.timeline_id = z.timeline_bis)
        AND coalesce(w.grund, 'abgeloest') = 'abgeloest'
        AND CASE WHEN $asof
              THEN w.t_recorded <= $at.bekannt_am AND coalesce(w.t_expired > $at.bekannt_am, true)
              ELSE w.t_expired IS NULL END
        AND (b = o OR b.wert IS :: STRING NOT NULL AND o.wert IS :: STRING NOT NULL
                      AND toLower(normalize(b.wert, NFC)) = toLower(normalize(o.wert, NFC)))
    }] END AS gehalten
  WITH CASE WHEN size(gehalten) >= $cap THEN alle[..gehalten[$cap - 1] + 1] ELSE alle END
         AS zeilen, size(gehalten) >= $cap AS voll
  // Its lines go latest end first, so the cap cuts the versions that end earliest:
  // where a stay began. Where it may have cut (as many lines that held as the cap),
  // the lines and the entity's own facts bring their values' versions as the facts
  // below do.
  // Else a partner's lines bring their bond's other versions: a line shows whatever
  // the Mappe shows, and where the cap left the bond out, a bond told again for an
  // earlier time read as one that had ended ("früher: ist Partner von Lena (bis …)").
  // (`voll`: more lines held than the cap, so the cap may have cut some; the reader's
  // `gekappt` says so.)
  RETURN [z IN zeilen | z.zeile] AS historie, voll AS historie_voll,
         CASE WHEN voll THEN [z IN zeilen | z.r] ELSE [] END AS gekappt,
         CASE WHEN voll THEN []
              ELSE [z IN zeilen WHERE type(z.r) IN $symmetric_types | z.r] END AS bindungen
}
CALL (e, near, ahead, gekappt, bindungen) {
  CALL (e, near, ahead) {
    UNWIND near + [f IN ahead WHERE startNode(f.r) <> e AND NOT type(f.r) IN $symmetric_types]
           AS f
    RETURN f.r AS r, 1 AS grad, null AS via
    UNION ALL
    UNWIND near + ahead AS f
    WITH f.n AS n1, f.r AS r1
    WHERE n1:Entitaet AND size(near) < $cap
    // (No cap per neighbour: the one below keeps the same facts, as the strongest
    // $cap of all are among each neighbour's strongest $cap, and a sort per neighbour
    // cost more than it saved.)
    MATCH (n1)-[r]-(n)
    WHERE r <> r1 AND n <> e
      AND r.character_id = $character_id AND r.staerke_decay >= $schwelle AND type(r) <> 'TYP'
      AND (
        {{ held_then }}
        // (and a current read's value that still holds: "Lena wohnt in Kassel (noch bis
        // …)" in Tom's Mappe, where it showed only her home to come)
        OR NOT $asof AND
          {{ holds_now }}
      )
      AND (NOT $asof OR
        {{ holds_then }}
      )
    RETURN r, 2 AS grad, n1.name AS via
  }
  WITH r, min(grad) AS grad, head(collect(via)) AS via
  ORDER BY grad, r.staerke_decay DESC, r.last_touched DESC, r.id
  LIMIT $cap
  {{ event_days }}
  WITH collect(
    {{ fact_list }}
  ) AS fakten,
  collect(CASE WHEN NOT $asof AND NOT r.aktiv
                 OR type(r) IN $einwertig_types
                    AND (grad = 2 OR startNode(r) <> e AND NOT type(r) IN $symmetric_types
                         OR gekappt <> [])
               THEN r END) AS holding
  // A single-valued fact shown from its object or at degree 2 brings the other
  // versions of the same value (degree 0: not shown) that were the record (now, or at
  // $at.bekannt_am), which the reader joins into one stay, as it does the entity's own
  // history (kg.mappe.stays; her own facts, and a bond from either partner, come with
  // their history's versions; and with their own where the history's cap may have cut
  // some, as do its lines: "wohnt in Kassel (ab 2025)" of a stay since 2020 beside five
  // jobs ended since):
  // - a current read's value that still holds: Lena in Kassel since last week, told
  //   before to move there on the 20th, is one stay that goes on after the 20th, never
  //   "noch bis" the 20th;
  // - a value told again for an earlier time: Lena in Kassel from March 2025, told
  //   later that she has lived there since 2020, reads "ab 2020" there as in her own
  //   Mappe, where it read the start of the version that holds (now or at gueltig_am).
  // A symmetric relation's versions are the same pair's, told either way round.
  CALL (holding, gekappt, bindungen) {
    // Each subject's edges walked once for all its facts here (a neighbour's home, job
    // and partner are three facts of one subject). A value in another case, or stored
    // decomposed (before values were composed), is the same value, as the writer finds
    // it and kg.mappe keys it (kg.models.value_key); a value stored as no text (by hand)
    // is no version of another.
    CALL (holding, gekappt, bindungen) {
      UNWIND holding + gekappt + bindungen AS h
      WITH startNode(h) AS s, endNode(h) AS o, h
      WITH s, collect([type(h), h, o, CASE WHEN o.wert IS :: STRING NOT NULL
                                           THEN toLower(normalize(o.wert, NFC)) END]) AS hs
      MATCH (s)-[r]->(x)
      WHERE type(r) IN [k IN hs | k[0]]
        AND any(k IN hs WHERE type(r) = k[0] AND r <> k[1] AND (
              x = k[2] OR k[3] = CASE WHEN x.wert IS :: STRING NOT NULL
                                      THEN toLower(normalize(x.wert, NFC)) END))
      RETURN r
      UNION
      UNWIND holding + gekappt + bindungen AS h
      WITH h WHERE type(h) IN $symmetric_types
      WITH endNode(h) AS o, collect(h) AS hs
      MATCH (o)-[r]->(y)
      WHERE any(h IN hs WHERE type(r) = type(h) AND y = startNode(h))
      RETURN r
    }
    WITH r WHERE r.character_id = $character_id
      AND coalesce(r.grund, 'abgeloest') = 'abgeloest'
      AND
        {{ recorded_then }}
    WITH r, 0 AS grad, null AS via
    {{ event_days }}
    RETURN collect(
      {{ fact_list }}
    ) AS fassungen
  }
  RETURN fakten + fassungen AS fakten
}
CALL (e, near) {
  // The entity's own facts of a relation that derives (`$derive`'s `via`), of the pair,
  // awake and held, as read above: every one, not only those under the cap (`near`
  // holds them all where it is not full). Facts told of the entity may push some out
  // of the Mappe's facts; the reader must still know them: a derivation whose earliest
  // path begins with one is cut, never dated by a later path (Kassel, told of by sixty
  // people, read "liegt in Deutschland (über Hessen, ab 2030)", where it has lain there
  // through Nordhessen since 2000), and what one says is not derived in its place
  // ("abgeleitet: liegt in Deutschland (über Hessen)" where the cap cut "liegt in
  // Deutschland"). One without an id (`kg check` names it) derives nothing.
  CALL (e, near) {
    WITH e WHERE size(near) >= $cap
    MATCH (e)-[r]->(:Entitaet)
    WHERE type(r) IN [d IN $derive | d.via]
      AND r.character_id = $character_id AND r.staerke_decay >= $schwelle
      AND
        {{ held_then }}
      AND (NOT $asof OR
        {{ holds_then }}
      )
    RETURN collect(r) AS jenseits  // (none where `near` is not full)
  }
  RETURN [r IN CASE WHEN size(near) < $cap THEN [f IN near | f.r] ELSE jenseits END
          WHERE startNode(r) = e AND type(r) IN [d IN $derive | d.via] AND r.id IS NOT NULL]
         AS eigene
}
CALL (e, eigene, ahead) {
  // Derived from the entity's own facts (`eigene`) and the values that still hold
  // (`ahead`): "abgeleitet: wohnt in Hessen (über Kassel)" where the cap cut "wohnt in
  // Kassel" told of a home the Mappe did not show. Each path names the fact it begins
  // with (`r0.id`), and the reader keeps a target only where the fact its earliest path
  // begins with shows (kg.mappe.build).
  UNWIND eigene + [f IN ahead WHERE startNode(f.r) = e | f.r] AS r0
  WITH r0, endNode(r0) AS o
  WHERE o:Entitaet
  UNWIND $derive AS d
  WITH d, r0, o
  WHERE type(r0) = d.via
  MATCH p = (o) (()-[t]->() WHERE type(t) = d.trans AND t.character_id = $character_id
                 AND t.staerke_decay >= $schwelle
                 AND CASE WHEN $asof
                   THEN t.t_recorded <= $at.bekannt_am
                        AND coalesce(t.t_expired > $at.bekannt_am, true)
                        AND coalesce(t.grund, 'abgeloest') = 'abgeloest'
                   ELSE t.aktiv END){1,}
            (x:Entitaet)
  WHERE x <> e AND x <> o
  // The paths whose facts all hold (`gueltig_am`): the caller takes, per target, the
  // one that holds from the earliest start (a shorter path may begin later), the first
  // of two alike in its own order. Every path, uncapped, in no order: a cap of paths,
  // shortest first, cut the earliest ("wohnt in Deutschland (über Kassel)" from 2024
  // where she has lived there, through Hessen, since 2020), counted paths from facts
  // the caller then left out (Nordhessen's twelve regions in place of Europa), and of
  // one length let the server's walk order (which an import changes) choose. The
  // server walks every path anyway.
  // Each path names its facts by id; their times come once each (`wegzeiten`): places
  // that each lie in two of the next level give 2^(L+1) - 2 paths through 4L - 1 facts
  // for L levels, and the times read per path (twelve levels: 8,190 paths, 47 facts)
  // were most of such a Mappe's seconds, on the server and in the reader. (A fact
  // without an id, which `kg check` names, leads nowhere.)
  WITH collect([type(r0), x.id, x.name, [n IN nodes(p) | n.name][..-1],
                [r IN [r0] + relationships(p) | r.id], r0.id]) AS abgeleitet,
       collect([r0] + relationships(p)) AS glieder
  // The times of the facts on the paths: the derivation holds from the latest start (its
  // *ab*). An as-of read brings only the facts that held then, and the reader keeps a
  // path only if all of its facts came.
  CALL (glieder) {
    UNWIND glieder AS g
    UNWIND g AS r
    WITH DISTINCT r
    WHERE r.id IS NOT NULL AND (NOT $asof OR
      {{ holds_then }}
    )
    {{ event_days }}
    RETURN collect([
      r.grund, r.t_valid.epochSeconds * 1000000 + r.t_valid.microsecond,
      r.t_invalid.epochSeconds * 1000000 + r.t_invalid.microsecond,
      ta.beginn, ta.genauigkeit, tb.beginn, tb.genauigkeit, r.id
    ]) AS wegzeiten
  }
  RETURN abgeleitet, wegzeiten
}
// Correlated with `e` (`e.user_id`), so it runs for each entity after the subqueries
// before it; an uncorrelated one could be planned as a cartesian product, which the
// planner may put first. (The lists are imported to say so; it does not use them.)
CALL (e, fakten, historie, abgeleitet, wegzeiten) {
  OPTIONAL MATCH (nutzer:Nutzer {id: e.user_id})
  RETURN nutzer.uhr.epochSeconds * 1000000 + nutzer.uhr.microsecond AS stand_nach
}
RETURN e.id AS id, e.name AS name, coalesce(typ, 'sonstiges') AS typ, fakten, historie,
       historie_voll, abgeleitet, wegzeiten, [r IN eigene | [type(r), endNode(r).id, r.id]] AS eigene, stand, stand_nach;

// name: history
// Every value a relation of an entity had in the pair, as recorded now ($asof false: the
// current versions) or as known at $at.bekannt_am (the versions recorded by then and not yet
// replaced), corrected and cancelled ones never; symmetric relations from both ends.
// For "where did Lena live before?", with the timeline dates of *ab* and *bis* (each chain
// as it was known at $at.bekannt_am); the caller keeps the values begun by `gueltig_am`.
// $only.rel_types names the relations to list ({} lists them all: one map, whatever it
// holds, so both share one plan where a null and a list would not).
// params: $user_id, $character_id, $entity_id, $only, $asof, $at, $symmetric_types
// :param user_id => 'demo-user'
// :param character_id => 'nova'
// :param entity_id => '<id of Lena>'
// :param only => {rel_types: ['WOHNT_IN']}
// :param asof => true
// :param at => {bekannt_am: datetime('2026-11-01T00:00:00Z')}
// :param symmetric_types => ['PARTNER']
MATCH (e:Entitaet {id: $entity_id})
WHERE e.user_id = $user_id
CALL (e) {
  MATCH (e)-[r]->(n)
  RETURN r, n
  UNION
  MATCH (e)<-[r:$any($symmetric_types)]-(n)
  RETURN r, n
}
WITH e, r, n
WHERE r.character_id = $character_id
  AND ($only.rel_types IS NULL OR type(r) IN $only.rel_types)
  AND coalesce(r.grund, 'abgeloest') = 'abgeloest'
  AND
    {{ recorded_then }}
{{ event_days }}
RETURN r.id AS id, type(r) AS rel, 1 AS grad, null AS via, r.herkunft AS herkunft,
       e.id AS subjekt_id, e.name AS subjekt_name, n.id AS objekt_id, n.name AS objekt_name, n.wert AS wert,
       r.staerke_decay AS staerke, r.aktiv AS aktiv, r.grund AS grund,
       r.t_valid.epochSeconds * 1000000 + r.t_valid.microsecond AS t_valid,
       r.t_invalid.epochSeconds * 1000000 + r.t_invalid.microsecond AS t_invalid,
       ta.beginn AS ab_tag, ta.genauigkeit AS ab_genauigkeit,
       tb.beginn AS bis_tag, tb.genauigkeit AS bis_genauigkeit
ORDER BY type(r), r.t_valid, r.id;
