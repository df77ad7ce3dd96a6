"""The `kg` command's entry point: what only a process of its own may do, then `cli.main`.

The Neo4j driver imports numpy, pandas and pyarrow at start whenever they are installed
(for its DataFrame export, which kg never uses): with numpy alone that is 60-110 ms of a
`kg mappe` that takes a few hundred. The command's process hides them from the driver.
The library does not: a chat backend that imports `kg` may well use numpy itself.
"""

from __future__ import annotations

import sys

#: Optional imports of the driver that the `kg` command never uses.
UNUSED = ("numpy", "pandas", "pyarrow")


def main() -> None:
    for name in UNUSED:
        # None in sys.modules makes `import name` raise ImportError, which the driver
        # expects of a package that is not installed.
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
    from cli.main import main as run

    run()
