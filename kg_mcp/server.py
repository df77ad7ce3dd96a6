"""The MCP tools: each one a thin call of a `kg.Memory` method for the bound pair.

No tool takes a user or a character: the pair comes from the `Binding` (the process's
configuration over stdio, the bearer token over HTTP). Arguments are typed with the
library's own pydantic types, so the JSON schemas a client sees are the library's, and
the library validates again. Failures come back as MCP tool errors in plain words:
`KgError` messages as they are, argument problems as "field: what is wrong", an
ambiguous name with its candidates and their ids to retry with.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from datetime import date
from typing import Annotated, Any, TypeVar

from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import BeforeValidator, Field, ValidationError

from kg.api import Aufloesung, Memory, parse_order, zeitpunkt_without_replacement
from kg.errors import AmbiguousEntity, InvalidInput, KgError
from kg.mappe import Mappe, MappeFakt, render
from kg.models import (
    Absage,
    Auftrag,
    AuftragErgebnis,
    AwareDatetime,
    Berichtigung,
    ById,
    Entitaet,
    EntityRef,
    Frozen,
    Genauigkeit,
    Ident,
    Kandidat,
    Name,
    NeuerEintrag,
    New,
    StartDatetime,
    Tripel,
    TripelOderRoh,
    instant,
    normalize_name,
)
from kg.plain import problems
from kg.settings import MAPPE_CAP_MAX, MAPPEN_MAX
from kg.timeline import Eintrag, month_window
from kg_mcp.binding import Binding, PairRef, TokenPair, Unbound

T = TypeVar("T")

INSTRUCTIONS = """\
The long-term fact memory of one pair (a human and a character). Facts are triples
subject → relation → object (an entity) or wert (a value); relations come from a fixed
canon. Read an entity's dossier with `mappe` before answering about it; write what the
human said with `write` (one order per turn, with a unique auftrag_id; sending the same
id again replays the outcome as `wiederholt`). When a name is ambiguous, the answer
lists candidates with ids: ask the human which one is meant and retry with the id.
Dates live only in the timeline (`timeline_*`)."""

#: Argument names that would name a pair; no tool has them, a call that sends one is
#: refused with an explanation instead of being silently ignored.
PAIR_WORDS = frozenset({"user", "userid", "character", "characterid", "pair", "paar"})


def names_the_pair(argument: str) -> bool:
    """True for an argument that tries to name the pair, however it is written
    (`user_id`, `userId`, `USER-ID`, `character`, `pair`)."""
    return "".join(c for c in argument.lower() if c.isalpha()) in PAIR_WORDS

# -- argument types (the library's types, described for a model) ---------------------

EntityArg = Annotated[
    Name,
    Field(description="An entity's name (e.g. 'Lena') or its id (from an earlier answer)."),
]
def _point_of_time(value: object) -> object:
    """A point of time read as the library and the CLI read one (`kg.models.instant`):
    the same forms, the same instant (a date: the end of that day, UTC), the same
    refusals. Pydantic's own date and datetime types read more: a number as days of 1970,
    `20261130`, and `0001-01-01T00:00:00+01:00` as the day 0001-01-01."""
    if value is None:
        return None
    try:
        return instant(value, "")  # type: ignore[arg-type]  # instant() refuses other types
    except InvalidInput as exc:
        raise ValueError(str(exc).strip()) from None


WhenArg = Annotated[
    # _point_of_time makes every value an aware datetime; the date branch stays for the
    # JSON schema, which tells a client that a bare date is taken.
    AwareDatetime | date | None,
    BeforeValidator(_point_of_time),
    Field(
        description="A date (YYYY-MM-DD, meaning the end of that day, UTC) or an ISO instant "
        "with a time zone (2026-11-30T18:00:00Z)."
    ),
]
def _no_bool(value: object) -> object:
    """A count is a number: pydantic's lax int would read true as 1."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is not a number; give a whole number")
    return value


BudgetArg = Annotated[
    int,
    BeforeValidator(_no_bool),
    Field(ge=100, le=20_000, description="Most characters of the German prompt text."),
]
CapArg = Annotated[
    # The bounds on the number alone: on `int | None` they applied to null too, and a
    # cap sent as null (the default, as when left out) failed ("Unable to apply
    # constraint 'ge' to supplied value None").
    Annotated[int, Field(ge=1, le=MAPPE_CAP_MAX)] | None,
    BeforeValidator(_no_bool),
    Field(description="Most facts (default: the store's cap)."),
]
AuftragIdArg = Annotated[Ident, Field(description=Auftrag.model_fields["auftrag_id"].description)]


# -- output models -------------------------------------------------------------------


class MappeAntwort(Frozen):
    """A Mappe with its German prompt text."""

    text: str = Field(description="The Mappe as a compact German text block for a prompt.")
    mappe: Mappe


class MappenAntwort(Frozen):
    """The Mappen of several entities, in the order asked."""

    text: str = Field(description="All Mappen as German text blocks, separated by blank lines.")
    mappen: list[Mappe]


class PaarStatus(Frozen):
    """The store as this pair sees it (no other pair's counts)."""

    user_id: str = Field(description="The human this server is bound to.")
    character_id: str = Field(description="The character this server is bound to.")
    version: str = Field(description="Neo4j version.")
    edition: str = Field(description="Neo4j edition.")
    schema_version: int = Field(description="Schema migrations applied.")
    schema_needed: int = Field(description="Schema migrations this package has.")


# -- errors in words -------------------------------------------------------------------


def candidate_line(k: Kandidat) -> str:
    return f"id {k.id}: {k.name} ({k.typ}) — {'; '.join(k.merkmale) or 'no facts yet'}"


def candidates_text(name: str, kandidaten: list[Kandidat]) -> str:
    lines = [
        f"{name!r} is ambiguous: {len(kandidaten)} entities have that name. "
        "Ask the human which one is meant and retry with its id:"
    ]
    lines += [f"- {candidate_line(k)}" for k in kandidaten]
    return "\n".join(lines)


def in_words(error: KgError | Unbound, asked: str | None = None) -> str:
    if isinstance(error, AmbiguousEntity):
        return candidates_text(asked or "the name", list(error.kandidaten))
    return str(error)


def validation_text(tool: str, error: ValidationError) -> str:
    """`field: what is wrong` per argument, as the library words it (no validator names
    or pydantic prefixes)."""
    found = problems(error)
    shown = [f"{p.where or 'arguments'}: {p.message}" for p in found[:5]]
    tail = f" (and {len(found) - len(shown)} more)" if len(found) > len(shown) else ""
    return f"invalid arguments for {tool} — " + "; ".join(shown) + tail


@contextmanager
def plain_words(asked: str | None = None) -> Iterator[None]:
    """The library's domain errors become tool errors in words (never a traceback)."""
    try:
        yield
    except (KgError, Unbound) as error:
        raise ToolError(in_words(error, asked)) from None


async def guarded(call: Awaitable[T], asked: str | None = None) -> T:
    """Await a library call with `plain_words`."""
    with plain_words(asked):
        return await call


def outcome_text(result: AuftragErgebnis) -> str:
    """An order's outcome in a few lines for a model to read (the structure has it all)."""
    head = f"Auftrag {result.auftrag_id}: {result.status}"
    if result.wiederholt:
        head += " (wiederholt: written before, nothing written again)"
    lines = [head]
    for r in result.ergebnisse:
        lines.append(f"[{r.index}] {r.ausgang}: {r.detail()}")
        lines += [f"    candidate {candidate_line(k)}" for k in r.kandidaten]
    return "\n".join(lines)


# -- the server ------------------------------------------------------------------------


class PairServer(MCPServer[Any]):
    """MCPServer whose tool errors are plain words and whose tools take no extra argument."""

    _schemas: dict[str, set[str]] | None = None

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        if self._schemas is None:
            self._schemas = {
                t.name: set(t.input_schema.get("properties", {})) for t in await self.list_tools()
            }
        if name not in self._schemas:
            raise ToolError(
                f"there is no tool {name!r}; the tools are: {', '.join(sorted(self._schemas))}"
            )
        extra = sorted(set(arguments) - self._schemas[name])
        if extra:
            why = (
                " — the pair is fixed by the server's configuration; no tool can name a user "
                "or a character"
                if any(names_the_pair(e) for e in extra)
                else ""
            )
            raise ToolError(f"{name} takes no argument {', '.join(map(repr, extra))}{why}")
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as error:
            if isinstance(error.__cause__, ValidationError):
                raise ToolError(validation_text(name, error.__cause__)) from None
            if isinstance(error.__cause__, ToolError | ResourceError):
                # The library's words as they are: the SDK puts "Error executing tool
                # <name>:" before a tool's own error, which the docs keep for a crash.
                raise ToolError(str(error.__cause__)) from None
            raise


def build_server(
    memory: Memory,
    binding: Binding,
    *,
    http_url: str | None = None,
    name: str = "faktengedaechtnis",
) -> MCPServer[Any]:
    """The MCP server over `memory`; every call acts for `binding.pair()`.

    With `http_url` (the server's own base URL) and a `TokenPair` binding, the SDK's
    bearer middleware refuses requests without a known token before any tool runs.
    """
    auth: dict[str, Any] = {}
    if isinstance(binding, TokenPair):
        if http_url is None:
            raise ValueError("a token binding needs the server's http_url")
        auth = {
            "auth": AuthSettings(
                issuer_url=http_url,
                resource_server_url=None,
                validate_token_resource=False,  # the verifier binds tokens to pairs itself
            ),
            "token_verifier": binding.verifier,
        }
    # Warnings only: stdio clients show stderr as the server log; calls are not news.
    server = PairServer(name, instructions=INSTRUCTIONS, log_level="WARNING", **auth)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)

    def pair() -> PairRef:
        try:
            return binding.pair()
        except Unbound as error:
            raise ToolError(str(error)) from None

    async def entity_id(p: PairRef, entitaet: str) -> str:
        return await guarded(memory.entity_id(p.user_id, p.character_id, entitaet), entitaet)

    async def same_place(p: PairRef, falsch: Berichtigung, richtig: Tripel) -> None:
        """`richtig` takes the wrong fact's place: the same subject and relation. Another
        one would be written as news beside the correction (or retire the wrong fact and
        be refused itself), so the call is refused before anything is written."""

        def written(ref: EntityRef) -> str:
            return ref.id if isinstance(ref, ById) else str(getattr(ref, "neu", ref))

        def key(ref: EntityRef) -> str:
            return ref.id if isinstance(ref, ById) else normalize_name(written(ref))

        async def resolved(ref: EntityRef) -> str | None:
            """Its id; None when there is none; "" when the name is ambiguous (the plan
            then answers that part `mehrdeutig` with the candidates, and holds back the
            other)."""
            try:
                return await memory.entity_id(p.user_id, p.character_id, written(ref))
            except AmbiguousEntity:
                return ""
            except KgError:
                return None

        async def same_subject() -> bool:
            a, b = falsch.subjekt, richtig.subjekt
            if isinstance(a, New) or isinstance(b, New):
                return False  # a new entity is another one, whatever its name
            if key(a) == key(b):
                return True
            if isinstance(a, ById) == isinstance(b, ById):
                return False
            ids = {await resolved(a), await resolved(b)}
            return "" in ids or (len(ids) == 1 and None not in ids)

        # (a relation in another case is the same one: the plan says it is unknown)
        link = memory.canon.link_key
        same = link(falsch.beziehung) == link(richtig.beziehung) and await same_subject()
        if not same:
            raise ToolError(
                f"richtig ({written(richtig.subjekt)} {richtig.beziehung}) takes the place of "
                f"falsch ({written(falsch.subjekt)} {falsch.beziehung}), so it must be a fact "
                "of the same "
                "subject and relation; nothing was written — to write another fact, use "
                "write (a correction and its replacement are written together or not at all)"
            )

    # -- reading ----------------------------------------------------------------

    @server.tool(annotations=read_only)
    async def mappe(
        entitaet: EntityArg,
        gueltig_am: WhenArg = None,
        bekannt_am: WhenArg = None,
        budget: BudgetArg = 1500,
        cap: CapArg = None,
    ) -> Annotated[CallToolResult, MappeAntwort]:
        """The Mappe (dossier) of one entity: its active facts to the second degree in both
        directions (and values superseded from a day ahead while they still hold, or,
        told of another entity, while they are to come, with their `bis`), superseded
        values as history, knowledge derived at read time, and a compact German text
        block for the prompt. `gueltig_am` reads what held on a date,
        `bekannt_am` what was known on a date; `mappe.stand` is the instant the answer
        stands at (with it as `bekannt_am`, and `gueltig_am` the instant of this read, the
        store tells what it knew then, whatever was written since). An ambiguous name
        answers with candidates: retry with an id."""
        p = pair()
        eid = await entity_id(p, entitaet)
        result = await guarded(
            memory.mappe(
                p.user_id,
                p.character_id,
                eid,
                gueltig_am=gueltig_am,
                bekannt_am=bekannt_am,
                cap=cap,
            )
        )
        antwort = MappeAntwort(text=render(result, budget), mappe=result)
        return CallToolResult(
            content=[TextContent(type="text", text=antwort.text)],
            structured_content=antwort.model_dump(mode="json"),
        )

    @server.tool(annotations=read_only)
    async def mappen(
        entitaeten: Annotated[
            list[EntityArg],
            Field(min_length=1, max_length=MAPPEN_MAX,
                  description="Names or ids of the turn's entities."),
        ],
        gueltig_am: WhenArg = None,
        bekannt_am: WhenArg = None,
        budget: BudgetArg = 1500,
        cap: CapArg = None,
    ) -> Annotated[CallToolResult, MappenAntwort]:
        """The Mappen of all entities of a turn in one call and one read of the store (names
        are resolved first). `budget` applies to each entity's text block."""
        p = pair()
        ids = [await entity_id(p, e) for e in entitaeten]
        result = await guarded(
            memory.mappen(
                p.user_id,
                p.character_id,
                ids,
                gueltig_am=gueltig_am,
                bekannt_am=bekannt_am,
                cap=cap,
            )
        )
        antwort = MappenAntwort(text="\n\n".join(render(m, budget) for m in result), mappen=result)
        return CallToolResult(
            content=[TextContent(type="text", text=antwort.text)],
            structured_content=antwort.model_dump(mode="json"),
        )

    @server.tool(annotations=read_only, structured_output=True)
    async def history(
        entitaet: EntityArg,
        beziehung: Annotated[
            Ident | None, Field(description="Only this canon relation, e.g. wohnt_in.")
        ] = None,
        gueltig_am: WhenArg = None,
        bekannt_am: WhenArg = None,
    ) -> list[MappeFakt]:
        """Every value an entity's relations ever had, with ab/bis ("where did Lena live
        before?"). Corrected (never true) facts are not history and do not appear.
        `bekannt_am` lists every value known on a date, `gueltig_am` only the values
        that had begun by then."""
        p = pair()
        eid = await entity_id(p, entitaet)
        return await guarded(memory.history(p.user_id, p.character_id, eid, beziehung,
                                            gueltig_am=gueltig_am, bekannt_am=bekannt_am))

    @server.tool(annotations=read_only)
    async def resolve(
        name: Annotated[Name, Field(description="The name to look up.")],
    ) -> Aufloesung:
        """A name → its entity, or all candidates when several entities share the name (with
        what tells them apart). Writes nothing; an empty answer means the name is unknown."""
        p = pair()
        return await guarded(memory.resolve(p.user_id, p.character_id, name))

    @server.tool(annotations=read_only, structured_output=True)
    async def entities(
        limit: Annotated[
            int, BeforeValidator(_no_bool), Field(ge=1, le=1000, description="Most entities.")
        ] = 200,
    ) -> list[Entitaet]:
        """The human's entities with their type and the number of this pair's active facts."""
        p = pair()
        return await guarded(memory.entities(p.user_id, p.character_id, limit))

    # -- writing ----------------------------------------------------------------

    async def write_order(p: PairRef, data: dict[str, Any]) -> CallToolResult:
        with plain_words():
            order = parse_order(data | {"user_id": p.user_id, "character_id": p.character_id})
        result = await guarded(memory.write(order))
        return CallToolResult(
            content=[TextContent(type="text", text=outcome_text(result))],
            structured_content=result.model_dump(mode="json"),
        )

    @server.tool(annotations=writes)
    async def write(
        auftrag_id: AuftragIdArg,
        tripel: Annotated[
            list[TripelOderRoh] | None,
            Field(max_length=200, description=Auftrag.model_fields["tripel"].description),
        ] = None,
        berichtigungen: Annotated[
            list[Berichtigung] | None,
            Field(max_length=200, description=Auftrag.model_fields["berichtigungen"].description),
        ] = None,
        zeitpunkt: Annotated[
            StartDatetime | None,
            Field(description="When the triples became true: an ISO instant with a time zone, "
                  "or a day (YYYY-MM-DD, its start, UTC); default now."),
        ] = None,
    ) -> Annotated[CallToolResult, AuftragErgebnis]:
        """Write one order (Auftrag) of a chat turn through the Fakten-Agent, in one
        transaction: each triple is checked against the canon and the existing facts and
        gets its own outcome (geschrieben, abgeloest, unveraendert, berichtigt, mehrdeutig
        with candidates, abgelehnt with a reason). The same auftrag_id is never written
        twice: sending it again returns the first outcome with `wiederholt: true`."""
        data: dict[str, Any] = {"auftrag_id": auftrag_id}
        if tripel:
            data["tripel"] = tripel
        if berichtigungen:
            data["berichtigungen"] = berichtigungen
        if zeitpunkt is not None:
            data["zeitpunkt"] = zeitpunkt
        return await write_order(pair(), data)

    @server.tool(annotations=writes)
    async def correct(
        auftrag_id: AuftragIdArg,
        falsch: Annotated[Berichtigung, Field(description="The wrong fact (never true).")],
        richtig: Annotated[
            Tripel | None, Field(description="Its replacement, written in the same order.")
        ] = None,
        zeitpunkt: Annotated[
            StartDatetime | None,
            Field(description="When the replacement began: an ISO instant with a time zone, "
                  "or a day (YYYY-MM-DD, its start, UTC); default: where the wrong fact began."),
        ] = None,
    ) -> Annotated[CallToolResult, AuftragErgebnis]:
        """Correct a wrong fact: it is retired as never true (not superseded), optionally
        with the right fact in the same order, which takes the wrong one's place (from
        where it began, unless zeitpunkt says when). Replays by auftrag_id like `write`."""
        if zeitpunkt is not None and richtig is None:
            raise ToolError(str(zeitpunkt_without_replacement("zeitpunkt", "richtig")))
        data: dict[str, Any] = {"auftrag_id": auftrag_id, "berichtigungen": [falsch]}
        if richtig is not None:
            await same_place(pair(), falsch, richtig)
            data["tripel"] = [richtig]
        if zeitpunkt is not None:
            data["zeitpunkt"] = zeitpunkt
        return await write_order(pair(), data)

    # -- timeline ---------------------------------------------------------------

    @server.tool(annotations=writes)
    async def timeline_add(
        eintrag: Annotated[NeuerEintrag, Field(description="The entry to add.")],
        betrifft: Annotated[
            Name | None,
            Field(description="For an ereignis: the entity (name or id) it happens to."),
        ] = None,
    ) -> Eintrag:
        """Add a dated entry (termin, geburtstag, deadline, jahrestag, erinnerung, ereignis)
        to the pair's timeline; use genauigkeit 'monat' when only the month is known."""
        p = pair()
        person = await entity_id(p, betrifft) if betrifft else None
        return await guarded(memory.timeline_add(p.user_id, p.character_id, eintrag, person))

    @server.tool(annotations=writes)
    async def timeline_move(
        eintrag_id: Annotated[Ident, Field(description="The active entry of the chain.")],
        beginn: Annotated[date, Field(description="The new first day.")],
        ende: Annotated[date | None, Field(description="The new last day of a span.")] = None,
        genauigkeit: Annotated[
            Genauigkeit | None, Field(description="New precision: tag or monat.")
        ] = None,
    ) -> Eintrag:
        """Move an entry: a successor replaces it (old -[:NACHFOLGER]-> new), and facts valid
        from the event follow it without being touched."""
        p = pair()
        return await guarded(
            memory.timeline_move(
                p.user_id, p.character_id, eintrag_id, beginn, ende=ende, genauigkeit=genauigkeit
            )
        )

    @server.tool(annotations=writes)
    async def timeline_cancel(
        eintrag_id: Annotated[Ident, Field(description="The active entry of the chain.")],
    ) -> Absage:
        """Cancel an entry (it does not happen): facts valid from it are retired as never
        true and the values they had superseded hold again."""
        p = pair()
        return await guarded(memory.timeline_cancel(p.user_id, p.character_id, eintrag_id))

    @server.tool(annotations=read_only, structured_output=True)
    async def timeline_list(
        monat: Annotated[
            str | None, Field(pattern=r"^\d{4}-\d{2}$", description="A month, YYYY-MM.")
        ] = None,
        von: Annotated[date | None, Field(description="Window start (with bis).")] = None,
        bis: Annotated[date | None, Field(description="Window end (with von).")] = None,
        eintrag_id: Annotated[
            Ident | None, Field(description="Instead: the whole chain of this entry.")
        ] = None,
    ) -> list[Eintrag]:
        """The pair's active entries in a month (`monat`) or a window (`von`, `bis`), or the
        whole NACHFOLGER chain of one entry (`eintrag_id`), oldest first."""
        p = pair()
        given = [name for name, value in (("monat", monat), ("von", von), ("bis", bis),
                                          ("eintrag_id", eintrag_id)) if value is not None]
        if len(given) > 1 and set(given) != {"von", "bis"}:
            raise ToolError(f"give one of monat, von and bis, or eintrag_id, not "
                            f"{' and '.join(given)}")
        if eintrag_id is not None:
            return await guarded(memory.timeline_chain(p.user_id, p.character_id, eintrag_id))
        if monat is not None:
            with plain_words():
                first, last = month_window(monat)
        elif von is not None and bis is not None:
            first, last = von, bis
        else:
            raise ToolError("give monat (YYYY-MM), or von and bis, or eintrag_id")
        return await guarded(memory.timeline_window(p.user_id, p.character_id, first, last))

    # -- status -----------------------------------------------------------------

    @server.tool(annotations=read_only)
    async def status() -> PaarStatus:
        """The pair this server is bound to, the Neo4j version and the schema state."""
        p = pair()
        s = await guarded(memory.status())
        return PaarStatus(
            user_id=p.user_id,
            character_id=p.character_id,
            version=s.version,
            edition=s.edition,
            schema_version=s.schema_version,
            schema_needed=s.schema_needed,
        )

    # -- resource ---------------------------------------------------------------

    @server.resource(
        "mappe://{name}",
        name="mappe",
        description="The Mappe of an entity (name or id) as German prompt text.",
        mime_type="text/plain",
    )
    async def mappe_resource(name: str) -> str:
        try:
            p = binding.pair()
            eid = await memory.entity_id(p.user_id, p.character_id, name)
            return render(await memory.mappe(p.user_id, p.character_id, eid))
        except (KgError, Unbound) as error:
            raise ResourceError(in_words(error, name)) from None

    return server


