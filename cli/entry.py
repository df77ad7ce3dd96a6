"""The `kg` command's entry point: what only a process of its own may do, then `cli.main`.

The Neo4j driver imports numpy, pandas and pyarrow at start whenever they are installed
(for its DataFrame export, which kg never uses): with numpy alone that is 60-110 ms of a
`kg mappe` that takes a few hundred. The command's process hides them from the driver.
The library does not: a chat backend that imports `kg` may well use numpy itself.

It loads no pydantic plugins. Pydantic looks for them when it builds its first
validator: it imports importlib.metadata (and with it the email package) and reads the
entry points of every installed package, 20-35 ms of a `kg mappe`, for plugins (such as
tracing) that the command never uses. The command's process gives pydantic a plugin
loader that finds none; again, the library leaves a chat backend's pydantic alone.

It also keeps the garbage collector out of the imports: the ~190,000 objects they make
are never garbage, yet the collector, counting them as they come, ran two full
collections and some 250 young ones over them during the imports, 60-80 ms of a `kg
mappe`. So it is off while they run, and then what they made is frozen (`gc.freeze`), so
that no later full collection, nor the one at exit (~25 ms), walks them again.
"""

from __future__ import annotations

import gc
import sys
from types import ModuleType

#: Optional imports of the driver that the `kg` command never uses.
UNUSED = ("numpy", "pandas", "pyarrow")

#: Where pydantic (2.x) imports `get_plugins` from when it builds a validator.
PLUGIN_LOADER = "pydantic.plugin._loader"


def _no_plugins() -> ModuleType:
    """A stand-in for pydantic's plugin loader that finds no plugin (pydantic's own
    answer when none is installed, or with PYDANTIC_DISABLE_PLUGINS=__all__)."""
    loader = ModuleType(PLUGIN_LOADER)
    loader.get_plugins = lambda: ()  # type: ignore[attr-defined]
    return loader


def main() -> None:
    collecting = gc.isenabled()
    gc.disable()
    try:
        for name in UNUSED:
            # None in sys.modules makes `import name` raise ImportError, which the driver
            # expects of a package that is not installed.
            sys.modules.setdefault(name, None)  # type: ignore[arg-type]
        sys.modules.setdefault(PLUGIN_LOADER, _no_plugins())
        from cli.main import for_argv
        from cli.main import main as run

        app = for_argv(sys.argv)  # imports the modules of the command to run
        gc.freeze()
    finally:
        if collecting:
            gc.enable()
    run(app)
