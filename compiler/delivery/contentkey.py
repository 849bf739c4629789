"""Content keys: what a fleet host's result depends on, hashed, so that a host whose
inputs did not change is neither loaded nor compiled again (issue 56).

A host's build reads its spec, every file of its `extends` chain, and the topology
snapshot the merged spec names (`host.topology`, relative to the file that names it)
or `--topology`.  `inputs` finds those files without compiling: it parses each layer's
TOML for `extends` and `host.topology` alone and takes every snapshot ANY layer names
(a superset of the one the merge keeps: never too few).  Anything odd (a file missing,
unreadable, not TOML, a cycle) gives None, and the caller compiles as before: the
compiler, not this module, says what is wrong.

Two uses, two kinds of key:

- `hostc diff DIR@REV DIR` compares the same paths on both sides: a host none of whose
  input files differs between the revision (git's blob ids, `hostc.fleet.gitrev`) and the
  working tree (the same blob ids computed from the bytes) compiles to the same result
  on both sides, so it is "unchanged" without compiling either (`hostc.fleet.fleetdiff`).
- a build under `--out` (`build`, `changed`) is keyed by `build_key`: hostc's version
  and its own sources, the job (targets, `--topology`, `--strict`), the working
  directory and the path and bytes of every input.  The key is written into the host's
  build record sealed with a secret that only this user's cache holds (`seal`): a
  record a pull request commits under `out/` cannot carry a seal this machine accepts,
  so a planted or edited record (or a deleted cache) means a rebuild, never a skip.

A host that is compiled after all is compiled from the bytes its key was made from
(`build_key`'s `into`, `compile_file`'s `known`): never other bytes than the key names.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hostc.diagnostics import HostcError
from hostc.inputs import SNAPSHOT_LIMIT, read_bytes_bounded
from hostc.spec.parse import SPEC_LIMIT

#: what an input file is: (path as the build names it, normalised; "spec" or "snapshot")
Input = tuple[str, str]

#: the cache folder's one file: the secret a record's seal is made with
SECRET = "record-seal.key"
SECRET_BYTES = 32


def _toml(data: bytes, shown: str) -> dict[str, Any] | None:
    from hostc.spec.layers import parsed  # remembered: a class is parsed once, not per host

    try:
        return parsed(data.decode("utf-8"), shown)
    except (HostcError, UnicodeDecodeError):
        return None


def walk(spec: Path, read: Any, into: dict[str, bytes] | None = None) -> list[Input] | None:
    """Every file a build of `spec` reads: (normalised path, kind), the spec first;
    `read(path, kind)` gives a file's bytes or None (then so does this).  Paths are
    joined as the compiler joins them (`layers._Reader`): relative to the naming file.
    `into` receives the bytes of the spec files it read (not the snapshots: named only)."""
    seen: dict[str, str] = {}
    todo = [spec]
    while todo:
        p = todo.pop()
        name = os.path.normpath(p)
        if name in seen:
            continue
        if len(seen) > 4096:  # far past any fleet: the compiler judges such a spec
            return None
        if not _plain(str(p), name):
            return None
        seen[name] = "spec"
        data = read(Path(name), "spec")
        if data is None:
            return None
        if into is not None:
            into[name] = data
        doc = _toml(data, name)
        if doc is None:
            return None
        ext = doc.get("extends", [])
        if not isinstance(ext, list) or not all(isinstance(x, str) for x in ext):
            return None
        todo += [p.parent / x for x in ext]
        host = doc.get("host")
        topo = host.get("topology") if isinstance(host, dict) else None
        if topo is not None:
            if not isinstance(topo, str):
                return None
            snap = os.path.normpath(p.parent / topo)
            if not _plain(str(p.parent / topo), snap):
                return None
            seen.setdefault(snap, "snapshot")
    return sorted(seen.items())


@functools.lru_cache(maxsize=4096)
def _plain(given: str, name: str) -> bool:
    """Whether the path as the compiler joins it (`given`) and its lexical form (`name`,
    what keys and git name) reach the same file: a `..` after a symbolic link does not."""
    return given == name or os.path.realpath(given) == os.path.realpath(name)


class DiskReader:
    """The working tree's files, each read once per process while its status holds
    (size, times, inode): a fleet's class and snapshot are hashed once, not per host."""

    def __init__(self) -> None:
        self._seen: dict[tuple[object, ...], bytes] = {}

    def __call__(self, path: Path, kind: str) -> bytes | None:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None
        mark = (
            os.path.abspath(path),
            st.st_dev,
            st.st_ino,
            st.st_size,
            st.st_mtime_ns,
            st.st_ctime_ns,
        )
        found = self._seen.get(mark)
        if found is None:
            limit = SPEC_LIMIT if kind == "spec" else SNAPSHOT_LIMIT
            try:
                found = read_bytes_bounded(path, limit=limit, what=kind)
            except (HostcError, OSError):
                return None
            if len(self._seen) > 65536:
                self._seen.clear()
            self._seen[mark] = found
        return found


DISK = DiskReader()


def blob_id(data: bytes, algorithm: str = "sha1") -> str:
    """git's object id of a file holding `data` (`git hash-object`)."""
    h = hashlib.new(algorithm)
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


@functools.cache
def _sources() -> str:
    """A digest of hostc's own code and templates: a dev tree edited without a new
    version number still never reuses a key."""
    import importlib.util

    import hostc

    # the targets' folder, located without importing them (delivery sits below targets)
    spec = importlib.util.find_spec("hostc.targets")
    found = spec.origin if spec is not None and spec.origin else hostc.__file__
    h = hashlib.sha256()
    roots = sorted({Path(hostc.__file__).parent, Path(found).parent})
    for root in roots:
        for here, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for n in sorted(names):
                if n.endswith((".pyc", ".marshal")):
                    continue
                p = os.path.join(here, n)
                try:
                    with open(p, "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                h.update(os.path.relpath(p, root).encode("utf-8", "surrogateescape") + b"\0")
                h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


def version() -> str:
    """hostc's version (read at each call: a test may change it) and its sources."""
    import hostc

    return f"{hostc.__version__}+{_sources()}"


#: benchmarks only (`benchmarks/keys.py`): set to 1, every key is None and no host is
#: skipped, so the same tree times the full path beside the fast one.  Never needed
#: for correctness: a key that does not match already means a rebuild.
FULL_PATH = "HOSTC_BENCH_FULL_PATH"


def enabled() -> bool:
    """Whether hosts may be skipped by their content keys (see `FULL_PATH`)."""
    return os.environ.get(FULL_PATH) != "1"


def build_key(
    spec: Path,
    targets: Sequence[str],
    topology: Path | None = None,
    strict: bool = False,
    read: Any = DISK,
    into: dict[str, bytes] | None = None,
) -> str | None:
    """The key of a build of `spec` (see the module's docstring), or None where its
    inputs cannot all be read (or keys are off, `FULL_PATH`): then the host is
    compiled, as without keys.  `into` receives the bytes the key was made from, by
    normalised path: the build compiles those very bytes (`compile_file`'s `known`), so a
    file that changes between the key and the compile cannot give a key that describes
    other bytes than the Plan's, and the compile reads no input a second time."""
    if not enabled():
        return None
    got: dict[str, bytes] = {}  # each spec file read once: by the walk, hashed here
    found = walk(spec, read, got)
    if found is None:
        return None
    if topology is not None:  # --topology wins over every host.topology
        name = os.path.normpath(topology)
        if not _plain(str(topology), name):
            return None
        found = [f for f in found if f[1] == "spec"] + [(name, "snapshot")]
    parts: list[object] = [version(), list(targets), strict, os.getcwd(), str(spec)]
    for name, kind in found:
        data = got.get(name) if kind == "spec" else read(Path(name), kind)
        if data is None:
            return None
        parts.append([name, kind, _digest(data)])
        if into is not None:
            into[name] = data
    return hashlib.sha256(json.dumps(parts).encode("utf-8", "surrogateescape")).hexdigest()


@functools.lru_cache(maxsize=1024)
def _digest(data: bytes) -> str:
    """sha256 of an input's bytes, remembered: a fleet's class and snapshot are the same
    bytes object for every host (`DiskReader`), whose hash Python keeps, so a host's key
    hashes only its own spec (a fleet host's snapshot was 80 k instructions a host)."""
    return hashlib.sha256(data).hexdigest()


def cache_dir() -> Path:
    """The user's cache folder for hostc ($XDG_CACHE_HOME/hostc, else ~/.cache/hostc),
    by the environment as it is now (asked a few times a fleet host)."""
    return _cache_dir(os.environ.get("XDG_CACHE_HOME") or "", os.environ.get("HOME"))


@functools.lru_cache(maxsize=8)
def _cache_dir(base: str, home: str | None) -> Path:
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "hostc"


#: the secret as read by this process, by its path: a fleet build seals and checks a
#: record a host, and reading the file again each time was 4 system calls a host
_READ: dict[Path, bytes] = {}


def _secret(create: bool) -> bytes | None:
    """The cache's secret (made on first use, 0600), or None: no cache, no seals."""
    path = cache_dir() / SECRET
    if path in _READ:
        return _READ[path]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return _make_secret(path) if create else None
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        data = os.read(fd, SECRET_BYTES + 1)
    finally:
        os.close(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o077 or len(data) != SECRET_BYTES:
        return None  # not this user's own secret: trusted by nothing
    _READ[path] = data
    return data


def _make_secret(path: Path) -> bytes | None:
    """A new secret, staged and linked into place: the first writer wins, and a
    concurrent build's secret is read, not replaced."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{SECRET}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, secrets.token_bytes(SECRET_BYTES))
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    except OSError:
        return None
    return _secret(create=False)


#: the build record's field that holds the seal
FIELD = "inputs_seal"


def seal(key: str, body: bytes) -> str | None:
    """The seal a build record gets: the key and the record's bytes without the seal
    (`owned.sealed_body`), authenticated with the cache's secret (None: no usable
    cache, no seal).  The bytes as written, not the fields: a check re-serialises
    nothing (that was a reused fleet host's 50 µs)."""
    secret = _secret(create=True)
    if secret is None:
        return None
    return hmac.new(secret, key.encode() + b"\0" + body, hashlib.sha256).hexdigest()


def sealed(key: str, body: bytes | None, found: object) -> bool:
    """Whether a build record whose bytes without the seal are `body` and whose seal is
    `found` was written by a build of exactly these inputs, on this machine, by this
    user's hostc."""
    if body is None or not isinstance(found, str):
        return False
    secret = _secret(create=False)
    if secret is None:
        return False
    want = hmac.new(secret, key.encode() + b"\0" + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(want, found)
