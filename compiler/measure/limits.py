"""What `hostc measure`'s options show before anything runs: the longest window and
where a record goes by default.  Constants only, so that every `hostc` start, which
registers the command, loads nothing of the readers or the report."""

from __future__ import annotations

from pathlib import Path

#: the longest window a measure counts for (seconds)
MAX_WINDOW = 600.0
#: the record a measure as root on this host writes by default, and audit shows
RECORD = Path("/var/lib/hostc/measure/last.json")
