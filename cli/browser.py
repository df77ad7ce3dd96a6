"""`kg browser`: a query of `cypher/browser/` with its parameters, ready for Neo4j Browser.

The values come from the library, so the Browser shows what the library would: the
entity as `kg mappe` finds it (by id or name, in the store: namesakes are refused with
their ids, as `kg mappe` refuses them) and the configured resting threshold
(`KG_RUHE_SCHWELLE`). Each file's header names its parameters in
`// :param name => example` lines, the same format as the package's named queries.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import typer

from cli.common import CharOpt, UserOpt, err, out
from kg.models import normalize_name
from kg.queries import cypher_dir
from kg.settings import Settings

_PARAM = re.compile(r"^//\s*:param\s+(\w+)\s*=>\s*(\S.*)$", re.MULTILINE)


def browser_dir() -> Path:
    return cypher_dir() / "browser"


def browser_names() -> list[str]:
    return sorted(p.stem for p in browser_dir().glob("*.cypher"))


def header_examples(text: str) -> dict[str, str]:
    """The `:param` examples of a Browser query's header: parameter → Cypher expression."""
    return dict(_PARAM.findall(text))


def body(text: str) -> str:
    """The query without its comment lines, as one statement."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
    return "\n".join(lines).strip().rstrip(";")


def parameters(
    name: str,
    *,
    user_id: str,
    character_id: str,
    entity: str | None = None,
    beziehung: str | None = None,
    eintrag_id: str | None = None,
    limit: int = 300,
    settings: Settings | None = None,
) -> dict[str, Any]:
    """The values of a Browser query's parameters, as the library would use them."""
    settings = settings or Settings()
    known: dict[str, Any] = {
        "user_id": user_id,
        "character_id": character_id,
        "entity": normalize_name(entity) if entity is not None else None,
        "beziehung": beziehung,
        "eintrag_id": eintrag_id,
        "limit": limit,
        "ruhe_schwelle": settings.ruhe_schwelle,
    }
    text = (browser_dir() / f"{name}.cypher").read_text(encoding="utf-8")
    wanted = list(header_examples(text))
    if "beide_richtungen" in wanted or "symmetrisch" in wanted:
        from kg.canon import load_canon
        from kg.mappe import symmetric_types

        canon = load_canon(settings.kanon_datei)  # (a ConfigError: the caller says so)
        if beziehung is not None and "beide_richtungen" in wanted:
            if beziehung not in canon:
                raise ValueError(canon.unknown(beziehung))
            # A symmetric relation (partner) is stored once, from either end.
            known["beide_richtungen"] = canon[beziehung].symmetrisch
        # The Mappe reads those from both ends, as the library's does.
        known["symmetrisch"] = symmetric_types(canon)
    flags = {"entity": "--entity", "beziehung": "--beziehung", "eintrag_id": "--eintrag"}
    missing = [flags.get(p, p) for p in wanted if known.get(p) is None]
    if missing:
        raise ValueError(f"{name} needs {', '.join(missing)}")
    return {p: known[p] for p in wanted}


def param_lines(values: dict[str, Any]) -> list[str]:
    """Browser `:param` commands; JSON literals are valid Cypher for strings and numbers."""
    return [f":param {k} => {json.dumps(v, ensure_ascii=False)}" for k, v in values.items()]


def browser(
    query: str = typer.Argument(..., help="mappe, historie, timeline_kette or paar."),
    user: str = UserOpt,
    character: str = CharOpt,
    entity: str | None = typer.Option(
        None, help="Entity name or id (mappe, historie); looked up in the store."),
    beziehung: str | None = typer.Option(None, help="A canon relation (historie)."),
    eintrag: str | None = typer.Option(None, help="Any entry id of a chain (timeline_kette)."),
    limit: int = typer.Option(300, min=1, max=100_000, help="Most facts and orders shown (paar)."),
) -> None:
    """Print a Browser query with its `:param` lines, values as the library uses them.

    Example: kg browser mappe -u u1 -c nova --entity Lena
    """
    if query not in browser_names():
        err.print(f"error: no Browser query {query!r}; one of {', '.join(browser_names())}")
        raise typer.Exit(2)
    from cli.common import fail
    from kg.errors import ConfigError

    try:
        values = parameters(
            query, user_id=user, character_id=character, entity=entity, beziehung=beziehung,
            eintrag_id=eintrag, limit=limit,
        )
    except ValueError as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(2) from None
    except ConfigError as error:
        fail(error)
    if beziehung is not None:
        from kg.canon import load_canon

        try:
            canon = load_canon(Settings().kanon_datei)
        except ConfigError as error:
            fail(error)
        if beziehung not in canon:
            err.print(f"error: {canon.unknown(beziehung)}", markup=False)
            raise typer.Exit(2)
    if values.get("entity") is not None and entity is not None:
        # The entity by its id, as `kg mappe` finds it: by its normalised name the query
        # drew two namesakes' facts as one picture, and an unknown name as nothing.
        from cli.common import call

        values["entity"] = call(lambda m: m.entity_id(user, character, entity))
    text = (browser_dir() / f"{query}.cypher").read_text(encoding="utf-8")
    out.print("\n".join([*param_lines(values), body(text)]), markup=False)


def query(
    name: str | None = typer.Argument(
        None, help="A named query of cypher/queries/; none: list them."
    ),
) -> None:
    """Print one of the library's named queries as it runs, ready to paste into Neo4j
    Browser: its `:param` example lines, then the text with every fragment filled in
    (the files keep shared text as `{{ fragment }}` lines, which Browser cannot read).

    Example: kg query mappe
    """
    from kg.queries import registry

    queries = registry()
    if name is None:
        for q in sorted(queries, key=lambda q: q.name):
            out.print(f"{q.name:32} {q.source}:{q.line}", markup=False)
        return
    if name not in queries.names():
        err.print(f"error: no named query {name!r}; `kg query` lists them", markup=False)
        raise typer.Exit(2)
    q = queries[name]
    lines = [f":param {param} => {example}" for param, example in q.examples]
    lines.append(f"// {q.name} ({q.source}:{q.line}), as the library runs it")
    out.print("\n".join([*lines, q.text + ";"]), markup=False)
