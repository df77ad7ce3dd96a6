"""The `kg` command's entry point: what only a process of its own may do, then `cli.main`.

The Neo4j driver imports numpy, pandas and pyarrow at start whenever they are installed
(for its DataFrame export, which kg never uses): with numpy alone that is 60-110 ms of a
`kg mappe` that takes a few hundred. The command's process hides them from the driver.
The library does not: a chat backend that imports `kg` may well use numpy itself.

It also freezes what the imports made (`gc.freeze`): the ~40,000 objects of the modules
are never garbage, and without the freeze the collector walks all of them again at every
full collection and at exit, which took ~25 ms of each short command.
"""

from __future__ import annotations

import gc
import sys

#: Optional imports of the driver that the `kg` command never uses.
UNUSED = ("numpy", "pandas", "pyarrow")


def main() -> None:
    for name in UNUSED:
        # None in sys.modules makes `import name` raise ImportError, which the driver
        # expects of a package that is not installed.
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
    from cli.main import main as run

    gc.freeze()
    run()
