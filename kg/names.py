"""Names stored by an earlier rule, stored again as this version's writer stores them.

The writer strips what shows as nothing from a name and looks it up by its key
(`kg.models.clean_name`, `normalize_name`). When the rule grows (Unicode's other
default-ignorable characters joined the format characters: the combining grapheme
joiner, variation selectors, the Hangul fillers), names stored before keep what it now
strips, and a key no lookup computes any more: "Jürgen" with a variation selector is an
entity no order finds by "Jürgen", and the next order that names him makes another.
`kg check` reports such entities (`name_norm`, `format_namesakes`); `renormalize`
stores their names and keys as the writer would. Cypher cannot normalise a name so, so
the store's names are read and the new ones written back, one user at a time under
that user's write lock, each only if it is still what was read.

Two entities whose names become one stay two: namesakes, each with its own facts, whom
a lookup by that name calls ambiguous (`mehrdeutig`) and an id tells apart.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pydantic import Field

from kg.db import Database, Tx
from kg.models import Frozen, clean_name, normalize_name


class Umbenennung(Frozen):
    """An entity whose stored name or key is not what the writer would store."""

    id: str
    user_id: str
    name: str = Field(description="The name as stored.")
    name_norm: str = Field(description="The key as stored.")
    neuer_name: str = Field(description="The name as the writer stores it.")
    neuer_name_norm: str = Field(description="Its key (`kg.models.normalize_name`).")


class Renormalisiert(Frozen):
    """What `renormalize` found and did."""

    user_id: str | None = Field(description="The user, or null: the whole store.")
    gelesen: int = Field(description="Entities read (those whose names need Python to judge).")
    geaendert: list[Umbenennung] = Field(
        description="Entities stored again (or, in a dry run, that would be)."
    )
    unsichtbar: list[str] = Field(
        description="Entities whose names hold nothing visible: left as they are (`kg "
        "check`'s node_fields reports them; rename or purge them by hand)."
    )
    namensvettern: int = Field(
        description="Of the changed entities, those whose new key another entity of the "
        "user has: namesakes, which a lookup by that name calls ambiguous."
    )
    dry_run: bool


def plan(rows: list[dict[str, Any]]) -> tuple[list[Umbenennung], list[str]]:
    """Of the stored names `rows` (id, user_id, name, name_norm), those to store again,
    and the ids of those with nothing visible."""
    changes, empty = [], []
    for r in rows:
        name = clean_name(r["name"])
        if not normalize_name(name):
            empty.append(r["id"])
        elif (name, normalize_name(name)) != (r["name"], r["name_norm"]):
            changes.append(Umbenennung(
                id=r["id"], user_id=r["user_id"], name=r["name"], name_norm=r["name_norm"],
                neuer_name=name, neuer_name_norm=normalize_name(name),
            ))
    return changes, empty


async def renormalize(db: Database, user_id: str | None, dry_run: bool) -> Renormalisiert:
    """Store every name (of `user_id`; of every user when None) as the writer would; a
    dry run only reads."""
    from kg.timeline import lock

    rows = await db.query("name_norm_rows", user_id=user_id)
    changes, empty = plan(rows)
    by_user: dict[str, list[Umbenennung]] = defaultdict(list)
    for change in changes:
        by_user[change.user_id].append(change)
    done: list[Umbenennung] = []
    namesakes = 0
    for user, mine in sorted(by_user.items()):
        params = {"user_id": user, "rows": [
            {"id": c.id, "name": c.name, "name_norm": c.name_norm,
             "neuer_name": c.neuer_name, "neuer_name_norm": c.neuer_name_norm}
            for c in mine
        ]}

        async def work(tx: Tx, params: dict[str, Any] = params) -> Any:
            await lock(tx, params["user_id"])
            return await tx.one("rename_entities", **params)

        if dry_run:
            (row,) = await db.query("rename_namesakes", **params)
            done += mine
        else:
            row = await db.write(work)
            stored = set(row["renamed"])
            done += [c for c in mine if c.id in stored]
        namesakes += row["namesakes"]
    return Renormalisiert(user_id=user_id, gelesen=len(rows), geaendert=done,
                          unsichtbar=empty, namensvettern=namesakes, dry_run=dry_run)
