"""`kg demo`: the worked example, end to end."""

from __future__ import annotations

from pydantic import Field

from cli.common import JsonOpt, call, out, print_json
from cli.facts import print_mappe
from cli.launcher import LocalServer
from cli.worked_example import DEMO_USER, LUNA, NOVA, build
from kg.api import Memory
from kg.mappe import Mappe, render
from kg.models import AuftragErgebnis, Frozen


class DemoResult(Frozen):
    """What the demo wrote and read."""

    results: list[AuftragErgebnis] = Field(description="One per order (wiederholt on reruns).")
    moved: bool = Field(description="True when this run moved the event.")
    event_id: str = Field(description="First entry of the move event's chain.")
    lena: Mappe
    kassel_nova: Mappe
    kassel_luna: Mappe


async def run_demo(memory: Memory) -> DemoResult:
    """Build the worked example for the demo pair and read the Mappen it shows."""
    built = await build(memory, DEMO_USER)
    lena = await memory.entity_id(DEMO_USER, NOVA, "Lena")
    kassel = await memory.entity_id(DEMO_USER, NOVA, "Kassel")
    lena_mappe, kassel_nova = await memory.mappen(DEMO_USER, NOVA, [lena, kassel])
    kassel_luna = await memory.mappe(DEMO_USER, LUNA, kassel)
    return DemoResult(
        results=built.results,
        moved=built.moved,
        event_id=built.event_id,
        lena=lena_mappe,
        kassel_nova=kassel_nova,
        kassel_luna=kassel_luna,
    )


def demo(as_json: bool = JsonOpt) -> None:
    """Load the worked example into a demo pair (idempotent) and show the Mappe.

    Example: kg demo
    """
    result = call(run_demo)
    if as_json:
        print_json(result)
        return
    written = sum(not r.wiederholt for r in result.results)
    out.print(
        f"[bold]Demo pair[/bold] user={DEMO_USER} character={NOVA}: {written} orders written, "
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
        f':param user_id => "{DEMO_USER}"\n'
        f':param character_id => "{NOVA}"\n'
        f'MATCH p = (e:Entitaet {{user_id: $user_id, name: "Lena"}})-[r]-(n)\n'
        "WHERE r.character_id = $character_id AND r.aktiv\n"
        "OPTIONAL MATCH q = (n)-[r2]-(m)\n"
        "WHERE r2.character_id = $character_id AND r2.aktiv AND m <> e\n"
        "RETURN p, q",
        markup=False,
    )
