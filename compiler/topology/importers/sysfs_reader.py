"""The lenient file reader every sysfs/procfs importer module reads through.

Everything is read relative to a root so that the live host, a capture archive
and a test fixture go through the same code.  Every missing-but-required,
unreadable or malformed file becomes a diagnostic naming that file, collected
rather than raised, so one probe reports every broken file at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import attrs

from hostc.cpuset import MAX_CPU, CpuListError, CpuSet
from hostc.diagnostics import Diagnostic, HostcError, file_error
from hostc.inputs import SOURCE_LIMIT
from hostc.topology.importers.chroot import HostTree, TreeTooLarge

# ASCII digits only: `\d` and int() accept Arabic-Indic and full-width digits.
_NUMBERED = re.compile(r"^(cpu|node)([0-9]{1,6})$")
DECIMAL = re.compile(r"-?[0-9]{1,18}")
_HEX = re.compile(r"(?:0x)?[0-9a-fA-F]{1,16}")

#: A sysfs or procfs value is one line: a sysfs attribute is at most a page (4 KiB, 64 KiB
#: on 64K-page arm64 and ppc64), a CPU list file of Linux 5.14+ at most NR_CPUS × 7 / 2
#: bytes (28 KiB for 8,192 CPUs), /proc/cmdline at most COMMAND_LINE_SIZE (2-4 KiB).  A
#: larger file is no value: refused by its size, never read (a tree of hard links to one
#: 16 MB file cost a copy of it per CPU file).
VALUE_LIMIT = 64 << 10
#: The whole files read beside the values, filtered by `keep`: /proc/cpuinfo (about 1.5 KB
#: a CPU), /proc/meminfo, os-release, the kernel config, the stored nvidia-smi text.
FILE_LIMIT = SOURCE_LIMIT


class Reader:
    """Files under a root, read leniently: failures are collected, not raised.

    Collecting lets one probe report every broken file at once, and remembering
    what was read is what makes `capture` store exactly the files probe needs.
    """

    def __init__(self, root: Path, display: str | None = None) -> None:
        self.root = root
        self.display = display  # archive name for messages; None: the real path
        self.tree = HostTree(root, shown=display)
        self.errors: list[Diagnostic] = []
        self.files: dict[str, bytes] = {}
        self.dirs: set[str] = set()
        #: per file (the tree's one bytes object, by id: hard links share it), its text,
        #: None when it is not UTF-8; and per text (by id) what `cpulist` or `integer`
        #: made of it, or why not: a thousand links to one file cost one decode, one parse
        self._texts: dict[int, str | None] = {}
        self._parsed: dict[tuple[str, int], object] = {}

    def where(self, rel: str) -> str:
        return str(self.root / rel) if self.display is None else f"{self.display}:{rel}"

    def fail(self, rel: str, message: str) -> None:
        self.errors.append(file_error(self.where(rel), message))

    def mark(self, rel: str) -> None:
        """Record a directory whose existence (not content) carries meaning."""
        self.dirs.add(rel)

    def path(self, rel: str) -> Path | None:
        """`rel` under the root, links resolved as if the root were / (`chroot`)."""
        try:
            return self.tree.path(rel)
        except OSError as e:
            self.fail(rel, f"cannot be resolved: {e.strerror or e}")
            return None

    def text(
        self, rel: str, keep: Callable[[str], str] | None = None, *, limit: int = VALUE_LIMIT
    ) -> str | None:
        """`rel`'s text: a one-line value (at most `limit`, VALUE_LIMIT unless a whole file
        is meant: FILE_LIMIT), or None with a diagnostic; `keep` filters a whole file down
        to what is used (and kept in a capture)."""
        if self.path(rel) is None:
            return None
        what = "sysfs or procfs value" if limit == VALUE_LIMIT else f"{rel} file"
        try:
            data = self.tree.read(rel, limit=limit, what=what)
        except TreeTooLarge:
            raise
        except HostcError as e:
            self.errors += [attrs.evolve(d, file=self.where(rel)) for d in e.diagnostics]
            return None
        if data is None:
            return None
        if id(data) in self._texts:
            text = self._texts[id(data)]
        else:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = None
            self._texts[id(data)] = text
        if text is None:
            self.files[rel] = data
            self.fail(rel, "is not text; expected a sysfs or procfs value")
            return None
        if keep is None:
            self.files[rel] = data  # the tree's one object per file: hard links copy nothing
            return text
        text = keep(text)
        self.files[rel] = text.encode("utf-8")
        return text

    def _value(self, rel: str, kind: str, parse: Callable[[str], object]) -> object:
        """What `parse` makes of `rel`'s text (a string: why it cannot), once per file."""
        text = self.text(rel)
        if text is None:
            return None
        key = (kind, id(text))  # the text is kept in `_texts`: its id stays its own
        if key not in self._parsed:
            self._parsed[key] = parse(text)
        found = self._parsed[key]
        if isinstance(found, str):
            self.fail(rel, found)
            return None
        return found

    def integer(self, rel: str, *, base: int = 10) -> int | None:
        def parse(text: str) -> int | str:
            if (_HEX if base == 16 else DECIMAL).fullmatch(text.strip()):
                return int(text.strip(), base)
            kind = "a hexadecimal number" if base == 16 else "an integer"
            return f"expected {kind}, found {text.strip()[:40]!r}"

        found = self._value(rel, f"integer/{base}", parse)
        return found if isinstance(found, int) else None

    def cpulist(self, rel: str) -> CpuSet | None:
        def parse(text: str) -> CpuSet | str:
            try:
                return CpuSet.parse(text)
            except (CpuListError, ValueError) as e:
                return f"is not a CPU list: {e}"

        found = self._value(rel, "cpulist", parse)
        return found if isinstance(found, CpuSet) else None

    def listdir(self, rel: str) -> list[str]:
        path = self.path(rel)
        if path is None:
            return []
        try:
            names = sorted(p.name for p in path.iterdir())
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as e:
            self.fail(rel, f"cannot be listed: {e.strerror or e}")
            return []
        self.mark(rel)
        return names

    def is_dir(self, rel: str) -> bool:
        path = self.path(rel)
        found = path is not None and path.is_dir()
        if found:
            self.mark(rel)
        return found


def known(value: int | None) -> int | None:
    """The kernel writes -1 for ids it does not know (arm64 without PPTT, etc.)."""
    return value if value is not None and value >= 0 else None


def numbered(r: Reader, rel: str, prefix: str) -> list[int]:
    """The N of each `<prefix>N` entry of `rel` (cpu0, node1), in order."""
    out = []
    for name in r.listdir(rel):
        m = _NUMBERED.match(name)
        if m and m.group(1) == prefix and int(m.group(2)) <= MAX_CPU:
            out.append(int(m.group(2)))
    return sorted(out)
