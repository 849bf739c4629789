"""hostc: compile GPU host tuning from a declarative spec and a topology snapshot.

Kept import-light: `import hostc` costs nothing; the API lives in `hostc.api`.
"""

__version__ = "0.1.0"
