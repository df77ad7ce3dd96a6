"""The `kg` command: the maintainers' tool over the `kg` library."""
