"""What an export, an import and a purge report back, and the progress callback."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import Field

from kg.models import Frozen
from kg.transfer.records import Anzahl

#: Called as (phase, done, total) while records are read or written.
Progress = Callable[[str, int, int], None]


def no_progress(phase: str, done: int, total: int) -> None:
    return None


class ExportErgebnis(Frozen):
    """What `export` wrote."""

    datei: str
    user_id: str
    character_id: str | None
    zeilen: int = Field(description="Lines written (header included).")
    anzahl: Anzahl


class ImportErgebnis(Frozen):
    """What `import` wrote."""

    datei: str
    user_id: str
    character_id: str | None
    zeilen: int
    anzahl: Anzahl = Field(description="Records in the file.")
    entitaeten_vorhanden: int = Field(
        description="Entities already in the store (same user and id), kept as they were."
    )
    warnungen: list[str] = Field(
        default_factory=list, description="What was imported but is worth knowing."
    )


class PurgeErgebnis(Frozen):
    """What `purge` deleted."""

    user_id: str
    character_id: str | None
    fakten: int
    werte: int
    eintraege: int
    nachfolger: int
    auftraege: int
    entitaeten: int = Field(description="Entities deleted.")
    entitaeten_behalten: int = Field(
        description="Entities of the pair kept: another pair still has facts or entries on them."
    )
    nutzer: int = Field(description="1 when the user's lock node went (nothing of the user left).")
    fremde_kanten: int = Field(
        0, description="Of a whole user's purge: edges of other users' data (a fact, a timeline "
        "entry's link) into the user's entities, deleted with them. Never in a store "
        "`kg check` passes (one_user_per_fact)."
    )
