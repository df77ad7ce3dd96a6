"""Faktengedächtnis: the long-term fact memory of an AI chat companion, on Neo4j.

    async with await Memory.open() as memory:
        result = await memory.write({...})
        mappe = await memory.mappe("u1", "nova", lena_id)
"""

from kg.api import AuditEintrag, Aufloesung, Memory, Status, SyncMemory, parse_order
from kg.canon import Canon, Relation, load_canon
from kg.errors import (
    AmbiguousEntity,
    AuthFailed,
    ConfigError,
    DatabaseNotFound,
    EntityNotFound,
    InvalidInput,
    KgError,
    MemoryLimitExceeded,
    NothingStored,
    SchemaError,
    SchemaOutdated,
    ServerUnavailable,
    TimelineError,
    UnknownRelation,
    WriteNotConfirmed,
)
from kg.mappe import Mappe, MappeFakt, render
from kg.models import (
    Auftrag,
    AuftragErgebnis,
    Berichtigung,
    Entitaet,
    Kandidat,
    NeuerEintrag,
    Tripel,
    TripelErgebnis,
)
from kg.settings import Settings
from kg.timeline import Eintrag

__all__ = [
    "AmbiguousEntity",
    "AuditEintrag",
    "Aufloesung",
    "Auftrag",
    "AuftragErgebnis",
    "AuthFailed",
    "Berichtigung",
    "Canon",
    "ConfigError",
    "DatabaseNotFound",
    "Eintrag",
    "Entitaet",
    "EntityNotFound",
    "InvalidInput",
    "Kandidat",
    "KgError",
    "Mappe",
    "MappeFakt",
    "Memory",
    "MemoryLimitExceeded",
    "NeuerEintrag",
    "NothingStored",
    "Relation",
    "SchemaError",
    "SchemaOutdated",
    "ServerUnavailable",
    "Settings",
    "Status",
    "SyncMemory",
    "TimelineError",
    "Tripel",
    "TripelErgebnis",
    "UnknownRelation",
    "WriteNotConfirmed",
    "load_canon",
    "parse_order",
    "render",
]
