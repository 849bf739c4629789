"""A selection of hosts (`hostc build|check|plan HOSTS`, `hostc diff DIR@REV DIR`): a
directory (`hosts/*.toml` and `hosts/*/node.toml`), a glob (`'hosts/dgx-*.toml'`) or a
list file (`@hosts.txt`, one spec per line, relative to the list file, `#` comments),
each spec named by its host.  `hostc.fleet.runner` runs them; this module reads only names
(it imports no part of the API, so the diff's sides can list hosts)."""

from __future__ import annotations

import glob
import re
from pathlib import Path

import attrs

from hostc.diagnostics import HostcError, file_error
from hostc.inputs import read_text_bounded
from hostc.record import Record


@attrs.frozen(repr=False, eq=False)
class FleetHost(Record):
    name: str  # the output folder: the spec's stem, or its folder for `<dir>/node.toml`
    spec: Path


#: A host's name is one word: its output folder `OUT/<host>`, never `.`, `..` or a path.
HOST_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")

#: The folder of OUT a fleet build writes for all its hosts, beside theirs: the ansible
#: target's one playbook and every host's variables (`hostc.fleet.runner.ansible_fleet`
#: writes it under this name).  OUT's other own files are hidden (`.hostc-build.json`),
#: which no host name can be.
FLEET_FOLDER = "ansible"
#: The names of OUT that are the fleet's, never a host's: refused as host names, in any
#: case (a case-insensitive file system makes `Ansible/` the same folder).
RESERVED = frozenset({FLEET_FOLDER})


def host_name(spec: Path) -> str:
    """The spec's stem, or its folder's name for `<dir>/node.toml` (as written: a
    `..` or `.` folder is kept, and refused by `select`)."""
    if spec.name != "node.toml":
        return spec.stem
    parts = spec.parts[:-1]
    return parts[-1] if parts else "."


def _list_file(arg: str) -> list[Path]:
    listing = Path(arg[1:])
    text = read_text_bounded(listing, limit=1 << 20, what="host list")
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [listing.parent / line for line in lines if line]


def select(arg: str) -> list[FleetHost]:
    """The hosts an argument names, sorted by name; HostcError when none or two collide."""
    if arg.startswith("@"):
        specs = _list_file(arg)
    elif Path(arg).is_dir():
        root = Path(arg)
        specs = sorted(root.glob("*.toml")) + sorted(root.glob("*/node.toml"))
    else:
        specs = [Path(p) for p in sorted(glob.glob(arg))]
    if not specs:
        raise HostcError([file_error(arg, "names no spec (no *.toml, */node.toml or match)")])
    return named(specs)


def named(specs: list[Path]) -> list[FleetHost]:
    """Each spec's host, sorted by name; HostcError when a name is not one word, is one of
    the fleet's own folders (RESERVED) or two collide."""
    seen: dict[str, Path] = {}
    problems = []
    for spec in specs:
        name = host_name(spec)
        if not HOST_NAME.fullmatch(name):
            problems.append(
                file_error(
                    str(spec),
                    f"host name {name[:80]!r} is not one word (letters, digits, `_.-`, "
                    "at most 128, not starting with `.` or `-`)",
                    hint="a host's name is its file stem, or its folder for <dir>/node.toml;"
                    " it names the host's output folder",
                )
            )
            continue
        if name.casefold() in RESERVED:
            problems.append(
                file_error(
                    str(spec),
                    f"host name {name!r} is the name of the fleet's own folder OUT/"
                    f"{FLEET_FOLDER}/ (every host's ansible files): the outputs would collide",
                    hint="rename the spec (a host's name is its file stem, or its folder "
                    "for <dir>/node.toml)",
                )
            )
            continue
        if name in seen and seen[name] != spec:
            problems.append(
                file_error(
                    str(spec),
                    f"host name {name!r} is also {seen[name]}'s: the outputs would collide",
                    hint="rename one spec (a host's name is its file stem, or its folder "
                    "for <dir>/node.toml)",
                )
            )
        seen.setdefault(name, spec)
    if problems:
        raise HostcError(problems)
    return sorted((FleetHost(n, s) for n, s in seen.items()), key=lambda h: h.name)
