"""A deterministic generator of realistic fact graphs, one user at a time.

User number `i` of seed `s` is always the same graph (its own `random.Random`), so a
database of 100 k facts is the database of 10 k facts plus more users, and a run can
grow the store from one size to the next instead of reloading it.

Per user: a place hierarchy (city → region → country → continent, `liegt_in`),
organisations in those cities, people with residence, job, employer, partner,
siblings, friends, parents, hobbies and pets, all typed by a `typ` fact as the writer
would type them. About a fifth of the einwertig facts are superseded, recorded as the
writer records a change (docs/graph-model.md, "Fact relationships"): the predecessor's
first version closed when the new value was recorded (`t_expired`), and its second,
current version superseded (`grund = 'abgeloest'`, `t_invalid` where the new value
begins, no `t_expired`), each version of a value fact with a `Wert` node of its own.
Some moves reference a timeline event (month precision, some of them moved: NACHFOLGER
chains), and a few users carry hub entities (a city and an employer with hundreds of
edges). One user in three has a second character that knows the same world and people
of its own.

The shape is exactly the one the Fakten-Agent writes (docs/graph-model.md); the
generator only picks *which* facts exist. Relationship types come from the canon. Every
instant is a whole second (the bulk path sends instants as epoch seconds).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from kg.canon import Canon
from kg.decay import moment, strength
from kg.models import normalize_name
from kg.plan import day_start
from kg.settings import Settings

DECAY_RATE: float = Settings.model_fields["decay_rate"].default
DAY = 86_400  # seconds: every generated instant is a whole second (the bulk path sends
# instants as epoch seconds)

CONTINENT = "Europa"
WORLD: dict[str, dict[str, list[str]]] = {
    "Deutschland": {
        "Hessen": ["Kassel", "Frankfurt", "Marburg", "Fulda", "Darmstadt"],
        "Bayern": ["München", "Nürnberg", "Regensburg", "Würzburg", "Augsburg"],
        "Nordrhein-Westfalen": ["Köln", "Düsseldorf", "Münster", "Bonn", "Aachen"],
        "Sachsen": ["Dresden", "Leipzig", "Chemnitz"],
        "Niedersachsen": ["Hannover", "Göttingen", "Osnabrück"],
        "Brandenburg": ["Potsdam", "Cottbus"],
    },
    "Österreich": {
        "Tirol": ["Innsbruck", "Kufstein"],
        "Steiermark": ["Graz", "Leoben"],
        "Salzburger Land": ["Salzburg", "Hallein"],
    },
    "Schweiz": {"Kanton Zürich": ["Zürich", "Winterthur"], "Kanton Bern": ["Bern", "Thun"]},
    "Frankreich": {"Provence": ["Marseille", "Nizza", "Avignon"], "Bretagne": ["Rennes", "Brest"]},
    "Italien": {"Toskana": ["Florenz", "Pisa", "Siena"], "Lombardei": ["Mailand", "Bergamo"]},
}
CLASS_OF_LEVEL = {"stadt": "Stadt", "region": "Region", "land": "Land", "kontinent": "Kontinent"}
FIRST = [
    "Lena",
    "Anna",
    "Jonas",
    "Paul",
    "Marie",
    "Felix",
    "Sophie",
    "Lukas",
    "Emma",
    "Leon",
    "Mia",
    "Noah",
    "Hannah",
    "Elias",
    "Lea",
    "Finn",
    "Clara",
    "Ben",
    "Greta",
    "Theo",
    "Ida",
    "Emil",
    "Frieda",
    "Karl",
    "Nora",
    "Oskar",
    "Lotte",
    "Jakob",
    "Mila",
    "Moritz",
    "Ella",
    "Anton",
    "Luisa",
    "Henry",
    "Johanna",
    "Max",
    "Paula",
    "Jan",
    "Sarah",
    "David",
    "Julia",
    "Tim",
    "Katrin",
    "Tobias",
    "Miriam",
    "Stefan",
    "Sabine",
    "Thomas",
    "Petra",
    "Andreas",
    "Ines",
    "Markus",
    "Helga",
    "Dieter",
    "Birgit",
    "Uwe",
]
LAST = [
    "Müller",
    "Schmidt",
    "Schneider",
    "Fischer",
    "Weber",
    "Meyer",
    "Wagner",
    "Becker",
    "Schulz",
    "Hoffmann",
    "Koch",
    "Richter",
    "Klein",
    "Wolf",
    "Schröder",
    "Neumann",
    "Schwarz",
    "Braun",
    "Zimmermann",
    "Hartmann",
    "Krüger",
    "Lange",
    "Werner",
    "Lehmann",
    "Schmitt",
    "Köhler",
    "Maier",
    "Herrmann",
    "König",
    "Walter",
    "Kaiser",
    "Fuchs",
    "Peters",
    "Vogel",
    "Jung",
    "Roth",
    "Frank",
    "Berger",
    "Winkler",
    "Brandt",
    "Haas",
    "Sommer",
    "Graf",
    "Kraus",
    "Böhm",
    "Simon",
    "Lorenz",
]
JOBS = [
    "Lehrerin",
    "Ingenieur",
    "Ärztin",
    "Bäcker",
    "Pflegerin",
    "Architekt",
    "Informatikerin",
    "Tischler",
    "Buchhalter",
    "Journalistin",
    "Gärtner",
    "Physiotherapeutin",
    "Anwalt",
    "Köchin",
    "Elektriker",
    "Verkäuferin",
    "Polizist",
    "Musikerin",
    "Busfahrer",
    "Apothekerin",
    "Studentin",
    "Rentner",
]
HOBBIES = [
    "Klettern",
    "Schach",
    "Gitarre",
    "Gärtnern",
    "Laufen",
    "Fotografie",
    "Backen",
    "Segeln",
    "Lesen",
    "Malen",
    "Yoga",
    "Angeln",
    "Chor",
    "Tanzen",
    "Radfahren",
    "Stricken",
    "Kochen",
    "Schwimmen",
    "Tennis",
    "Wandern",
]
THINGS = [
    "Winterreifen",
    "Dauerkarte",
    "Bahncard",
    "Garten",
    "Wohnmobil",
    "Klavier",
    "Boot",
    "Jahreskarte",
]
PETS = {
    "Hund": ["Bello", "Rex", "Luna", "Balu", "Emma"],
    "Katze": ["Minka", "Felix", "Mimi"],
    "Pferd": ["Blitz", "Stella"],
    "Kaninchen": ["Hoppel", "Flocke"],
}
ORGS = (
    "Stadtwerke",
    "Bäckerei Sommer",
    "Klinikum",
    "Gymnasium",
    "Bahnhofsbuchhandlung",
    "Tischlerei Holz & Co",
    "Sparkasse",
    "Verlag am Fluss",
    "Gartenbau Grün",
)
HERKUNFT = ("mensch",) * 7 + ("nova",) * 1 + ("modell",) * 1 + ("recherche",) * 1
HUB_CITY, HUB_ORG = "Großstadt Neustadt", "Deutsche Bahn"


@dataclass(slots=True)
class Entity:
    id: str
    user_id: str
    name: str
    name_norm: str
    erstellt: datetime
    kind: str  # person / ort / organisation / tier — what the generator made it as
    characters: set[str] = field(default_factory=set)  # pairs it has facts in


@dataclass(slots=True)
class Fact:
    """One fact relationship: one version of a fact, with every property of
    `kg.models.FACT_PROPERTIES` but the order id (bulk facts come from no order)."""

    id: str
    user_id: str
    character_id: str
    subjekt_id: str
    rel: str  # relationship type (UPPER_SNAKE_CASE), from the canon
    objekt_id: str | None
    wert: str | None
    herkunft: str
    t_valid: datetime
    t_recorded: datetime
    last_touched: datetime
    staerke_decay: float = 1.0
    decay_am: date | None = None
    aktiv: bool = True
    grund: str | None = None
    t_invalid: datetime | None = None
    t_expired: datetime | None = None
    timeline_id: str | None = None
    timeline_bis: str | None = None
    abgeloest_durch: list[str] | None = None
    version: int = 1
    #: The order that wrote it: every fact comes from one (`kg check`'s fact_fields). A
    #: generated fact is its own order's only triple.
    auftrag_id: str = ""

    def __post_init__(self) -> None:
        if not self.auftrag_id:
            self.auftrag_id = f"gen-{self.id}"

    def props(self) -> dict[str, object]:
        """The relationship's properties (nulls are simply not stored)."""
        return {
            "id": self.id,
            "version": self.version,
            "user_id": self.user_id,
            "character_id": self.character_id,
            "herkunft": self.herkunft,
            "auftrag_id": self.auftrag_id,
            "t_valid": self.t_valid,
            "t_invalid": self.t_invalid,
            "t_recorded": self.t_recorded,
            "t_expired": self.t_expired,
            "aktiv": self.aktiv,
            "grund": self.grund,
            "staerke_decay": self.staerke_decay,
            "last_touched": self.last_touched,
            "decay_am": self.decay_am,
            "timeline_id": self.timeline_id,
            "timeline_bis": self.timeline_bis,
            "abgeloest_durch": self.abgeloest_durch,
        }


@dataclass(slots=True)
class Eintrag:
    """A timeline entry (an event of a person: a move)."""

    id: str
    user_id: str
    character_id: str
    titel: str
    beginn: date
    genauigkeit: str
    aktiv: bool
    t_recorded: datetime
    betrifft_id: str
    ersetzt_am: datetime | None = None
    nachfolger_id: str | None = None

    def props(self) -> dict[str, object]:
        return {
            "id": self.id,
            "user_id": self.user_id,
            "character_id": self.character_id,
            "typ": "ereignis",
            "titel": self.titel,
            "beginn": self.beginn,
            "ende": None,
            "genauigkeit": self.genauigkeit,
            "aktiv": self.aktiv,
            "abgesagt": False,
            "t_recorded": self.t_recorded,
            "ersetzt_am": self.ersetzt_am,
        }


@dataclass
class UserGraph:
    """Everything one user owns."""

    index: int
    user_id: str
    characters: list[str]
    entities: list[Entity] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    eintraege: list[Eintrag] = field(default_factory=list)
    hubs: list[Entity] = field(default_factory=list)

    def residence(self, character_id: str, person_id: str) -> str | None:
        """The active wohnt_in object of a person in a pair (for tests)."""
        for f in self.facts:
            if (
                f.subjekt_id == person_id
                and f.rel == "WOHNT_IN"
                and f.aktiv
                and f.character_id == character_id
            ):
                return f.objekt_id
        return None


@dataclass(frozen=True)
class Config:
    """What to generate; `today` anchors every timestamp (and the decay values)."""

    seed: int = 8
    prefix: str = "bench"
    today: date = field(default_factory=lambda: datetime.now(UTC).date())
    swept: bool = True  # True: staerke_decay and decay_am as the sweep of `today` writes them
    hub_every: int = 1500  # user 2 and every n-th user carry hub entities


class _UserBuilder:
    def __init__(self, cfg: Config, canon: Canon, index: int) -> None:
        self.cfg = cfg
        self.canon = canon
        self.rng = random.Random(f"{cfg.seed}:{index}")
        # Ids come from their own stream, salted with the prefix: the same graph under
        # another prefix (a test's own users) gets ids of its own.
        self.ids = random.Random(f"{cfg.prefix}:{cfg.seed}:{index}")
        # The start of `today` (UTC): the instant the day's sweep computes strengths for.
        self.now = moment(cfg.today)
        user_id = f"{cfg.prefix}-u{index:06d}"
        chars = ["nova", "mira"] if self.rng.random() < 1 / 3 else ["nova"]
        self.g = UserGraph(index, user_id, chars)
        self.names: set[str] = set()

    # -- primitives -------------------------------------------------------------

    def new_id(self) -> str:
        return f"{self.ids.getrandbits(128):032x}"

    def past(self, lo_days: float, hi_days: float) -> datetime:
        return self.now - timedelta(seconds=int(self.rng.uniform(lo_days, hi_days) * DAY))

    def recorded(self) -> datetime:
        """When a fact was learned: mostly the last three years, some long ago (resting)."""
        if self.rng.random() < 0.05:
            return self.past(1600, 2200)  # older than ~4.2 years: strength below 0.1
        return self.past(1, 1095)

    def entity(self, name: str, kind: str, erstellt: datetime) -> Entity:
        base, n = name, 2
        norm = normalize_name(name)
        while norm in self.names:  # names are unique within a user
            name, n = f"{base} {n}", n + 1
            norm = normalize_name(name)
        self.names.add(norm)
        e = Entity(self.new_id(), self.g.user_id, name, norm, erstellt, kind)
        self.g.entities.append(e)
        return e

    def strength(self, last_touched: datetime) -> tuple[float, date | None]:
        if not self.cfg.swept:
            return 1.0, None
        return strength(last_touched, self.now, DECAY_RATE), self.cfg.today

    def fact(
        self,
        char: str,
        s: Entity,
        rel: str,
        o: Entity | None = None,
        wert: str | None = None,
        *,
        at: datetime | None = None,
        valid_from: datetime | None = None,
        herkunft: str | None = None,
        timeline_id: str | None = None,
    ) -> Fact:
        """A fact recorded `at` (default: a random past instant), valid from then or from
        `valid_from` (an event's first day)."""
        relation = self.canon[rel]  # raises for anything outside the canon
        assert (o is None) == (relation.objekt == "wert"), rel
        t = at or self.recorded()
        touched = (
            t if self.rng.random() < 0.6 else t + _seconds((self.now - t) * self.rng.random())
        )
        staerke, decay_am = self.strength(touched)
        f = Fact(
            self.new_id(),
            self.g.user_id,
            char,
            s.id,
            relation.rel_type,
            o.id if o else None,
            wert,
            herkunft or self.rng.choice(HERKUNFT),
            t_valid=valid_from or t,
            t_recorded=t,
            last_touched=touched,
            staerke_decay=staerke,
            decay_am=decay_am,
            timeline_id=timeline_id,
        )
        s.characters.add(char)
        if o is not None:
            o.characters.add(char)
        self.g.facts.append(f)
        return f

    def supersede(self, old: Fact, new: Fact, timeline_first: str | None = None) -> None:
        """`old` was the value before `new`, retired as the writer retires it: the order
        that records `new` closes old's current version (t_expired at that instant, no
        longer aktiv, otherwise as recorded) and writes its next version, recorded then:
        superseded, valid until `new` begins (never before old began), its *bis* from
        `new`'s timeline chain when `new` comes from an event."""
        at = new.t_recorded
        if old.last_touched > at:
            old.last_touched = old.t_recorded
        if self.cfg.swept:  # the daily sweep kept the strength until the version closed
            day = at.date()
            old.staerke_decay = strength(old.last_touched, moment(day), DECAY_RATE)
            old.decay_am = day
        old.aktiv, old.t_expired = False, at
        self.g.facts.append(
            dataclasses.replace(
                old,
                version=old.version + 1,
                t_recorded=at,
                t_expired=None,
                grund="abgeloest",
                t_invalid=max(new.t_valid, old.t_valid),
                timeline_bis=timeline_first,
                abgeloest_durch=[new.id],
            )
        )

    def einwertig(
        self,
        char: str,
        s: Entity,
        rel: str,
        o: Entity | None = None,
        wert: str | None = None,
        *,
        old_o: Entity | None = None,
        old_wert: str | None = None,
        herkunft: str | None = None,
    ) -> Fact:
        """A single-valued fact; with an old value, the superseded predecessor first."""
        if old_o is None and old_wert is None:
            return self.fact(char, s, rel, o, wert, herkunft=herkunft)
        t_old = self.past(400, 1400)
        old = self.fact(char, s, rel, old_o, old_wert, at=t_old, herkunft=herkunft)
        new = self.fact(
            char, s, rel, o, wert, at=self.past(1, (self.now - t_old).days - 1), herkunft=herkunft
        )
        self.supersede(old, new)
        return new

    def typ(self, char: str, e: Entity, typ: str, klasse: str | None = None) -> None:
        self.fact(char, e, "typ", wert=typ, at=e.erstellt, herkunft="mensch")
        if klasse:
            self.fact(char, e, "ist_ein", wert=klasse, at=e.erstellt, herkunft="mensch")

    # -- the user's world ---------------------------------------------------------

    def build(self) -> UserGraph:
        rng = self.rng
        countries = ["Deutschland", *rng.sample(sorted(WORLD)[:-1], rng.randint(0, 2))]
        countries = list(dict.fromkeys(c for c in countries if c in WORLD))
        created = self.past(1000, 1100)
        continent = self.entity(CONTINENT, "ort", created)
        cities: list[Entity] = []
        places: list[tuple[Entity, Entity | None, str]] = [(continent, None, "kontinent")]
        for cname in countries:
            country = self.entity(cname, "ort", created)
            places.append((country, continent, "land"))
            regions = rng.sample(sorted(WORLD[cname]), min(len(WORLD[cname]), rng.randint(1, 2)))
            for rname in regions:
                region = self.entity(rname, "ort", created)
                places.append((region, country, "region"))
                pool = WORLD[cname][rname]
                for city_name in rng.sample(pool, min(len(pool), rng.randint(1, 3))):
                    city = self.entity(city_name, "ort", created)
                    places.append((city, region, "stadt"))
                    cities.append(city)
        orgs = []
        for oname in rng.sample(ORGS, rng.randint(1, 3)):
            org = self.entity(f"{oname} {rng.choice(cities).name}", "organisation", created)
            orgs.append(org)
        hub = self.cfg.hub_every and (
            self.g.index == 2 or (self.g.index and self.g.index % self.cfg.hub_every == 0)
        )
        hub_city = hub_org = None
        if hub:
            hub_city = self.entity(HUB_CITY, "ort", created)
            places.append((hub_city, places[1][0], "stadt"))
            cities.append(hub_city)
            hub_org = self.entity(HUB_ORG, "organisation", created)
            orgs.append(hub_org)
            self.g.hubs += [hub_city, hub_org]

        for char in self.g.characters:  # world knowledge belongs to every pair that uses it
            for place, parent, level in places:
                self.typ(char, place, "ort", CLASS_OF_LEVEL[level])
                if parent is not None:
                    self.fact(char, place, "liegt_in", parent, herkunft="modell")
            plain = cities[:-1] if hub_city else cities
            for org in orgs:
                self.typ(char, org, "organisation", "Firma")
                if org is hub_org:
                    self.fact(char, org, "liegt_in", hub_city, herkunft="recherche")
                    continue
                # One site: liegt_in is mehrwertig, so a former site is never
                # superseded (the generator once wrote it so, a shape the writer never
                # writes, and `kg check` now says so).
                self.fact(char, org, "liegt_in", rng.choice(plain), herkunft="recherche")

        for char in self.g.characters:
            share = 1.0 if char == "nova" else 0.4
            n = max(3, round(rng.randint(6, 18) * share))
            self.people(char, n, cities, orgs if not hub_org else orgs[:-1])
        if hub_city is not None and hub_org is not None:
            self.hub_people(hub_city, hub_org, rng.randint(300, 600))
        return self.g

    def people(self, char: str, n: int, cities: list[Entity], orgs: list[Entity]) -> None:
        rng = self.rng
        people = []
        for _ in range(n):
            p = self.entity(
                f"{rng.choice(FIRST)} {rng.choice(LAST)}", "person", self.past(900, 1100)
            )
            people.append(p)
            self.typ(char, p, "person", rng.choice([None, None, "Mensch", "Freundin", "Freund"]))
            home = rng.choice(cities)
            if rng.random() < 0.45:
                old_home = rng.choice([c for c in cities if c is not home] or [home])
                if old_home is home:
                    self.fact(char, p, "wohnt_in", home)
                elif rng.random() < 0.45:
                    self.move(char, p, old_home, home)
                else:
                    self.einwertig(char, p, "wohnt_in", home, old_o=old_home)
            else:
                self.fact(char, p, "wohnt_in", home)
            if rng.random() < 0.5:
                self.fact(char, p, "geburtsort", rng.choice(cities))
            if rng.random() < 0.85:
                job = rng.choice(JOBS)
                old_job = rng.choice(JOBS) if rng.random() < 0.45 else None
                self.einwertig(
                    char, p, "beruf", wert=job, old_wert=old_job if old_job != job else None
                )
            if orgs and rng.random() < 0.4:
                org = rng.choice(orgs)
                old = rng.choice(orgs) if rng.random() < 0.45 else None
                self.einwertig(char, p, "arbeitet_bei", org, old_o=old if old is not org else None)
            for hobby in rng.sample(HOBBIES, rng.randint(0, 3)):
                self.fact(char, p, "hobby", wert=hobby)
            for thing in rng.sample(THINGS, rng.choices([0, 1, 2], [6, 3, 1])[0]):
                self.fact(char, p, "hat", wert=thing)
            if rng.random() < 0.3:
                for _ in range(rng.choice([1, 1, 2])):
                    art = rng.choice(sorted(PETS))
                    pet = self.entity(rng.choice(PETS[art]), "tier", self.past(300, 900))
                    self.typ(char, pet, "tier", art)
                    self.fact(char, p, "hat_haustier", pet)
                    if rng.random() < 0.3:
                        self.fact(char, pet, "begleitet", p)
        # Relations between people: partner is einwertig from both ends (a matching).
        free = people[:]
        rng.shuffle(free)
        while len(free) >= 2 and rng.random() < 0.6:
            a, b = free.pop(), free.pop()
            if free and rng.random() < 0.35:
                ex = free.pop()  # a's former partner, now single
                self.einwertig(char, a, "partner", b, old_o=ex)
            else:
                self.fact(char, a, "partner", b)
        for _ in range(n // 3):
            a, b = rng.sample(people, 2)
            self.fact(char, a, "geschwister", b)
        for _ in range(n // 2):
            a, b = rng.sample(people, 2)
            self.fact(char, a, "befreundet_mit", b)
        for _ in range(n // 4):
            a, b = rng.sample(people, 2)
            self.fact(char, a, "elternteil_von", b)
        self.dedupe(char)

    def dedupe(self, char: str) -> None:
        """No two identical active facts (random picks can repeat a pair)."""
        seen: set[tuple[str, str, str | None, str | None]] = set()
        keep = []
        for f in self.g.facts:
            if f.character_id == char and f.aktiv:
                key = (f.subjekt_id, f.rel, f.objekt_id, f.wert)
                sym = (f.objekt_id or "", f.rel, f.subjekt_id, f.wert)
                if key in seen or (self.canon.by_type[f.rel].symmetrisch and sym in seen):
                    continue
                seen.add(key)
            keep.append(f)
        self.g.facts = keep

    def move(self, char: str, p: Entity, old_home: Entity, home: Entity) -> None:
        """A move as an event (month precision), sometimes moved again: a NACHFOLGER chain."""
        rng = self.rng
        t_old = self.past(500, 1400)
        old = self.fact(char, p, "wohnt_in", old_home, at=t_old)
        said = self.past(30, (self.now - t_old).days - 30)
        month = (said + timedelta(days=rng.randint(20, 120))).date().replace(day=1)
        first = Eintrag(
            self.new_id(),
            self.g.user_id,
            char,
            f"{p.name} zieht nach {home.name}",
            month,
            "monat",
            True,
            said,
            p.id,
        )
        chain = [first]
        for _ in range(rng.choices([0, 1, 2], [6, 3, 1])[0]):
            prev = chain[-1]
            later = prev.beginn + timedelta(days=rng.randint(31, 95))
            # Each move recorded after the entry it replaces (kg check's
            # timeline_system_time), and before now.
            moved = min(
                prev.t_recorded + timedelta(seconds=int(rng.uniform(1, 20) * DAY)),
                self.now - timedelta(hours=1),
            )
            if moved <= prev.t_recorded:
                break  # no room left before now: the chain ends here
            nxt = Eintrag(
                self.new_id(),
                self.g.user_id,
                char,
                prev.titel,
                later.replace(day=1),
                "monat",
                True,
                moved,
                p.id,
            )
            prev.aktiv, prev.ersetzt_am, prev.nachfolger_id = False, moved, nxt.id
            chain.append(nxt)
        self.g.eintraege += chain
        # Told on `said` with the event: valid from the first day of the event's month
        # (its chain's active entry gives the date readers show).
        new = self.fact(
            char, p, "wohnt_in", home, at=said, valid_from=day_start(month), timeline_id=first.id
        )
        self.supersede(old, new, timeline_first=first.id)

    def hub_people(self, hub_city: Entity, hub_org: Entity, n: int) -> None:
        """Hundreds of plain residents of one city, many of them at one employer."""
        rng = self.rng
        for _ in range(n):
            p = self.entity(
                f"{rng.choice(FIRST)} {rng.choice(LAST)}", "person", self.past(300, 900)
            )
            self.typ("nova", p, "person")
            self.fact("nova", p, "wohnt_in", hub_city)
            if rng.random() < 0.5:
                self.fact("nova", p, "arbeitet_bei", hub_org)
            if rng.random() < 0.5:
                self.fact("nova", p, "hobby", wert=rng.choice(HOBBIES))


def _seconds(span: timedelta) -> timedelta:
    """`span` without its fraction of a second."""
    return timedelta(days=span.days, seconds=span.seconds)


def user(cfg: Config, canon: Canon, index: int) -> UserGraph:
    """User number `index` of the configuration (always the same graph)."""
    return _UserBuilder(cfg, canon, index).build()


def users(cfg: Config, canon: Canon, start: int = 0) -> Iterator[UserGraph]:
    """Users `start`, `start + 1`, ... without end."""
    index = start
    while True:
        yield user(cfg, canon, index)
        index += 1
