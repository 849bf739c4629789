"""Atomic output, proven: a build that dies part-way leaves every file old or new, never half.

Two ways to die: os.replace raising at a random call (in process), and SIGKILL
after a random short delay (a real `hostc build` subprocess).  Afterwards each
destination holds the previous bytes or the new bytes; no visible temporary file
exists (a killed build may leave hidden `.NAME.*.hostc-tmp` staging files, which
`--check` ignores); a failed build leaves no directory skeleton.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hostc import api
from hostc.delivery import descriptors, output
from hostc.delivery.owned import RECORD

from conftest import ROOT

EXAMPLE = ROOT / "examples" / "h100-4gpu-inference" / "node.toml"
SPEC = ROOT / "examples/h100-4gpu-inference/node.toml"


def files(root: Path) -> dict[str, bytes]:
    """The build's files (its record of them, `hostc.delivery.owned`, left out)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and p != root / RECORD
    }


def visible(tree: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in tree.items() if not descriptors.is_staging_file(Path(k))}


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, dict[str, bytes], dict[str, bytes]]:
    """An `out` holding an older build (every file changed), and the bytes a build makes now."""
    plan, _ = api.compile_file(SPEC)
    arts = api.emit(plan)
    out = tmp_path / "out"
    api.write(arts, out)
    new = files(out)
    old = {k: b"# previous build\n" + v[::-1] for k, v in new.items()}
    for k, v in old.items():
        (out / k).write_bytes(v)
    return out, old, new


def check_each_old_or_new(out: Path, old: dict[str, bytes], new: dict[str, bytes]) -> None:
    now = visible(files(out))
    assert set(now) == set(old), set(now) ^ set(old)
    for k, v in now.items():
        assert v in (old[k], new[k]), k


def test_replace_failing_at_a_random_call(
    trees: tuple[Path, dict[str, bytes], dict[str, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, old, new = trees
    plan, _ = api.compile_file(SPEC)
    arts = api.emit(plan)
    real = os.replace
    for seed in range(len(arts)):
        for k, v in old.items():  # every file differs again (an unchanged one is not replaced)
            (out / k).write_bytes(v)
        calls = {"n": 0}

        def flaky(
            a: str | Path,
            b: str | Path,
            fail_at: int = seed,
            calls: dict[str, int] = calls,
            **dir_fds: int,
        ) -> None:
            calls["n"] += 1
            if calls["n"] > fail_at:
                raise OSError(28, "No space left on device")
            real(a, b, **dir_fds)

        monkeypatch.setattr(os, "replace", flaky)
        with pytest.raises(OSError):
            api.write(arts, out)
        monkeypatch.setattr(os, "replace", real)
        check_each_old_or_new(out, old, new)
        assert files(out) == visible(files(out)), "staging files left by a failed write"


def test_failed_first_build_leaves_no_skeleton(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan, _ = api.compile_file(SPEC)
    arts = api.emit(plan)
    out = tmp_path / "fresh" / "out"
    calls = {"n": 0}
    real = output._stage_at

    def flaky(dfd: int, name: str, data: bytes, mode: int, *rest: Any) -> str:
        calls["n"] += 1
        if calls["n"] == len(arts):
            raise OSError(28, "No space left on device")
        return real(dfd, name, data, mode, *rest)

    monkeypatch.setattr(output, "_stage_at", flaky)
    with pytest.raises(OSError):
        api.write(arts, out)
    assert not (tmp_path / "fresh").exists()


def test_sigkill_at_random_points(
    trees: tuple[Path, dict[str, bytes], dict[str, bytes]],
) -> None:
    out, old, new = trees
    rng = random.Random(11)
    start = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "hostc", "build", SPEC, "-o", out.parent / "t"],
        check=True,
        capture_output=True,
    )
    full = time.monotonic() - start
    shutil.rmtree(out.parent / "t")
    for _ in range(12):
        for k, v in old.items():
            (out / k).write_bytes(v)
        p = subprocess.Popen(
            [sys.executable, "-m", "hostc", "build", SPEC, "--out", out, "-q"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.5, 1.0) * full)
        p.send_signal(signal.SIGKILL)
        p.wait()
        check_each_old_or_new(out, old, new)
        # hidden staging files are the only leftovers, and --check does not see them
        for k in set(files(out)) - set(old):
            assert descriptors.is_staging_file(Path(k)), k
    r = subprocess.run(
        [sys.executable, "-m", "hostc", "build", SPEC, "--out", out, "-q"], capture_output=True
    )
    assert r.returncode == 0
    r = subprocess.run(
        [sys.executable, "-m", "hostc", "build", SPEC, "--out", out, "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout


def test_a_directory_another_writer_makes_meanwhile_is_used_not_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fleet build's workers write into one --out tree: when another worker creates a
    directory between our look and our mkdir, the write goes on (found in CI: `cannot
    write: File exists`).  Simulated by a mkdir that loses every race."""
    real_mkdir, real_path_mkdir = os.mkdir, Path.mkdir

    def losing_mkdir(path: object, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        real_mkdir(path, mode, dir_fd=dir_fd)  # type: ignore[arg-type]
        raise FileExistsError(17, "File exists", str(path))

    def losing_path_mkdir(self: Path, *args: object, **kwargs: object) -> None:
        real_path_mkdir(self)
        raise FileExistsError(17, "File exists", str(self))

    arts = api.emit(api.compile_file(EXAMPLE)[0], ["sysctl", "systemd"])
    monkeypatch.setattr(os, "mkdir", losing_mkdir)
    monkeypatch.setattr(Path, "mkdir", losing_path_mkdir)
    output.write(arts, tmp_path / "out" / "host")
    monkeypatch.undo()
    for a in arts:
        assert (tmp_path / "out" / "host" / a.target / a.relpath).read_bytes() == a.data


def test_staging_writes_every_byte_and_removes_a_file_it_could_not_fill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Staging writes through the descriptor: a short write (a signal, a filling disk)
    is continued, and a failed one leaves no staged file behind."""
    data = bytes(range(256)) * 1000
    real = os.write
    monkeypatch.setattr(os, "write", lambda fd, b: real(fd, bytes(b[:4096])))
    dest = tmp_path / "f"
    output.write_bytes(dest, data, mode=0o751)
    assert dest.read_bytes() == data
    assert dest.stat().st_mode & 0o7777 == 0o751

    def full(fd: int, b: bytes) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError):
        output.write_bytes(tmp_path / "g", data)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]
