"""Compiled templates are cached the way Python caches bytecode, and never change output.

Each case runs `hostc build` in a child with its own `PYTHONPYCACHEPREFIX`, so the
cache it writes is the test's and the tree stays clean.
"""

from __future__ import annotations

import os
from pathlib import Path

from conftest import ROOT, run_hostc

EXAMPLE = ROOT / "examples" / "dgx-h100-inference" / "node.toml"


def build(out: Path, prefix: Path, *, write_bytecode: bool = True) -> dict[str, bytes]:
    env = {"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": ""}
    if not write_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    r = run_hostc("build", EXAMPLE, "--target", "all", "--out", out, "-q", env=env)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def cache_files(prefix: Path) -> list[Path]:
    return sorted(prefix.rglob("jinja2-*.cache"))


def test_cache_is_written_then_used_and_output_is_the_same(tmp_path: Path) -> None:
    prefix = tmp_path / "pycache"
    first = build(tmp_path / "a", prefix)
    cached = cache_files(prefix)
    assert len(cached) >= 10, cached  # one per template the build rendered
    stamps = {p: p.stat().st_mtime_ns for p in cached}
    second = build(tmp_path / "b", prefix)
    assert second == first
    # read, not rewritten: a cache hit leaves the files as they were
    assert {p: p.stat().st_mtime_ns for p in cache_files(prefix)} == stamps


def test_corrupt_cache_means_compiling_again(tmp_path: Path) -> None:
    prefix = tmp_path / "pycache"
    first = build(tmp_path / "a", prefix)
    for p in cache_files(prefix):
        p.write_bytes(b"j2 not a cache" + os.urandom(64))
    assert build(tmp_path / "b", prefix) == first


def test_unwritable_cache_means_compiling_each_time(tmp_path: Path) -> None:
    prefix = tmp_path / "pycache"
    prefix.write_text("a file where the cache directory would go\n")
    first = build(tmp_path / "a", prefix)
    assert build(tmp_path / "b", tmp_path / "other") == first


def test_nothing_written_under_dont_write_bytecode(tmp_path: Path) -> None:
    prefix = tmp_path / "pycache"
    build(tmp_path / "a", prefix, write_bytecode=False)
    assert cache_files(prefix) == []
