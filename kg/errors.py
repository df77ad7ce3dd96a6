"""One root for every failure a caller can act on.

Each message says what happened and what to do next. The CLI turns these into a
one-line message and an exit code; the library never prints.
"""

from __future__ import annotations

from typing import Any


class KgError(Exception):
    """Root of all errors raised by the fact memory."""

    exit_code = 1


class ConfigError(KgError):
    """The configuration (settings, canon file) is invalid."""

    exit_code = 2


class QueryLoadError(KgError):
    """A `.cypher` file could not be parsed into named queries."""

    exit_code = 2


class ServerUnavailable(KgError):
    """Neo4j does not answer (down, wrong address, or timed out)."""

    exit_code = 3


class AuthFailed(KgError):
    """Neo4j refused the username or password."""

    exit_code = 3


class DatabaseNotFound(KgError):
    """The configured database does not exist on the server."""

    exit_code = 3


class SchemaError(KgError):
    """The schema in the graph does not match the migrations of this package."""

    exit_code = 4


class SchemaOutdated(SchemaError):
    """The database's schema is older than this package needs."""


class MemoryLimitExceeded(KgError):
    """Neo4j refused a query for memory: it needed more than the server allows one
    transaction, or the memory of all transactions ran out while it ran. Neo4j reports
    it as a transient error, but a query that filled the memory alone asks for the same
    again, so the library does not retry it: try once more later, and if it fails again,
    ask for less, or give the server more memory. The refused transaction wrote
    nothing."""

    exit_code = 2


class InvalidInput(KgError):
    """Input (an order, a date, a file line) is malformed."""

    exit_code = 2


class UsageError(KgError):
    """The library is used in a way it cannot serve: a closed `SyncMemory`, or one
    called from code that runs in an event loop (await `Memory` there)."""

    exit_code = 2


class UnknownRelation(InvalidInput):
    """A relation name is not in the canon."""


class NothingStored(InvalidInput):
    """The store holds nothing of the user (or pair) an export, check or purge names: a
    typo in an id, most likely, or a purge that ran already (its answer lost, and now
    retried). Nothing was done; a caller that retries a purge may take it as done."""


class EntityNotFound(KgError):
    """No entity of this user has that id or name."""

    exit_code = 6


class AmbiguousEntity(KgError):
    """A name matches several entities: ask the human which one and retry with an id."""

    exit_code = 7

    def __init__(self, message: str, kandidaten: list[Any]) -> None:
        super().__init__(message)
        self.kandidaten = kandidaten


class TimelineError(KgError):
    """A timeline operation is not allowed (a cancelled entry, a chain that would name two
    people, ...), or names what the pair does not hold (the two below)."""

    exit_code = 8


class UnknownEntry(TimelineError):
    """No timeline entry of this pair has that id: exit 6, as an unknown entity (it was
    8, "timeline rule broken", which sends a script looking for a rule)."""

    exit_code = 6


class UnknownTimelineEntity(EntityNotFound, TimelineError):
    """A timeline operation names an entity id this user does not hold (exit 6)."""


class StoredDataError(KgError):
    """A stored value has a type or form the query cannot work with: the store was
    changed outside the library (by hand, or by an older version). `kg check` names the
    values; repair them, or restore the user from an export."""

    exit_code = 1

    #: What the server said, where a query failed on such a value (`kg check` shows it
    #: for a check that could not run, without the advice to run `kg check`).
    server_message: str | None = None

    @classmethod
    def of(
        cls, kind: str, ident: object, prop: str, value: object, why: str | None = None
    ) -> StoredDataError:
        """The error for one stored value that a read cannot turn into its model: the
        thing (`kind` and its id, when it has one), the property, what it holds, and
        what to do. A reader raises this, never the error of a model or a conversion,
        which would read as a bug in kg or as a fault of the caller's input."""
        where = f"{kind} {ident!r}" if ident is not None and prop != "id" else f"a {kind}"
        if value is None:
            held = "missing"
        else:
            shown = repr(value)
            shown = shown if len(shown) <= 60 else shown[:59] + "…"
            held = f"{shown} ({type(value).__name__})"
        return cls(
            f"{where}: its stored {prop} is {held}{f', {why}' if why else ''} — changed "
            "outside the library (by hand or by an older version); run `kg check` to find "
            "every such value, then repair them or restore the user from an export"
        )


class WriteNotConfirmed(KgError):
    """The server failed while an order was being written; its outcome is unknown.

    Nothing of the order is half-applied (one order is one transaction). Replay the
    same order with the same `auftrag_id`: it is either written now or reported as
    `wiederholt` if it had committed.
    """

    exit_code = 3
