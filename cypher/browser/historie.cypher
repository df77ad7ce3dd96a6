// The history of one relation of an entity in one pair, as a table: every value it
// ever had, oldest first, with when it held (valid time), when the store learned it and
// when that stopped being current (system time), and why an old value is inactive
// (abgeloest: superseded; berichtigt / abgesagt: never true). A fact valid from a
// timeline event shows the active entry of that event's chain as `gilt_ab`. A symmetric
// relation (partner) is stored once, from either end: `beide_richtungen` true reads
// both (Anna's partners where "Ben partner Anna" was told too).
//
// Set the parameters first; `kg browser historie -u u1 -c nova --entity Lena
// --beziehung wohnt_in` prints them with the library's values:
// :param user_id => 'u1'
// :param character_id => 'nova'
// :param entity => 'lena'
// :param beziehung => 'wohnt_in'
// :param beide_richtungen => false
// `entity` is the entity's id (`kg browser` sets it) or, typed by hand, its name as the
// library normalises it (kg.models.normalize_name); `beziehung` a canon relation; `beide_richtungen` whether it is
// symmetric (the canon's `symmetrisch`).
MATCH (e:Entitaet {user_id: $user_id})
WHERE e.id = $entity OR e.name_norm = $entity
MATCH (e)-[r]-(o)
WHERE type(r) = toUpper($beziehung) AND r.character_id = $character_id
  AND (startNode(r) = e OR $beide_richtungen)
OPTIONAL MATCH (:TimelineEintrag {id: r.timeline_id})-[:NACHFOLGER*0..]->(ab:TimelineEintrag)
WHERE NOT (ab)-[:NACHFOLGER]->()
OPTIONAL MATCH (:TimelineEintrag {id: r.timeline_bis})-[:NACHFOLGER*0..]->(bis:TimelineEintrag)
WHERE NOT (bis)-[:NACHFOLGER]->()
RETURN e.name AS subjekt, type(r) AS beziehung, coalesce(o.name, o.wert) AS objekt,
       r.aktiv AS aktiv, r.grund AS grund, r.herkunft AS herkunft,
       coalesce(toString(ab.beginn) + ' (' + ab.titel + ')', toString(r.t_valid)) AS gilt_ab,
       coalesce(toString(bis.beginn) + ' (' + bis.titel + ')', toString(r.t_invalid)) AS gilt_bis,
       r.t_recorded AS erfasst, r.t_expired AS ersetzt, round(r.staerke_decay, 3) AS staerke
ORDER BY coalesce(ab.beginn, date(r.t_valid)), r.t_recorded, r.id;
