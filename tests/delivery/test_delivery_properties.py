"""Property: over generated specs and topologies, every file that user-data, config.ign,
the rootfs tree and rootfs.tar carry, decoded by an independent reader, equals the file
target's artifact byte for byte and mode; config.ign's kernel arguments are the Plan's."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.artifact import Action, Activation, Artifact, ArtifactKind
from hostc.plan.kernelargs import kernel_args
from hostc.spec import model as m
from hostc.targets import cloud_init, ignition, rootfs_tar
from hostc.topology.model import Topology

from conftest import example_plan
from delivery_read import (
    as_files,
    host_files,
    ignition_expected,
    ignition_files,
    tar_files,
    user_data,
    user_data_files,
)
from strategies import cases, compile_case

WRAPPERS = ["cloud-init", "ignition", "rootfs", "rootfs-tar"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_wrappers_carry_the_file_targets_byte_for_byte(case: tuple[Topology, m.HostSpec]) -> None:
    topo, spec = case
    plan, _ = compile_case(topo, spec)
    if plan is None:
        return
    files = host_files(plan)
    want = as_files(files)
    assert len(want) == len(files), "two file targets wrote the same path"
    out = {(a.target, a.path): a for a in api.emit(plan, WRAPPERS)}

    assert user_data_files(user_data(out["cloud-init", "user-data"].text)) == want

    doc = json.loads(out["ignition", "config.ign"].text)
    assert ignition_files(doc) == as_files(ignition_expected(plan, files))
    args = [str(a) for a in kernel_args(plan)]
    assert doc.get("kernelArguments", {}).get("shouldExist", []) == args

    tree = {
        p: (a.mode, a.data)
        for (t, p), a in out.items()
        if t == "rootfs" and a.kind is ArtifactKind.FILE
    }
    assert tree == want
    # the tar is the tree: the same files, and at its top the tree's apply.sh
    in_tar = tar_files(out["rootfs-tar", "rootfs.tar"].data)[0]
    apply_sh = out["rootfs", "apply.sh"]
    assert in_tar.pop("/apply.sh") == (apply_sh.mode, apply_sh.data)
    assert in_tar == want


_name = st.text(st.sampled_from("abcxyz019-_."), min_size=1, max_size=8).filter(
    lambda n: n not in (".", "..")
)
_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=200)
#: pieces that trip YAML, block scalars, percent-encoding and data URLs
_TRICKY = ["%41", "%", "%%", "#", "?", "+", " ", "  ", "\n", "\r\n", "\r", "\t", "'", '"',
           ": ", "- ", "&a", "*a", "!x", "---", "...", "|", ">", "ü", "\u2028", "\ufeff",
           "\x00", "\x1b", "data:,", ";base64,", "x"]  # fmt: skip
_tricky = st.lists(st.sampled_from(_TRICKY), max_size=30).map(lambda p: "".join(p).encode())
_data = st.one_of(st.binary(max_size=200), _text.map(lambda t: t.encode("utf-8")), _tricky)


@st.composite
def _artifacts(draw: st.DrawFn) -> list[Artifact]:
    paths = draw(
        st.lists(st.lists(_name, min_size=1, max_size=3), min_size=1, max_size=6, unique_by=tuple)
    )
    out: list[Artifact] = []
    seen: set[str] = set()
    for parts in paths:
        path = "/etc/" + "/".join(parts)
        # a path may not be both a file and another file's directory
        if any(path.startswith(s + "/") or s.startswith(path + "/") for s in seen):
            continue
        seen.add(path)
        mode = draw(st.sampled_from([0o644, 0o600, 0o640, 0o755, 0o444]))
        run = (Activation(Action.RUN),)
        out.append(Artifact("x", path, draw(_data), mode, activation=run))
    return out


@settings(max_examples=300, deadline=None)
@given(_artifacts())
def test_any_bytes_survive_every_wrapper(files: list[Artifact]) -> None:
    """Arbitrary bytes (binary, unicode, CR, trailing blanks, YAML and URL syntax) and modes."""
    plan = example_plan("h100-4gpu-inference")
    want = as_files(files)
    assert user_data_files(user_data(cloud_init.user_data(plan, files))) == want
    assert ignition_files(ignition.config(plan, files)) == want
    assert tar_files(rootfs_tar.tarball(files))[0] == want
