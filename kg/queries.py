"""Named Cypher queries, kept in `.cypher` files and parsed once into a registry.

A file holds one or more queries; each starts with a header of comment lines::

    // name: entity_by_id
    // The entity with this id, if it belongs to the user.
    // params: $user_id, $entity_id
    // :param user_id => 'u1'
    // :param entity_id => 'a3f0c2...'
    MATCH (e:Entitaet {id: $entity_id, user_id: $user_id})
    RETURN e

The declared parameters must be exactly the ones the body uses; a mismatch or a
duplicate name is a load error that names file and line. The `// :param` lines are
examples, exactly as Neo4j Browser takes them (paste them without the `//`, then the
query): a value per declared parameter, any Cypher expression. A query either has none
or one for each of its parameters; a test runs every query with its examples.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from kg.errors import QueryLoadError

# A parameter; `$any(...)` and `$all(...)` are dynamic-type functions, not parameters.
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)(?![A-Za-z0-9_]*\()")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_EXAMPLE = re.compile(r"^:param\s+([A-Za-z_][A-Za-z0-9_]*)\s*=>\s*(\S.*)$")


@dataclass(frozen=True)
class NamedQuery:
    """One query of the registry."""

    name: str
    doc: str
    params: frozenset[str]
    text: str
    source: str
    line: int
    #: `:param` examples from the header: (parameter, Cypher expression), in order.
    examples: tuple[tuple[str, str], ...] = ()


def cypher_dir() -> Path:
    """The `cypher/` directory: inside the wheel, or at the repository root."""
    packaged = Path(str(resources.files("kg"))) / "cypher"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "cypher"


def _strip_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def parse(text: str, source: str) -> list[NamedQuery]:
    """Parse the named queries of one file's text."""
    queries: list[NamedQuery] = []
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip().startswith("// name:")]
    if not starts:
        raise QueryLoadError(f"{source}:1: no '// name:' header found")
    preamble = _strip_comments("\n".join(lines[: starts[0]])).strip()
    if preamble:
        raise QueryLoadError(f"{source}:1: Cypher before the first '// name:' header")
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        block = lines[start:end]
        name = block[0].split(":", 1)[1].strip()
        lineno = start + 1
        if not _NAME.match(name):
            raise QueryLoadError(f"{source}:{lineno}: bad query name {name!r} (snake_case)")
        doc: list[str] = []
        examples: list[tuple[str, str]] = []
        declared: set[str] | None = None
        body_start = len(block)
        for i, line in enumerate(block[1:], start=1):
            stripped = line.strip()
            if not stripped.startswith("//"):
                body_start = i
                break
            comment = stripped[2:].strip()
            if comment.startswith("params:"):
                names = [p.strip() for p in comment[len("params:") :].split(",") if p.strip()]
                bad = [p for p in names if not _PARAM.fullmatch(p)]
                if bad:
                    raise QueryLoadError(
                        f"{source}:{start + i + 1}: parameters must be written $name: {bad}"
                    )
                declared = {p[1:] for p in names}
            elif comment.startswith(":param"):
                example = _EXAMPLE.match(comment)
                if not example:
                    raise QueryLoadError(
                        f"{source}:{start + i + 1}: write an example as ':param name => value'"
                    )
                examples.append((example.group(1), example.group(2).strip()))
            else:
                doc.append(comment)
        body = "\n".join(block[body_start:]).strip().rstrip(";").strip()
        if not body:
            raise QueryLoadError(f"{source}:{lineno}: query {name!r} has no Cypher")
        if not doc:
            raise QueryLoadError(f"{source}:{lineno}: query {name!r} has no doc line")
        used = set(_PARAM.findall(_strip_comments(body)))
        declared = declared or set()
        if used != declared:
            raise QueryLoadError(
                f"{source}:{lineno}: query {name!r} declares {sorted(declared)} "
                f"but uses {sorted(used)}"
            )
        shown = [n for n, _ in examples]
        if examples and (sorted(shown) != sorted(declared) or len(set(shown)) != len(shown)):
            raise QueryLoadError(
                f"{source}:{lineno}: query {name!r} gives ':param' examples for {shown} "
                f"but declares {sorted(declared)}: one example per parameter"
            )
        queries.append(
            NamedQuery(
                name, " ".join(doc), frozenset(declared), body, source, lineno, tuple(examples)
            )
        )
    return queries


def _parse_files(directory: Path) -> list[NamedQuery]:
    queries: list[NamedQuery] = []
    for path in sorted(directory.glob("*.cypher")):
        queries.extend(parse(path.read_text(encoding="utf-8"), path.name))
    return queries


class Registry:
    """All named queries of a directory tree, by name."""

    def __init__(self, queries: list[NamedQuery]) -> None:
        self._by_name: dict[str, NamedQuery] = {}
        for q in queries:
            if q.name in self._by_name:
                first = self._by_name[q.name]
                raise QueryLoadError(
                    f"{q.source}:{q.line}: query {q.name!r} already defined at "
                    f"{first.source}:{first.line}"
                )
            self._by_name[q.name] = q

    @classmethod
    def from_dir(cls, root: Path) -> Registry:
        """The queries of `root/queries/*.cypher`."""
        return cls(_parse_files(root / "queries"))

    def including(self, directory: Path) -> Registry:
        """This registry plus the queries of `directory/*.cypher`, e.g. tooling that keeps
        its own queries outside the package; a name defined twice is a load error."""
        return Registry([*self._by_name.values(), *_parse_files(directory)])

    def __getitem__(self, name: str) -> NamedQuery:
        try:
            return self._by_name[name]
        except KeyError:
            raise QueryLoadError(f"no query named {name!r} in {cypher_dir()}") from None

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._by_name.values())

    def names(self) -> set[str]:
        return set(self._by_name)


@cache
def registry() -> Registry:
    """The package's registry, parsed once."""
    return Registry.from_dir(cypher_dir())
