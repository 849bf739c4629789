"""hostc: compile GPU host tuning from a declarative spec and a topology snapshot.

Kept import-light: `import hostc` costs nothing; the API lives in `hostc.api`.

Imports sit at module level, except where one keeps a command's unused modules
off its path and that earns >= 10 % of the command's instructions (callgrind,
hoisting the group at module level vs not, 2026-12-04; ~70 sites):

- the target modules and jinja2, loaded per named target (`hostc.targets`, `_render`):
  +12 % on `build --target cmdline`;
- what a single-host build never runs, together +25 % on `build --target all`
  (each alone 1-9 %): the report pages in `api/report.py` (svg, html, review/diff,
  explain, audit), the importers (`api/topology.py`, tarfile), the fleet runner
  (`cli/main.py`, `cli/fleet.py`, `fleet/runner.py`, multiprocessing), PyYAML for the
  two wrappers (`targets/_yaml.py`), tomli_w and importlib.metadata
  (`topology/snapshot.py`, `cli/base.py`);
- the compile stages behind `hostc.api` (`pipeline/compile.py`, `spec/structure.py`,
  `topology/snapshot.py`, `api/schemas.py`): +15 % on `hostc --help`.
"""

__version__ = "0.1.0"
