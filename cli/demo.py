"""`kg demo`: the worked example, end to end."""

from __future__ import annotations

from cli.common import JsonOpt, call, out, print_json
from cli.facts import print_mappe
from kg.demo import LUNA, NOVA, USER, run_demo
from kg.launcher import LocalServer
from kg.mappe import render


def demo(as_json: bool = JsonOpt) -> None:
    """Load SPEC §6's worked example into a demo pair (idempotent) and show the Mappe.

    Example: kg demo
    """
    result = call(run_demo)
    if as_json:
        print_json(result)
        return
    written = sum(not r.wiederholt for r in result.results)
    out.print(
        f"[bold]Demo pair[/bold] user={USER} character={NOVA}: {written} orders written, "
        f"{len(result.results) - written} already there (replayed, nothing written twice); "
        f"event {'moved to December' if result.moved else 'already moved'}.",
        markup=True,
    )
    out.print("\n[bold]Mappe of Lena — prompt text[/bold]", markup=True)
    out.print(render(result.lena), markup=False)
    out.print()
    print_mappe(result.lena, show_text=False)
    out.print(f"\n[bold]Kassel as {LUNA} knows it[/bold] (same entity, another pair):", markup=True)
    out.print(render(result.kassel_luna), markup=False)
    out.print(f"[bold]Kassel as {NOVA} knows it:[/bold]", markup=True)
    out.print(render(result.kassel_nova), markup=False)
    server = LocalServer.from_env()
    out.print(f"\n[bold]Neo4j Browser[/bold] {server.browser_url} (user neo4j). Paste:",
              markup=True)
    out.print(
        f':param user_id => "{USER}"\n'
        f':param character_id => "{NOVA}"\n'
        f'MATCH p = (e:Entitaet {{user_id: $user_id, name: "Lena"}})-[r]-(n)\n'
        "WHERE r.character_id = $character_id AND r.aktiv\n"
        "OPTIONAL MATCH q = (n)-[r2]-(m)\n"
        "WHERE r2.character_id = $character_id AND r2.aktiv AND m <> e\n"
        "RETURN p, q",
        markup=False,
    )
