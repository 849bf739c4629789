"""The build record's format (`DIR/.hostc-build.json`, written by `hostc.delivery.owned`):
its rows and their checks.  A record is input like any other: a folder can hold one hostc
did not write, so every field is checked before a file it names is touched."""

from __future__ import annotations

import json
from typing import Any, NotRequired, TypedDict, cast

import attrs

from hostc.diagnostics import HostcError, file_error, kind_of
from hostc.inputs import loads_json

RECORD = ".hostc-build.json"
FORMAT = 1


_NOT_OURS = (
    f"not a record hostc wrote; remove {RECORD} (hostc then removes no stale file) and build again"
)


def _bad(shown: str, key: str, why: str) -> HostcError:
    return HostcError([file_error(shown, f"{key}: {why}", hint=_NOT_OURS)])


def _valid_path(p: object) -> bool:
    if not isinstance(p, str) or p.startswith("/") or "\\" in p or "\0" in p:
        return False
    parts = p.split("/")
    return len(parts) >= 2 and all(x not in ("", ".", "..") for x in parts)


class RecordRow(TypedDict):
    """One file of a build record, as `parse` checked it."""

    path: str  # <target>/<relpath> under DIR (`_valid_path`)
    host_path: str
    kind: str
    sha256: str
    mode: NotRequired[str]  # records before modes were kept: 0644
    activation: list[str]


class BuildRecord(TypedDict):
    """A build record (`DIR/.hostc-build.json`), as `parse` checked it."""

    hostc_build: int
    scope: list[str]
    selected: list[str]
    dirs: list[str]  # folders under DIR that hostc made (`_valid_path`)
    files: list[RecordRow]
    fleet: NotRequired[bool]
    facts: NotRequired[dict[str, Any]]  # read leniently by `hostc.delivery.disruption`


def _strings(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _check_row(f: object, at: str, shown: str) -> None:
    if not isinstance(f, dict):
        raise _bad(shown, at, f"expected a table, got {kind_of(f)}")
    if not _valid_path(f.get("path")):
        raise _bad(shown, f"{at}.path", "expected a path inside DIR (<target>/<file>)")
    for key in ("host_path", "kind", "sha256", *(("mode",) if "mode" in f else ())):
        if not isinstance(f.get(key), str):
            raise _bad(shown, f"{at}.{key}", f"expected a string, got {kind_of(f.get(key))}")
    if not _strings(f.get("activation")):
        raise _bad(shown, f"{at}.activation", "expected a list of strings")


def parse(text: str, shown: str) -> BuildRecord:
    """The one check of a build record, by its structure (`BuildRecord`): JSON through
    `inputs.loads_json` (nesting and numbers bounded), every field of its type, every
    path relative and inside DIR.  Anything else is one HostcError naming `shown` and
    the field; a record that passes is safe to index as its type says."""
    try:
        doc = loads_json(text, shown, "build record")
    except HostcError as e:
        raise HostcError([attrs.evolve(d, hint=_NOT_OURS) for d in e.diagnostics]) from None
    if not isinstance(doc, dict):
        raise _bad(shown, "(document)", f"expected a table, got {kind_of(doc)}")
    try:  # a `\udcff` escape decodes to no character: no path, and no record to write again
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise _bad(shown, "(document)", "a string holds a lone surrogate escape") from None
    version = doc.get("hostc_build")
    if type(version) is not int or version != FORMAT:  # not True, which == 1
        raise _bad(shown, "hostc_build", f"expected {FORMAT}")
    for key in ("scope", "selected", "dirs"):
        if not _strings(doc.get(key)):
            raise _bad(shown, key, "expected a list of strings")
    if not all(_valid_path(f"{d}/x") for d in doc["dirs"]):
        raise _bad(shown, "dirs", "a folder outside DIR")
    files = doc.get("files")
    if not isinstance(files, list):
        raise _bad(shown, "files", f"expected a list, got {kind_of(files)}")
    for i, f in enumerate(files):
        _check_row(f, f"files[{i}]", shown)
    if not isinstance(doc.get("fleet", False), bool):
        raise _bad(shown, "fleet", "expected true or false")
    if not isinstance(doc.get("facts", {}), dict):
        raise _bad(shown, "facts", "expected a table")
    return cast(BuildRecord, doc)
