"""Readers for the delivery wrappers, independent of the emitters: what a consumer would
unpack from user-data, config.ign and rootfs.tar, as {path: (mode, bytes)}."""

from __future__ import annotations

import base64
import gzip
import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes

import pytest
import yaml

from hostc import api
from hostc.artifact import ArtifactKind
from hostc.plan.kernelargs import kernel_args
from hostc.plan.model import Plan

from conftest import IN_CI, ROOT

Files = dict[str, tuple[int, bytes]]


def build_cli(example: str, target: str) -> subprocess.CompletedProcess[bytes]:
    """`hostc build examples/<example>/node.toml --target <target>` as a pipeline runs it."""
    return hostc_cli("build", str(ROOT / "examples" / example / "node.toml"), "--target", target)


def hostc_cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "hostc", *args], capture_output=True, cwd=ROOT, timeout=120
    )


def host_files(plan: Plan) -> list[api.Artifact]:
    """Every applicable file target's host files, plus the lifecycle files (manifest,
    hostc-apply, hostc-revert) made from them: what the wrappers must carry."""
    from hostc.targets import lifecycle

    files = [a for a in api.emit(plan, ["all"]) if a.kind is ArtifactKind.FILE]
    return files + lifecycle.artifacts(plan, files)


def ignition_expected(plan: Plan, files: list[api.Artifact]) -> list[api.Artifact]:
    """What an Ignition config must write of `files` (host_files): all but the GRUB
    drop-in (kernelArguments carry the arguments), with the lifecycle's manifest as the
    installed one, listing the others and the kernel arguments (Ignition never runs
    hostc-apply)."""
    from hostc.artifact import Action, Artifact
    from hostc.targets import lifecycle

    out = [
        a
        for a in files
        if not any(x.action is Action.BOOTLOADER for x in a.activation)
        and a.path != lifecycle.NEW_MANIFEST
    ]
    kargs = [str(a) for a in kernel_args(plan)]  # kernelArguments: revert takes them out
    record = lifecycle.manifest_text(plan, out, kargs).encode()
    return [*out, Artifact("ignition", lifecycle.MANIFEST, record)]


def as_files(arts: list[api.Artifact]) -> Files:
    return {a.path: (a.mode, a.data) for a in arts}


def user_data(text: str) -> dict[str, Any]:
    assert text.startswith("#cloud-config\n")
    doc = yaml.safe_load(text)
    assert isinstance(doc, dict)
    return doc


def user_data_files(doc: dict[str, Any]) -> Files:
    out: Files = {}
    for e in doc.get("write_files", []):
        assert e["owner"] == "root:root"
        assert isinstance(e["permissions"], str), e["permissions"]
        raw = e["content"]
        enc = e.get("encoding")
        assert enc in (None, "b64", "gz+b64"), enc
        data = base64.b64decode(raw, validate=True) if enc else raw.encode("utf-8")
        data = gzip.decompress(data) if enc == "gz+b64" else data
        out[e["path"]] = (int(e["permissions"], 8), data)
    return out


def data_url(url: str) -> bytes:
    """RFC 2397, the two forms Ignition takes: `data:,<percent-encoded>`, `data:;base64,<b64>`."""
    head, sep, body = url.partition(",")
    assert sep and head in ("data:", "data:;base64"), url[:40]
    if head == "data:;base64":
        return base64.b64decode(body, validate=True)
    assert not any(c.isspace() for c in body), "raw whitespace in a data URL"
    return unquote_to_bytes(body)


def ignition_files(doc: dict[str, Any]) -> Files:
    """storage.files plus systemd units and drop-ins (Ignition writes those 0644)."""
    out: Files = {}
    for f in doc.get("storage", {}).get("files", []):
        assert f["overwrite"] is True and isinstance(f["mode"], int)
        data = data_url(f["contents"]["source"])
        assert f["contents"].get("compression") in (None, "gzip")
        gz = f["contents"].get("compression") == "gzip"
        out[f["path"]] = (f["mode"], gzip.decompress(data) if gz else data)
    for u in doc.get("systemd", {}).get("units", []):
        base = f"/etc/systemd/system/{u['name']}"
        if "contents" in u:
            out[base] = (0o644, u["contents"].encode("utf-8"))
        for d in u.get("dropins", []):
            out[f"{base}.d/{d['name']}"] = (0o644, d["contents"].encode("utf-8"))
    return out


def tar_files(data: bytes) -> tuple[Files, dict[str, int]]:
    """Regular files and directories (name → mode) of a tarball."""
    files: Files = {}
    dirs: dict[str, int] = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for m in tar.getmembers():
            assert m.uid == m.gid == 0 and m.uname == m.gname == "root" and m.mtime == 0
            if m.isdir():
                dirs["/" + m.name.rstrip("/")] = m.mode
            else:
                assert m.isfile(), m.name
                f = tar.extractfile(m)
                assert f is not None
                files["/" + m.name] = (m.mode, f.read())
    return files, dirs


def tree_files(root: Path, skip: tuple[str, ...] = ()) -> Files:
    """Every regular file under root, by its path on the host."""
    out: Files = {}
    for p in sorted(root.rglob("*")):
        rel = "/" + p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(skip):
            out[rel] = (p.stat().st_mode & 0o7777, p.read_bytes())
    return out


def need_root() -> None:
    if os.geteuid() != 0:
        if IN_CI:
            pytest.fail("CI runs as root; the real cloud-init/Ignition runs need it")
        pytest.skip("needs root (a private mount namespace / chown to root)")
