"""The benchmark suite: a seeded data generator, a bulk loader, and the runs.

Benchmarks print figures; they are not timed tests and never gate CI. See
`bench/README.md` for what is measured and how to reproduce it.
"""
