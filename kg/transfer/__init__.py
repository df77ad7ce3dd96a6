"""Export, import and purge of a user's or a pair's data (JSON Lines).

The file format, one JSON object per line, each with a `kind`:

* line 1 — `export`: the format version and whose data it is (`user_id`, and
  `character_id` for a pair, null for a whole user);
* `entitaet`, `eintrag` (timeline entry), `nachfolger` (old → new entry),
  `betrifft` (entry → entity), `fakt` (reference and value facts: `objekt` is an entity
  id, or `wert` is the value), `auftrag` (the audit of an order).

Every property the graph holds is written, by name; a null field is a property the
graph does not have. Datetimes keep their Neo4j type, nanoseconds and offset or zone
(`2026-11-29T18:43:47.483Z`), dates are `YYYY-MM-DD`: the model field decides which
Neo4j type an import writes. Records are sorted (kind, then id) and serialised
compactly with the model's field order, so export → purge → import → export gives
the same bytes.

An import validates every line (pydantic, then references between records and the
canon) before it writes anything, and writes the whole file in **one transaction**
(batched `UNWIND` queries inside it): a bad line or a conflict with the store leaves
nothing behind. Entities already in the store (same user, same id) are kept as they
are — a pair export shares them with the user's other pairs.

Purge (the right to be forgotten): a pair loses its facts, value nodes, timeline
entries and orders; its entities go too unless another pair of the same user still
has a fact or an entry on them (entities are per user). A whole user loses all of
that, every entity, and the user's lock node. Every other pair is untouched.
"""

from kg.transfer.codec import canonical_date, canonical_datetime
from kg.transfer.parse import Datei, parse_lines, read_file
from kg.transfer.records import FORMAT, Anzahl
from kg.transfer.results import (
    ExportErgebnis,
    ImportErgebnis,
    Progress,
    PurgeErgebnis,
    no_progress,
)
from kg.transfer.store import export_file, import_file, purge, read_export, write_import

__all__ = [
    "FORMAT",
    "Anzahl",
    "Datei",
    "ExportErgebnis",
    "ImportErgebnis",
    "Progress",
    "PurgeErgebnis",
    "canonical_date",
    "canonical_datetime",
    "export_file",
    "import_file",
    "no_progress",
    "parse_lines",
    "purge",
    "read_export",
    "read_file",
    "write_import",
]
