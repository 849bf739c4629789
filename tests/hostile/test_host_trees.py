"""Untrusted host trees and archives (`audit --root`, `audit --capture`, `probe --root`,
`probe --capture`): one reader (`HostTree`) for all of them.

Hypothesis plants links and hard links at the paths audit reads: absolute links
and `..` chains that point at a secret outside the tree, directory links out of
it, many hard links to one large file.  Whatever it plants, nothing outside the
tree is read, each file is read once, and the bytes read stay within the budget.
Capture archives whose members unpack past their header size (sparse members)
are refused before they unpack past MAX_ARCHIVE_BYTES.
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import pytest
from audit_host import perfect_host
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.audit.findings import audit
from hostc.audit.host import HostReader
from hostc.diagnostics import HostcError
from hostc.topology.importers import archive
from hostc.topology.importers.chroot import HostTree

from conftest import ROOT

DGX = ROOT / "examples" / "dgx-h100-inference" / "node.toml"
PLAN = api.compile_file(DGX)[0]
SECRET = b"SECRET-of-the-auditing-machine"

#: Files audit reads on a host where the Plan took effect, and directories it lists.
_PROBE = HostReader(perfect_host(PLAN, Path(tempfile.mkdtemp(prefix="hostc-tree-"))), live=False)
audit(PLAN, _PROBE)
FILES = sorted(_PROBE.files)
DIRS = sorted({"etc/sysctl.d", "usr/lib/sysctl.d", "proc/irq", *_PROBE.dirs})

QUICK = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

plantings = st.lists(
    st.tuples(
        st.sampled_from(["abs-link", "dotdot-link", "dir-link", "hard-link"]),
        st.sampled_from(FILES + DIRS),
        st.integers(1, 40),
    ),
    min_size=1,
    max_size=6,
)


def _plant(root: Path, outside: Path, big: Path, kind: str, rel: str, n: int) -> None:
    path = root / rel
    if path.is_dir() and not path.is_symlink():
        if kind != "dir-link":
            path = path / f"{n:02d}-planted.conf"
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        os.rename(path, path.with_name(path.name + ".moved"))
    if kind == "abs-link":
        path.symlink_to(outside / "secret")
    elif kind == "dotdot-link":
        path.symlink_to("../" * (rel.count("/") + n) + str(outside / "secret").lstrip("/"))
    elif kind == "dir-link":
        path.symlink_to(outside)
    else:
        for i in range(n):  # many names, one file
            link = path.with_name(f"{path.name}.{i}.conf") if i else path
            if not link.exists():
                os.link(big, link)


def _real_bytes(root: Path) -> int:
    """The tree's bytes, each file once (hard links counted once, links not followed)."""
    seen: dict[tuple[int, int], int] = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            st_ = os.lstat(os.path.join(dirpath, name))
            if not os.path.islink(os.path.join(dirpath, name)):
                seen[(st_.st_dev, st_.st_ino)] = st_.st_size
    return sum(seen.values())


@QUICK
@given(plantings)
def test_audit_reads_nothing_outside_the_tree_and_each_file_once(plants: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        outside = Path(tmp) / "outside"
        outside.mkdir()
        (outside / "secret").write_bytes(SECRET + b"\n")
        (outside / "99-secret.conf").write_bytes(b"vm.swappiness = " + SECRET + b"\n")
        root = perfect_host(PLAN, Path(tmp) / "root")
        big = Path(tmp) / "root" / "big"
        big.write_bytes(b"# " + b"x" * (256 << 10) + b"\nvm.swappiness = 1\n")
        for kind, rel, n in plants:
            _plant(root, outside, big, kind, rel, n)
        host = HostReader(root, live=False)
        findings = audit(PLAN, host)
        assert not any(SECRET in data for data in host.files.values())
        shown = api.audit_json(findings, root)
        assert SECRET.decode() not in shown
        assert host.tree.spent <= _real_bytes(root)


def test_a_tree_past_the_budget_is_refused_not_read(tmp_path: Path) -> None:
    root = perfect_host(PLAN, tmp_path / "root")
    for i in range(3):
        (root / f"etc/sysctl.d/{i}-big.conf").write_bytes(b"#" * (3 << 20))
    tree = HostTree(root, budget=8 << 20)
    host = HostReader(root, live=False)
    host.tree = tree
    with pytest.raises(HostcError, match="not a host tree"):
        audit(PLAN, host)
    assert tree.spent <= (8 << 20) + (4 << 20)  # the budget, plus at most the file that broke it


def _archive(members: list[tuple[str, int, int]]) -> bytes:
    """A gzip tar of members (name, stored bytes, size they unpack to: sparse past it)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name, stored, real in members:
            info = tarfile.TarInfo(name)
            info.size = stored
            if real > stored:
                info.pax_headers = {"GNU.sparse.map": f"0,{stored}", "GNU.sparse.size": str(real)}
            tar.addfile(info, io.BytesIO(b"1" * stored))
    return raw.getvalue()


members = st.lists(
    st.tuples(
        st.sampled_from(["proc/cmdline", "sys/a", "sys/b", "etc/sysctl.d/x.conf"]),
        st.integers(1, 64),
        st.integers(0, 3) | st.sampled_from([40 << 20, 70 << 20, 1 << 30]),
    ),
    min_size=1,
    max_size=4,
    unique_by=lambda m: m[0],
)


@settings(QUICK, max_examples=15)
@given(members)
def test_an_archive_never_unpacks_past_its_limit(found: list[tuple[str, int, int]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "capture.tar.gz"
        path.write_bytes(_archive(found))
        try:
            with archive.extracted(path) as tree:
                size = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())
        except HostcError:
            return
        assert size <= archive.MAX_ARCHIVE_BYTES
        assert all(real <= stored for _, stored, real in found), "a sparse member unpacked"
