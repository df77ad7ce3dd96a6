"""Named Cypher queries, kept in `.cypher` files and parsed once into a registry.

A file holds one or more queries; each starts with a header of comment lines::

    // name: entity_by_id
    // The entity with this id, if it belongs to the user.
    // params: $user_id, $entity_id
    // :param user_id => 'u1'
    // :param entity_id => 'a3f0c2...'
    MATCH (e:Entitaet {id: $entity_id, user_id: $user_id})
    RETURN e

Text that several queries share is a *fragment*: a block with a `// fragment: name`
header and a doc line, used in a query's body by a line `{{ name }}`, which the loader
replaces with the fragment's lines (indented like the placeholder) when it loads the
files. Fragments are shared by every file of the registry; an unknown or unused one is
a load error. A composed query is what `registry()[name].text` shows for pasting
into Neo4j Browser; what runs is its `wire` form, the same Cypher without the comments
and the indentation (`wire_form`).

The declared parameters must be exactly the ones the (composed) body uses; a mismatch
or a duplicate name is a load error that names file and line. The `// :param` lines are
examples, exactly as Neo4j Browser takes them (paste them without the `//`, then the
query): a value per declared parameter, any Cypher expression. A query either has none
or one for each of its parameters; a test runs every query with its examples.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from pathlib import Path

from kg.errors import QueryLoadError

# A parameter; `$any(...)` and `$all(...)` are dynamic-type functions, not parameters.
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)(?![A-Za-z0-9_]*\()")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_EXAMPLE = re.compile(r"^:param\s+([A-Za-z_][A-Za-z0-9_]*)\s*=>\s*(\S.*)$")
# A fragment used on a line of its own: `{{ name }}`, with the line's indentation.
_USE = re.compile(r"^(\s*)\{\{\s*([a-z][a-z0-9_]*)\s*\}\}\s*$")
_HEADER = re.compile(r"^//\s*(name|fragment):")
_WHAT = {"name": "query", "fragment": "fragment"}
# A string literal or a quoted name (kept as it is, whatever it holds: `//`, quotes,
# line breaks), else a comment (dropped; a space keeps the tokens around it apart).
_STRING = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`"
_COMMENT = re.compile(rf"({_STRING})|//[^\n]*|/\*.*?\*/", re.S)
# Else a line break with the blank space around it (blank lines, indentation).
_BREAK = re.compile(rf"({_STRING})|[ \t]*\n\s*", re.S)

#: A block of a file: "name" or "fragment", its name, the index of its header, its lines.
_Block = tuple[str, str, int, list[str]]


@dataclass(frozen=True)
class Fragment:
    """Cypher text shared by several queries, inserted where a query says `{{ name }}`."""

    name: str
    doc: str
    lines: tuple[str, ...]
    source: str
    line: int


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

    @cached_property
    def wire(self) -> str:
        """The text as it is sent (`wire_form`), made at its first use."""
        return wire_form(self.text)


def wire_form(text: str) -> str:
    """The Cypher of `text` as the server takes it: without comments, indentation and
    blank lines; string literals and quoted names as they are.

    The server reads a query's whole text on every call (Bolt's message, the string it
    makes of it, the pre-parser, the plan cache's key), and the Mappe's comments were
    most of its 38 KB: sent without them, a Mappe took ~0.25 ms less (bench/README.md,
    "thirty-sixth"). Their non-Latin-1 characters also made the server's copy of the
    text a string of two bytes per character."""
    plain = _COMMENT.sub(lambda m: m.group(1) or " ", text)
    return _BREAK.sub(lambda m: m.group(1) or "\n", plain).strip()


def cypher_dir() -> Path:
    """The `cypher/` directory: inside the wheel, or at the repository root."""
    packaged = Path(str(resources.files("kg"))) / "cypher"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "cypher"


def _strip_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def fragments_of(text: str, source: str) -> dict[str, Fragment]:
    """The fragments of one file's text."""
    return _fragments(_blocks(text, source), source)


def _fragments(blocks: list[_Block], source: str) -> dict[str, Fragment]:
    """The fragments among one file's blocks."""
    found: dict[str, Fragment] = {}
    for kind, name, start, block in blocks:
        if kind != "fragment":
            continue
        doc = [line.strip()[2:].strip() for line in block[1:] if line.strip().startswith("//")]
        body = [line for line in block[1:] if not line.strip().startswith("//")]
        while body and not body[-1].strip():
            body.pop()
        if not doc or not body:
            raise QueryLoadError(f"{source}:{start + 1}: fragment {name!r} needs a doc line "
                                 "and Cypher")
        if name in found:
            raise QueryLoadError(f"{source}:{start + 1}: fragment {name!r} defined twice")
        found[name] = Fragment(name, " ".join(doc), tuple(body), source, start + 1)
    return found


def _blocks(text: str, source: str) -> list[_Block]:
    """The file's blocks: (name or fragment, its name, index of its header, its lines)."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _HEADER.match(line.strip())]
    if not starts:
        raise QueryLoadError(f"{source}:1: no '// name:' header found")
    preamble = _strip_comments("\n".join(lines[: starts[0]])).strip()
    if preamble:
        raise QueryLoadError(f"{source}:1: Cypher before the first '// name:' header")
    blocks = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        kind, name = lines[start].strip()[2:].split(":", 1)
        if not _NAME.match(name.strip()):
            raise QueryLoadError(
                f"{source}:{start + 1}: bad {_WHAT[kind.strip()]} name {name.strip()!r} "
                "(snake_case)"
            )
        blocks.append((kind.strip(), name.strip(), start, lines[start:end]))
    return blocks


def _compose(
    lines: list[str], fragments: Mapping[str, Fragment], source: str, first: int,
    used: set[str], inside: tuple[str, ...] = (),
) -> list[str]:
    """The lines with every `{{ name }}` replaced by its fragment's lines (composed in
    turn; `inside` are the fragments being composed, so a cycle is a load error)."""
    out: list[str] = []
    for i, line in enumerate(lines):
        use = _USE.match(line)
        if use is None:
            if "{{" in line:
                raise QueryLoadError(f"{source}:{first + i + 1}: write a fragment on a line of "
                                     "its own: {{ name }}")
            out.append(line)
            continue
        indent, name = use.groups()
        if name not in fragments:
            raise QueryLoadError(f"{source}:{first + i + 1}: no fragment named {name!r}")
        fragment = fragments[name]
        if name in inside:
            raise QueryLoadError(f"{source}:{first + i + 1}: fragment {name!r} uses itself")
        used.add(name)
        inner = _compose(list(fragment.lines), fragments, fragment.source, fragment.line,
                         used, (*inside, name))
        out.extend(indent + text if text.strip() else text for text in inner)
    return out


def parse(
    text: str, source: str, fragments: Mapping[str, Fragment] | None = None,
    fragments_used: set[str] | None = None,
) -> list[NamedQuery]:
    """Parse the named queries of one file's text, its fragments (and `fragments`, those
    of the other files) composed into them; `fragments_used` collects the fragments they
    use."""
    blocks = _blocks(text, source)
    shared = {**(fragments or {}), **_fragments(blocks, source)}
    return _queries(blocks, source, shared, set() if fragments_used is None else fragments_used)


def _queries(
    blocks: list[_Block], source: str, fragments: Mapping[str, Fragment],
    fragments_used: set[str],
) -> list[NamedQuery]:
    """The named queries among one file's blocks, `fragments` composed into them."""
    queries: list[NamedQuery] = []
    for kind, name, start, block in blocks:
        if kind != "name":
            continue
        lineno = start + 1
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
        composed = _compose(
            block[body_start:], fragments, source, start + body_start, fragments_used
        )
        body = "\n".join(composed).strip().rstrip(";").strip()
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


def _parse_files(*directories: Path) -> list[NamedQuery]:
    """The queries of the directories' `*.cypher` files, with the fragments of all of
    them composed in; a fragment no query uses is a load error."""
    files = [(_blocks(path.read_text(encoding="utf-8"), path.name), path.name)
             for directory in directories for path in sorted(directory.glob("*.cypher"))]
    fragments: dict[str, Fragment] = {}
    for blocks, source in files:
        for name, fragment in _fragments(blocks, source).items():
            if name in fragments:
                first = fragments[name]
                raise QueryLoadError(f"{source}:{fragment.line}: fragment {name!r} already "
                                     f"defined at {first.source}:{first.line}")
            fragments[name] = fragment
    used: set[str] = set()
    queries: list[NamedQuery] = []
    for blocks, source in files:
        queries.extend(_queries(blocks, source, fragments, used))
    for name in sorted(fragments.keys() - used):
        f = fragments[name]
        raise QueryLoadError(f"{f.source}:{f.line}: fragment {name!r} is used by no query")
    return queries


class Registry:
    """All named queries of a directory tree, by name."""

    def __init__(self, queries: list[NamedQuery], directories: tuple[Path, ...] = ()) -> None:
        #: Where the queries came from (to load more with the same fragments).
        self._directories = directories
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
        return cls(_parse_files(root / "queries"), (root / "queries",))

    def including(self, directory: Path) -> Registry:
        """This registry plus the queries of `directory/*.cypher`, e.g. tooling that keeps
        its own queries outside the package (they may use its fragments); a name defined
        twice is a load error."""
        if self._directories:
            directories = (*self._directories, directory)
            return Registry(_parse_files(*directories), directories)
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
