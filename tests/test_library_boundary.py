"""The library is what the chat backend imports, and nothing else.

`kg/` holds the library only: the local launcher with its `pom.xml`, the demo and the
bench live beside it (`cli/`, `bench/`), and no library module imports them — so a
backend that imports `kg` gets no tooling and no Maven project.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ROOT / "kg"
TOOLING = ("cli", "bench", "kg_mcp", "tests")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_the_library_imports_no_tooling() -> None:
    offenders = {
        f"{path.relative_to(ROOT)}: {module}"
        for path in LIBRARY.rglob("*.py")
        for module in imported_modules(path)
        if module.split(".")[0] in TOOLING
    }
    assert offenders == set()


def test_the_library_holds_no_launcher_and_no_demo() -> None:
    names = {p.relative_to(LIBRARY).as_posix() for p in LIBRARY.rglob("*") if p.is_file()
             and "__pycache__" not in p.parts}
    assert not {n for n in names if n.endswith(".xml") or "launcher" in n or "demo" in n}
    assert (ROOT / "cli" / "launcher.py").is_file()
    assert (ROOT / "cli" / "neo4j_local" / "pom.xml").is_file()


def test_the_library_settings_and_errors_know_no_launcher() -> None:
    """Where a local server runs and how it fails is the launcher's business: its
    settings extend the library's (same environment, same `.env`) from `cli/`."""
    import kg.errors
    from cli.launcher import LauncherError, LauncherSettings
    from kg.settings import Settings

    assert not [f for f in Settings.model_fields if f.startswith("neo4j_") and f not in
                {"neo4j_uri", "neo4j_username", "neo4j_password", "neo4j_database"}]
    assert not hasattr(kg.errors, "LauncherError")
    assert issubclass(LauncherSettings, Settings) and issubclass(LauncherError, kg.errors.KgError)
    launcher = LauncherSettings(neo4j_bolt_port=7999, neo4j_password="a-long-secret")
    assert (launcher.neo4j_bolt_port, launcher.neo4j_password.get_secret_value()) == (
        7999, "a-long-secret"
    )
