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
from collections.abc import Callable
from typing import Any

from pydantic import Field

from kg.db import Database, Tx
from kg.models import MAX_NAME, Frozen, clean_name, normalize_name, normalize_text, one_line

#: Entities read per page (a page's changes are written before the next is read, each
#: user's in a transaction of its own).
PAGE = 1000


class Umbenennung(Frozen):
    """An entity whose stored name or key is not what the writer would store."""

    id: str
    user_id: str
    name: str = Field(description="The name as stored.")
    name_norm: str | None = Field(
        description="The key as stored (null: none, or not a text: then `stored_key`)."
    )
    stored_key: str | None = Field(
        None, description="A key stored as another type than a text (e.g. 7), as text."
    )
    neuer_name: str = Field(description="The name as the writer stores it.")
    neuer_name_norm: str = Field(description="Its key (`kg.models.normalize_name`).")


class Renormalisiert(Frozen):
    """What `renormalize` found and did."""

    user_id: str | None = Field(description="The user, or null: the whole store.")
    gelesen: int = Field(description="Entities read (those whose names need Python to judge).")
    geaendert: list[Umbenennung] = Field(
        description="Entities stored again (or, in a dry run, that would be)."
    )
    gelassen: list[str] = Field(
        description="Entities left as they are: a name too long once cleaned, or no user "
        "id (`kg check`'s node_fields and pair_ids report them; mend or purge them by hand)."
    )
    namensvettern: int = Field(
        description="Of the changed entities, those whose new key another entity of the "
        "user has: namesakes, which a lookup by that name calls ambiguous."
    )
    dry_run: bool


class NothingRenamed(Exception):
    """A page's changes of one user found nothing left to rename: rolled back."""


def stored_name(name: str) -> str | None:
    """A stored name as this version stores it: line breaks and control characters
    (which a write refuses, and an older one may have stored) a space, bidi controls and
    what shows as nothing removed (`clean_name`). A name with nothing visible is named
    by its code points ("U+3164"), so that the entity can be seen, exported and found;
    None when even that does not fit."""
    cleaned = clean_name(normalize_text(one_line(name)))
    if normalize_name(cleaned):
        return cleaned if len(cleaned) <= MAX_NAME else None
    spelled = " ".join(f"U+{ord(c):04X}" for c in name)
    return spelled if 0 < len(spelled) <= MAX_NAME else None


def plan(rows: list[dict[str, Any]]) -> tuple[list[Umbenennung], list[str]]:
    """Of the stored names `rows` (id, user_id, name, name_norm), those to store again,
    and the ids of those no rule can store (too long once cleaned, no user id)."""
    changes, left = [], []
    for r in rows:
        name = stored_name(r["name"])
        if name is None or not isinstance(r["user_id"], str):
            left.append(str(r["id"]))
        elif (name, key := normalize_name(name)) != (r["name"], r["name_norm"]):
            text = isinstance(r["name_norm"], str) or r["name_norm"] is None
            changes.append(Umbenennung(
                id=r["id"], user_id=r["user_id"], name=r["name"],
                name_norm=r["name_norm"] if text else None,
                stored_key=None if text else repr(r["name_norm"]),
                neuer_name=name, neuer_name_norm=key,
            ))
    return changes, left


def namesakes_made(changes: list[Umbenennung], stored: dict[str, list[str]]) -> int:
    """Of one user's `changes`, those whose new key another entity has once they are
    made: one stored with it (`stored`: key → ids) that keeps it, or another change to
    it. (Read after the changes were made, `stored` holds every such entity.)"""
    new = {c.id: c.neuer_name_norm for c in changes}
    made = 0
    for c in changes:
        holders = {i for i in stored.get(c.neuer_name_norm, []) if new.get(i, c.neuer_name_norm)
                   == c.neuer_name_norm}
        holders |= {i for i, key in new.items() if key == c.neuer_name_norm}
        made += bool(holders - {c.id})
    return made


async def renormalize(
    db: Database, user_id: str | None, dry_run: bool,
    progress: Callable[[int], None] = lambda read: None,
) -> Renormalisiert:
    """Store every name (of `user_id`; of every user when None) as the writer would, a
    page of entities at a time; a dry run only reads. `progress` hears how many
    entities were read so far."""
    from kg.timeline import lock

    read, after = 0, ""
    as_read: dict[str, Any] = {}  # each key as read, whatever its type (compare-and-set)
    changed: dict[str, list[Umbenennung]] = defaultdict(list)
    left: list[str] = []
    while True:
        async with db.auto_commit("READ") as q:
            rows = await q.run("name_rows_page", user_id=user_id, after=after, page=PAGE)
        if not rows:
            break
        read, after = read + len(rows), rows[-1]["id"]
        as_read = {r["id"]: r["name_norm"] for r in rows}
        changes, skipped = plan(rows)
        left += skipped
        by_user: dict[str, list[Umbenennung]] = defaultdict(list)
        for change in changes:
            by_user[change.user_id].append(change)
        for user, mine in sorted(by_user.items()):
            if dry_run:
                changed[user] += mine
                continue

            async def work(tx: Tx, user: str = user, mine: list[Umbenennung] = mine,
                           as_read: dict[str, Any] = as_read) -> Any:
                await lock(tx, user)
                row = await tx.one("rename_entities", user_id=user, rows=[
                    {"id": c.id, "name": c.name, "name_norm": as_read.get(c.id),
                     "neuer_name": c.neuer_name, "neuer_name_norm": c.neuer_name_norm}
                    for c in mine])
                if not row or not row["renamed"]:
                    # Nothing to rename (renamed or purged since read): the lock node
                    # the lock merged must not outlive a purge of the user.
                    raise NothingRenamed
                return row

            try:
                async with db.user_turn(user, maintenance=True):
                    row = await db.write(work, maintenance=True)
            except NothingRenamed:
                continue
            renamed = set(row["renamed"])
            changed[user] += [c for c in mine if c.id in renamed]
        progress(read)
    namesakes = 0
    for user, mine in sorted(changed.items()):
        async with db.auto_commit("READ") as q:
            stored = await q.run("entities_by_keys", pairs=[
                {"user_id": user, "key": key} for key in sorted({c.neuer_name_norm
                                                                 for c in mine})])
        namesakes += namesakes_made(mine, {r["key"]: r["ids"] for r in stored})
    return Renormalisiert(
        user_id=user_id, gelesen=read, geaendert=[c for _, m in sorted(changed.items())
                                                  for c in m],
        gelassen=left, namensvettern=namesakes, dry_run=dry_run,
    )
