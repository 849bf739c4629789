"""`hostc bench`: the seeds' method (a baseline, one change, three repeats) as a command.

It runs the user's benchmark N times, reads its figures with a reader that knows the
benchmark's output (`readers`), records each run with what was in effect on the host
(`state`, `record`), compares two records with a verdict that knows the noise
(`stats`), and measures which live setting of a Plan earns its place by reverting one
at a time (`ablate`, through the one writer of live values, `writer`).
"""
