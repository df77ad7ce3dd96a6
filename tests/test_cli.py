"""The CLI as a whole: help texts, --json, exit codes, the demo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from cli.main import COMMANDS, app, build, for_argv
from kg.api import SyncMemory
from tests.conftest import Pair, raw_cypher

ROOT = Path(__file__).resolve().parent.parent

runner = CliRunner()


def commands_of(kg: Any) -> dict[str, Any]:
    """The commands and groups of a `kg` Typer app, by name, as click sees them."""
    commands = getattr(get_command(kg), "commands", None)
    assert commands is not None, "a kg is a group of commands"
    return dict(commands)


def all_commands() -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []

    def walk(prefix: str, command: Any) -> None:
        if hasattr(command, "commands"):  # a group: its own help too (not the app's)
            if prefix:
                found.append((prefix, command))
            for name, sub in command.commands.items():
                walk(f"{prefix} {name}".strip(), sub)
        else:
            found.append((prefix, command))

    walk("", get_command(app))
    return found


def test_every_command_has_help_with_an_example() -> None:
    commands = all_commands()
    assert len(commands) >= 15
    missing = [name for name, cmd in commands if "Example:" not in (cmd.help or "")]
    assert missing == []
    for name, _ in commands:
        result = runner.invoke(app, [*name.split(), "--help"])
        assert result.exit_code == 0, name
        assert "Example" in result.output, name


def test_demo_is_idempotent_and_shows_the_mappe(store: SyncMemory) -> None:
    first = runner.invoke(app, ["demo"])
    assert first.exit_code == 0, first.output
    count = (
        "MATCH (e:Entitaet {user_id: 'demo-user'}) OPTIONAL MATCH (e)-[r]->() "
        "RETURN count(DISTINCT e) AS e, count(r) AS r"
    )
    before = store.run(raw_cypher(store, count))
    second = runner.invoke(app, ["demo"])
    assert second.exit_code == 0
    assert "0 orders written" in second.output and "already moved" in second.output
    assert store.run(raw_cypher(store, count)) == before
    assert "wohnt in Kassel (ab Dezember 2026)" in second.output
    assert "früher: wohnt in Berlin (bis Dezember 2026)" in second.output
    assert "Herkules-Denkmal" in second.output  # luna's view of Kassel
    data = json.loads(runner.invoke(app, ["demo", "--json"]).stdout)
    assert data["lena"]["entitaet"]["name"] == "Lena"
    assert {"beziehung", "subjekt", "grad", "herkunft", "ab", "staerke"} <= set(
        data["lena"]["fakten"][0]
    )
    assert data["lena"]["historie"][0]["bis"] == "Dezember 2026"
    assert [(d["objekt"]["name"], d["pfad"]) for d in data["lena"]["abgeleitet"]] == [
        ("Deutschland", ["Kassel"]), ("Hessen", ["Kassel"])]


def test_mappe_of_an_ambiguous_or_unknown_name_exits_non_zero(store: SyncMemory) -> None:
    runner.invoke(app, ["demo"])
    unknown = runner.invoke(app, ["mappe", "Niemand", "-u", "demo-user", "-c", "nova"])
    assert unknown.exit_code == 6 and "no entity" in unknown.output
    assert "Traceback" not in unknown.output


def test_status_json_and_schema_status(store: SyncMemory) -> None:
    result = runner.invoke(app, ["status", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["version"].startswith("5.26")
    result = runner.invoke(app, ["schema", "status"])
    assert result.exit_code == 0 and "applied" in result.output


def test_unreachable_server_is_one_line_and_exit_3(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    result = runner.invoke(app, ["status"])
    assert result.exit_code == 3
    assert "not reachable at bolt://127.0.0.1:1" in result.output
    assert "Traceback" not in result.output


def test_mappe_of_an_ambiguous_name_lists_candidates(pair) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import t

    pair.write(t("Anna", "wohnt_in", "Berlin"), t({"neu": "Anna"}, "wohnt_in", "Kassel"))
    result = runner.invoke(app, ["mappe", "Anna", "-u", pair.user_id, "-c", "nova"])
    assert result.exit_code == 7
    assert "2 entities are named 'Anna'" in result.output
    assert "wohnt in Berlin" in result.output and "wohnt in Kassel" in result.output
    by_id = runner.invoke(app, ["mappe", pair.id_of("Berlin"), "-u", pair.user_id, "-c", "nova",
                                "--text"])
    assert by_id.exit_code == 0 and "Anna wohnt in Berlin" in by_id.output
    # A stranger's attack (2026-12-07): `--budget 1` printed "…" alone. The least budget
    # is the MCP tools' 100, refused in words below it.
    tiny = runner.invoke(app, ["mappe", pair.id_of("Berlin"), "-u", pair.user_id, "-c",
                               "nova", "--text", "--budget", "99"])
    assert tiny.exit_code == 2 and "greater than or equal to 100" in tiny.output, tiny.output
    least = runner.invoke(app, ["mappe", pair.id_of("Berlin"), "-u", pair.user_id, "-c",
                                "nova", "--text", "--budget", "100"])
    assert least.exit_code == 0 and "Anna wohnt in Berlin" in least.output, least.output


def test_contradicting_input_is_refused_not_resolved_silently(pair) -> None:  # type: ignore[no-untyped-def]
    """Found by a stranger's hunt: `kg mappe … --text --json` printed JSON, and an order
    naming "auftrag_id" twice was written under the second (Python's JSON parser keeps
    the last key; others keep the first). Both are refused, nothing written."""
    from tests.conftest import t

    pair.write(t("Lena", "wohnt_in", "Berlin"))
    both = runner.invoke(app, ["mappe", "Lena", "-u", pair.user_id, "-c", "nova", "--text",
                               "--json"])
    assert both.exit_code == 2 and "give --json or --text, not both" in both.output
    tripel = json.dumps([{"subjekt": "Lena", "beziehung": "wohnt_in", "objekt": "Kassel",
                          "herkunft": "mensch"}])
    order = (f'{{"auftrag_id": "a", "auftrag_id": "b", "user_id": "{pair.user_id}", '
             f'"character_id": "nova", "tripel": {tripel}}}')
    twice = runner.invoke(app, ["write", "-"], input=order)
    assert twice.exit_code == 2, twice.output
    assert "the key 'auftrag_id' is given twice in one object" in twice.output
    assert "Traceback" not in twice.output
    assert [f.objekt.name for f in pair.mappe("Lena").fakten if f.objekt] == ["Berlin"]


def test_audit_lists_orders_of_a_pair(pair) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import t

    pair.write(t("Lena", "wohnt_in", "Berlin"), auftrag_id="audit-1")
    result = runner.invoke(app, ["audit", "-u", pair.user_id, "-c", "nova", "--json"])
    assert result.exit_code == 0, result.output
    assert [a["auftrag_id"] for a in json.loads(result.stdout)] == ["audit-1"]


def test_timeline_move_sets_the_precision_asked_or_keeps_it(pair) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import t

    result = pair.write({**t("Lena", "wohnt_in", "Kassel"),
                         "ereignis": {"titel": "Umzug", "beginn": "2026-11-10"}})
    entry = str(result.ergebnisse[0].timeline_id)
    base = ["timeline", "move", "-u", pair.user_id, "-c", "nova", "--json"]
    for flags, want in ((["--monat"], "monat"), ([], "monat"), (["--tag"], "tag")):
        moved = runner.invoke(app, [*base, entry, "--beginn", "2026-11-01", *flags])
        assert moved.exit_code == 0, moved.output
        (after,) = json.loads(moved.stdout)
        assert after["genauigkeit"] == want, (flags, after)
        entry = after["id"]
    # A stranger's attack (2026-12-07): an unknown entry exited 8, "timeline rule
    # broken"; it is not found, as an unknown entity is (6). A cancelled one stays 8.
    for verb, more in (("move", ["--beginn", "2026-11-01"]), ("cancel", []),
                       ("show", []), ("link", ["--betrifft", "Lena"])):
        unknown = runner.invoke(app, ["timeline", verb, "nope", "-u", pair.user_id, "-c",
                                      "nova", *more])
        assert unknown.exit_code == 6, (verb, unknown.output)
        assert "no timeline entry 'nope' in this pair" in unknown.output, unknown.output


def test_audit_prune_applies_the_configured_retention(pair) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import t

    memory = pair.store.memory
    pair.write(t("Lena", "wohnt_in", "Berlin"), auftrag_id="old")
    pair.write(t("Lena", "beruf", wert="Ärztin"), auftrag_id="new")
    pair.cypher("MATCH (a:Auftrag {user_id: $u, id: 'old'}) "
                "SET a.erfasst = datetime() - duration({days: 400})", u=pair.user_id)

    def kept() -> list[str]:
        return sorted(a.auftrag_id for a in pair.store.run(memory.audit(pair.user_id)))

    assert pair.store.run(memory.audit_prune(keep_days=500)) == 0 or kept() == ["new", "old"]
    assert kept() == ["new", "old"]
    result = runner.invoke(app, ["audit", "prune"])  # KG_AUDIT_RETENTION_DAYS: 365
    assert result.exit_code == 0, result.output
    assert result.output.startswith("deleted ") and result.output.endswith(" orders\n")
    assert int(result.output.split()[1]) >= 1
    assert kept() == ["new"]
    # It answers with data, so it takes --json like every such command (a docs check).
    again = runner.invoke(app, ["audit", "prune", "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) == {"deleted": 0}


def test_audit_prune_deletes_every_old_order_batch_by_batch(pair) -> None:  # type: ignore[no-untyped-def]
    """One transaction deleted at most 100,000 orders and the rest stayed, though the
    command said it applies the retention: it repeats its batch until none is left."""
    from tests.conftest import t

    memory = pair.store.memory
    for n in range(5):
        pair.write(t("Lena", "hobby", wert=f"Hobby {n}"), auftrag_id=f"old-{n}")
    pair.cypher("MATCH (a:Auftrag {user_id: $u}) SET a.erfasst = datetime() - duration('P400D')",
                u=pair.user_id)
    assert pair.store.run(memory.audit_prune(keep_days=365, batch=2)) >= 5
    assert pair.store.run(memory.audit(pair.user_id)) == []


@pytest.mark.parametrize("args", [["-u", "u1", "prune", "--days", "400"],
                                  ["-u", "u1", "list"], ["--json", "prune"]])
def test_audit_options_belong_after_the_subcommand(args: list[str]) -> None:
    """`kg audit -u u1 prune` pruned every user's orders, the -u silently ignored; `kg
    audit -u u1 list` asked for the --user it had been given."""
    result = runner.invoke(app, ["audit", *args])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert f"kg audit {args[-1] if args[-1] != '400' else 'prune'}" in result.output
    assert "after the subcommand" in result.output


@pytest.mark.parametrize("days", ["0", "-1", "36501", "99999999999"])
def test_audit_prune_keeps_at_least_a_day(pair, days: str) -> None:  # type: ignore[no-untyped-def]
    """The audit holds the idempotency ids: pruning all of it would let a replay of an
    order sent a moment ago write again."""
    from kg.errors import InvalidInput
    from tests.conftest import t

    pair.write(t("Lena", "wohnt_in", "Berlin"), auftrag_id="kept")
    result = runner.invoke(app, ["audit", "prune", "--days", days])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    with pytest.raises(InvalidInput, match="keep_days must be a whole number of days"):
        pair.store.run(pair.store.memory.audit_prune(keep_days=int(days)))
    assert [a.auftrag_id for a in pair.store.run(pair.store.memory.audit(pair.user_id))] == [
        "kept"]


def test_browser_refuses_a_relation_the_canon_does_not_know() -> None:
    """As `kg history` does: a query for a relation that cannot exist shows nothing and
    says nothing, so it is refused with the known ones."""
    done = runner.invoke(app, ["browser", "historie", "-u", "u1", "-c", "nova",
                               "--entity", "Lena", "--beziehung", "nope"])
    assert done.exit_code == 2 and "unknown relation 'nope'" in done.output
    assert "wohnt_in" in done.output


def test_browser_prints_a_query_with_the_librarys_values(pair) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import t

    pair.write(t("Straße", "liegt_in", "Kassel"))
    args = ["browser", "mappe", "-u", pair.user_id, "-c", "nova", "--entity", " STRASSE "]
    done = runner.invoke(app, args, env={"KG_RUHE_SCHWELLE": "0.25"})
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[:4] == [
        f':param user_id => "{pair.user_id}"', ':param character_id => "nova"',
        f':param entity => "{pair.id_of("Straße")}"', ":param ruhe_schwelle => 0.25",
    ]
    assert "$ruhe_schwelle" in done.output and "//" not in done.output
    missing = runner.invoke(app, ["browser", "historie", "-u", "u1", "-c", "nova"])
    assert missing.exit_code == 2 and "--entity, --beziehung" in missing.output


def test_browser_refuses_namesakes_and_names_nobody_has(pair) -> None:  # type: ignore[no-untyped-def]
    """A stranger's attack (2026-12-07): `kg browser mappe --entity Max` of two people
    named Max set the normalised name, and the query drew both men's facts as one
    picture, where `kg mappe Max` lists the two with their ids; a name nobody has
    printed a query that shows nothing. The entity is now found as `kg mappe` finds it."""
    from tests.conftest import t

    pair.write(t("Max", "beruf", wert="Bäcker"), t({"neu": "Max"}, "beruf", wert="Koch"))
    for query in (["mappe"], ["historie", "--beziehung", "beruf"]):
        args = ["browser", *query, "-u", pair.user_id, "-c", "nova", "--entity"]
        both = runner.invoke(app, [*args, "Max"])
        assert both.exit_code == 7 and "2 entities are named 'Max'" in both.output, both.output
        assert "Bäcker" in both.output and "Koch" in both.output and "MATCH" not in both.output
        nobody = runner.invoke(app, [*args, "Niemand"])
        assert nobody.exit_code == 6 and "no entity named" in nobody.output, nobody.output
        ids = {line.split()[0] for line in both.output.splitlines()[1:]}
        for one in ids:
            done = runner.invoke(app, [*args, one])
            assert done.exit_code == 0 and f':param entity => "{one}"' in done.output


def test_a_kg_of_one_command_reads_as_the_whole_kg_for_that_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process builds only the command it runs (cli/main.py): its help, its usage
    errors and their exit codes are the whole `kg`'s, for every command and group. (A
    command that needs no argument runs: against no server, so it writes nothing.)"""
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    for name, _, _ in COMMANDS:
        one = build(name)
        assert list(commands_of(one)) == [name]
        for args in ([name, "--help"], [name, "--no-such-option"], [name]):
            alone, whole = runner.invoke(one, args), runner.invoke(app, args)
            assert (alone.exit_code, alone.output) == (whole.exit_code, whole.output), args


@pytest.mark.parametrize(
    ("argv", "commands"),
    [
        (["kg", "mappe", "Lena"], ["mappe"]),
        (["kg", "timeline", "show"], ["timeline"]),
        (["kg"], None),
        (["kg", "--help"], None),
        (["kg", "mape"], None),  # no command: the whole `kg` says so, and lists them
    ],
)
def test_the_kg_for_a_command_line_is_its_command_or_all(
    argv: list[str], commands: list[str] | None
) -> None:
    built = sorted(commands_of(for_argv(argv)))
    assert built == sorted(commands or [name for name, _, _ in COMMANDS])


#: `kg --help` in a process of its own: imported as a library, or through the entry point.
AS_LIBRARY = "from cli.main import main"
THROUGH_ENTRY = "from cli.entry import main"


def kg_help(entry: str, after: str = "", command: str = "", **kwargs: Any) -> str:
    """Run `kg [command] --help` by `entry` in a child process, then `after`; its stderr."""
    argv = ["kg", *command.split(), "--help"]
    code = (
        f"import gc, sys\nsys.argv = {argv!r}\n{entry}\n"
        f"try:\n    main()\nexcept SystemExit:\n    pass\n{after}"
    )
    done: subprocess.CompletedProcess[str] = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False,
        timeout=60, **kwargs,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_the_kg_command_hides_the_drivers_unused_optional_imports(tmp_path: Path) -> None:
    """The driver imports numpy (pandas, pyarrow) at start when installed; the `kg`
    entry point hides them, `cli.main` imported as a library does not. A stand-in numpy
    that announces its import (then fails, as a missing one would) shows both."""
    fake = tmp_path / "numpy"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "import sys\nsys.stderr.write('numpy imported\\n')\nraise ImportError('a stand-in')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    assert "numpy imported" in kg_help(AS_LIBRARY, env=env, cwd=tmp_path)
    assert "numpy imported" not in kg_help(THROUGH_ENTRY, env=env, cwd=tmp_path)


def test_the_kg_command_imports_only_the_module_of_its_command() -> None:
    """`kg mappe` imports the module of `mappe` (cli/facts.py), not those of the other
    commands (the launcher, the MCP server, export and import, ...); `kg --help` all."""
    shown = "sys.stderr.write(' '.join(sorted(m for m in sys.modules if m.startswith('cli.'))))"
    modules = {name for _, name, _ in COMMANDS}
    assert modules & set(kg_help(THROUGH_ENTRY, shown, "mappe", cwd=ROOT).split()) == {
        "cli.facts"
    }
    assert modules <= set(kg_help(THROUGH_ENTRY, shown, cwd=ROOT).split())


def test_the_kg_command_loads_no_pydantic_plugins() -> None:
    """Pydantic looks for plugins when it builds its first validator, in the metadata of
    every installed package: importlib.metadata and the email package, then a scan of
    ~80 dist-info folders here (cli/entry.py: ~20-35 ms of a `kg mappe`). The entry
    point makes the `kg` command's pydantic load none; validation works as before."""
    check = (
        "from kg.models import Tripel\n"
        "Tripel.model_validate({'subjekt': 'Lena', 'beziehung': 'wohnt_in', "
        "'objekt': 'Kassel', 'herkunft': 'mensch'})\n"
        "sys.stderr.write(f'metadata {\"importlib.metadata\" in sys.modules}')"
    )

    def metadata(entry: str) -> bool:
        return kg_help(entry, check, cwd=ROOT).rsplit("metadata ", 1)[1] == "True"

    assert metadata(AS_LIBRARY)
    assert not metadata(THROUGH_ENTRY)


def test_the_kg_command_freezes_what_its_imports_made() -> None:
    """The entry point moves the imported modules' objects out of the collector's reach
    (cli/entry.py: they cost ~30 ms of collection at exit); `cli.main` alone does not."""

    def frozen(entry: str) -> int:
        shown = kg_help(entry, "sys.stderr.write(f'frozen {gc.get_freeze_count()}')", cwd=ROOT)
        return int(shown.rsplit("frozen ", 1)[1])

    assert frozen(AS_LIBRARY) == 0
    assert frozen(THROUGH_ENTRY) > 10_000


def test_the_kg_command_keeps_the_collector_out_of_its_imports() -> None:
    """The imports make ~190,000 objects that are never garbage; the collector walked them
    in two full collections while they ran (60-80 ms of a `kg mappe` with the young ones;
    cli/entry.py). Through the entry point no full collection runs, and the collector is
    on again for the command itself."""

    def full_collections(entry: str) -> tuple[int, bool]:
        shown = kg_help(
            entry,
            "sys.stderr.write(f'full {gc.get_stats()[2][\"collections\"]} {gc.isenabled()}')",
            cwd=ROOT,
        )
        count, enabled = shown.rsplit("full ", 1)[1].split()
        return int(count), enabled == "True"

    assert full_collections(AS_LIBRARY)[0] >= 1
    assert full_collections(THROUGH_ENTRY) == (0, True)


def test_history_of_an_empty_relation_is_refused(pair) -> None:  # type: ignore[no-untyped-def]
    """`--beziehung ""` listed every relation, as if no filter were given."""
    from tests.conftest import t

    pair.write(t("Lena", "wohnt_in", "Berlin"))
    result = runner.invoke(app, ["history", "Lena", "-u", pair.user_id, "-c", "nova",
                                 "--beziehung", ""])
    assert result.exit_code == 2 and "unknown relation ''" in result.output, result.output


def test_an_outcome_reads_the_same_on_the_cli_and_over_mcp(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A correction's outcome has no message and no fact of its own: the CLI's line began
    with '; retired …', MCP called the same list 'superseded' (a correction retires a
    value as never true; it supersedes nothing), and neither named what held again. A
    new value supersedes; a correction or a cancel retires."""
    from datetime import UTC, datetime

    from cli.facts import _print_result
    from kg.models import AuftragErgebnis, TripelErgebnis
    from kg_mcp.server import outcome_text

    result = AuftragErgebnis(
        auftrag_id="k1", user_id="u1", character_id="nova", status="ok",
        zeitpunkt=datetime(2026, 12, 1, tzinfo=UTC),
        ergebnisse=[TripelErgebnis(index=0, ausgang="berichtigt", abgeloest=["f2"],
                                   wieder_gueltig=["f1"])],
    )
    assert result.ergebnisse[0].detail() == "retired f2; holds again f1"
    assert "[0] berichtigt: retired f2; holds again f1" in outcome_text(result)
    _print_result(result, as_json=False)  # status ok: no exit
    assert "[0] berichtigt   retired f2; holds again f1" in capsys.readouterr().out
    moved = TripelErgebnis(index=1, ausgang="abgeloest", fakt_id="f4", abgeloest=["f3"])
    assert moved.detail() == "fact f4; superseded f3"


def test_a_write_stopped_with_ctrl_c_says_how_to_be_sure_of_it(
    pair: Pair, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stranger's attack (2026-12-07): `kg write` stopped with Ctrl-C exited 130 with
    nothing said, though the order had been committed; the user could not tell. Stopped
    here at the worst moment, after the commit: it says the order may be written and
    that sending it again writes it once."""
    from kg.api import Memory
    from tests.conftest import t

    order = {"auftrag_id": "stopped", "user_id": pair.user_id, "character_id": "nova",
             "tripel": [t("Lena", "wohnt_in", "Kassel")]}
    path = tmp_path / "order.json"
    path.write_text(json.dumps(order), encoding="utf-8")
    write = Memory.write

    async def written_then_stopped(self: Memory, auftrag: Any) -> Any:
        await write(self, auftrag)
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(Memory, "write", written_then_stopped)
        stopped = runner.invoke(app, ["write", str(path)])
    assert stopped.exit_code == 130, stopped.output
    assert "interrupted: order stopped is written whole or not at all" in stopped.output
    assert "send it again" in stopped.output and "Traceback" not in stopped.output
    again = runner.invoke(app, ["write", str(path)])
    assert again.exit_code == 0 and "wiederholt" in again.output, again.output


def test_an_import_or_purge_stopped_with_ctrl_c_says_how_to_be_sure_of_it(
    pair: Pair, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stranger's attack (2026-12-07): `kg import` stopped with Ctrl-C exited 130 with
    nothing said. Stopped here after the commit, the worst moment, each says it is one
    transaction and how running it again tells; so does an export."""
    from kg.api import Memory
    from tests.conftest import t

    pair.write(t("Lena", "wohnt_in", "Kassel"))
    backup = tmp_path / "u.jsonl"
    assert runner.invoke(app, ["export", "-u", pair.user_id, str(backup)]).exit_code == 0

    def then_stopped(name: str) -> Any:
        real = getattr(Memory, name)

        async def stopped(self: Memory, *args: Any, **kwargs: Any) -> Any:
            await real(self, *args, **kwargs)
            raise KeyboardInterrupt

        return stopped

    for name, args, words, again, answer in (
        ("purge", ["purge", "-u", pair.user_id, "--yes"], "nothing was deleted, or all of",
         ["purge", "-u", pair.user_id, "--yes"], "purged already"),
        ("import_file", ["import", str(backup)], "nothing of it was written, or all of it",
         ["import", str(backup)], "already"),
        ("export", ["export", "-u", pair.user_id, str(tmp_path / "v.jsonl")],
         "whole or not at all", None, None),
    ):
        with monkeypatch.context() as patched:
            patched.setattr(Memory, name, then_stopped(name))
            stopped = runner.invoke(app, args)
        assert stopped.exit_code == 130, stopped.output
        assert "interrupted: " in stopped.output and words in stopped.output, stopped.output
        assert "Traceback" not in stopped.output
        if again is not None and answer is not None:
            told = runner.invoke(app, again)
            assert told.exit_code == 2 and answer in told.output, told.output
