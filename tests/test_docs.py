"""The repository stands alone: its docs link only inside it and name no issue numbers."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").glob("*.md")])
LINK = re.compile(r"\]\(([^)\s]+)\)")
#: Files that still name an issue; a file leaves this set once it no longer does.
STILL_NAMING_ISSUES: set[str] = set()


def test_every_link_stays_inside_the_repository_and_resolves() -> None:
    broken = []
    for doc in DOCS:
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            if re.match(r"^(https?:|mailto:|#)", target):
                continue
            # A leading "/" is the repository's root (as GitHub renders it).
            base = ROOT if target.startswith("/") else doc.parent
            path = (base / target.split("#", 1)[0].lstrip("/")).resolve()
            if not path.is_relative_to(ROOT) or not path.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert broken == []


def test_the_contract_is_in_the_repository_and_the_readme_links_it() -> None:
    assert "](docs/contract.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    contract = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    for section in ("Glossary", "The rules", "The graph model", "Surfaces", "worked example"):
        assert section in contract


def test_no_issue_numbers_in_code_or_docs() -> None:
    files = [*DOCS, *[p for d in ("kg", "cli", "tests", "bench", "cypher") for p in
                      (ROOT / d).rglob("*") if p.suffix in (".py", ".cypher", ".md")]]
    naming = {
        str(p.relative_to(ROOT))
        for p in files
        if re.search(r"\b[Ii]ssue \d|\bthe issue'?s?\b", p.read_text(encoding="utf-8"))
    }
    naming.discard("tests/test_docs.py")
    assert naming == STILL_NAMING_ISSUES
