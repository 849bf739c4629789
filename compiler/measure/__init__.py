"""`hostc measure`: what still interrupts the isolated CPUs, counted over a window and
attributed to the Plan setting that should have prevented it.

`sources` parses the /proc files (pure), `host` reads them under a root, `tasks` samples
which threads ran where, `run` is the window (the one part that waits), `promise` reads
what the Plan promises each CPU, `attribute` judges every count against it (pure),
`model` holds the result and `report` prints it (text, JSON, audit's summary).
docs/measure.md describes the method.
"""
