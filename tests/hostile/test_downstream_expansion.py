"""No value reaches a consumer that would expand it (the rules: docs/escaping.md).

Arbitrary text (hypothesis `st.text()`) goes into every free-text field of a spec;
whatever hostc accepts is compiled for every target that applies, and each artifact
is read back with its consumer's rule: systemd-sysctl's for sysctl.d, TuneD's
loader, variables and sysctl plugin for the profile, systemd's specifiers for units
and drop-ins, sh for scripts, YAML for cloud-init and JSON for Ignition.
"""

from __future__ import annotations

import base64
import configparser
import gzip
import json
import re
import shlex
from typing import Any
from urllib.parse import unquote

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.artifact import Artifact
from hostc.diagnostics import HostcError
from hostc.targets import TARGETS
from hostc.targets._escape import EXPANSION
from hostc.topology.model import Topology

from topogen import H100_KW, machine

TOPO: Topology = machine(**H100_KW)  # type: ignore[arg-type]
KEY = "kernel.core_pattern"
#: What sh and GRUB take literally unquoted (the kernel-argument charset and a space).
SHELL_PLAIN = re.compile(r"^[A-Za-z0-9_.,:/=+@%-]*$")


def base(owner: str) -> dict[str, Any]:
    return {
        "version": 1,
        "host": {"name": "t", "role": "inference", "kernel": "6.8"},
        "workload": [{"name": "w", "gpus": ["GPU0"]}],
        "runtime": {"owner": owner},
        "irq": {"owner": "irqbalance"},
    }


def artifacts(data: dict[str, Any]) -> list[Artifact] | None:
    """Every artifact of every applicable target, or None when hostc refuses the spec."""
    try:
        plan, _ = api.compile_plan(api.spec_from_data(data), TOPO)
    except HostcError:
        return None
    return api.emit(plan, [n for n, t in TARGETS.items() if t.applies(plan) is None])


def text(a: Artifact) -> str:
    return a.data.decode("utf-8")


def sysctl_d_value(a: Artifact, key: str) -> str | None:
    """systemd-sysctl's reading: comments skipped, split at the first `=`, both stripped."""
    for line in text(a).splitlines():
        if line.lstrip().startswith(("#", ";")) or "=" not in line:
            continue
        k, _, v = line.partition("=")
        if k.strip() == key:
            return v.strip()
    return None


def tuned_value(a: Artifact, key: str) -> str | None:
    """TuneD's reading: its loader's configparser, then what the sysctl plugin does."""
    cp = configparser.ConfigParser(
        delimiters=("=",), inline_comment_prefixes=("#",), strict=False, interpolation=None
    )
    cp.optionxform = str  # type: ignore[assignment, method-assign]
    cp.read_string(text(a))
    if not cp.has_option("sysctl", key):
        return None
    raw = cp.get("sysctl", key, raw=True)
    assert "${" not in raw, f"TuneD would expand {raw!r}"
    assert re.sub(r'^"(.*)"$', r"\1", raw) == raw, f"TuneD would unquote {raw!r}"
    assert not (len(raw) > 1 and raw[0] in "<>"), f"TuneD would read {raw!r} as a modifier"
    return raw


def no_specifier(a: Artifact) -> None:
    """systemd expands `%x` in unit settings; `%%` is a literal percent."""
    for line in text(a).splitlines():
        if not line.startswith(("#", ";")) and "=" in line:
            assert "%" not in line.replace("%%", ""), f"specifier in {a.path}: {line!r}"


def shell_literal(a: Artifact, value: str, before: set[str]) -> None:
    """In a script the value stands in a comment, as one plain word, or shell-quoted;
    only lines the value brought in count (`before`: the lines without it)."""
    if SHELL_PLAIN.match(value):
        return
    for line in text(a).splitlines():
        if line in before:
            continue
        if value in line and not line.lstrip().startswith("#"):
            assert shlex.quote(value) in line, f"{value!r} unquoted in {a.path}: {line!r}"


def is_unit(a: Artifact) -> bool:
    return "/systemd/" in a.path and a.path.endswith((".service", ".conf"))


def is_script(a: Artifact) -> bool:
    return a.data.startswith(b"#!") or a.path.endswith((".cfg", ".sh"))


#: Every line of every artifact of the plain specs, per owner: what a value did not bring.
_BASELINE: dict[str, set[str]] = {}


def baseline(owner: str) -> set[str]:
    if owner not in _BASELINE:
        arts = artifacts(base(owner)) or []
        _BASELINE[owner] = {ln for a in arts for ln in text(a).splitlines()}
    return _BASELINE[owner]


def check_all(arts: list[Artifact], value: str, sysctl: bool, before: set[str]) -> None:
    by_path = {(a.target, a.path): a for a in arts}
    for a in arts:
        if a.target == "sysctl" and sysctl:
            assert sysctl_d_value(a, KEY) == value
        if a.target == "tuned" and a.path.endswith("/tuned.conf"):  # not its wait unit
            got = tuned_value(a, KEY)
            assert not sysctl or got == value
        if is_unit(a) and a.target in ("systemd", "rootfs", "kubelet", "tuned"):
            no_specifier(a)
        if is_script(a):
            shell_literal(a, value, before)
        if a.target == "cloud-init":
            doc = yaml.safe_load(text(a))
            for f in doc.get("write_files", []):
                twin = next((b for (t, p), b in by_path.items() if p == f["path"] and t not in
                             ("cloud-init", "rootfs")), None)  # fmt: skip
                if twin is not None and "content" in f:  # as cloud-init reads write_files
                    raw = f["content"]
                    enc = f.get("encoding")
                    got = base64.b64decode(raw) if enc else raw.encode()
                    got = gzip.decompress(got) if enc == "gz+b64" else got
                    assert got == twin.data
        if a.target == "ignition":
            doc = json.loads(text(a))
            for f in doc["storage"].get("files", []):
                src = f["contents"]["source"]
                if src.startswith("data:,"):
                    twin = next((b for (t, p), b in by_path.items() if p == f["path"] and t not in
                                 ("ignition", "rootfs")), None)  # fmt: skip
                    if twin is not None:
                        assert unquote(src[len("data:,") :]).encode() == twin.data


#: Arbitrary text, and arbitrary text around what some consumer expands or re-reads.
HOSTILE = st.one_of(
    st.text(max_size=40),
    st.builds(
        lambda a, b, c: a + b + c,
        st.text(max_size=6),
        st.sampled_from(["${", "${f:exec:id}", "${i:PROFILE_DIR}", "%n", "%%", '"', "<", ">",
                         "$(", "`", "'", "\\", " ", "*", "=", "--", "\u202e"]),
        st.text(max_size=6),
    ),
)  # fmt: skip


def test_every_target_has_a_row_in_the_expansion_table() -> None:
    assert set(TARGETS) <= set(EXPANSION), set(TARGETS) - set(EXPANSION)


@given(value=HOSTILE, owner=st.sampled_from(["systemd", "tuned"]))
@settings(max_examples=120, deadline=None)
def test_a_sysctl_value_reaches_every_consumer_literally(value: str, owner: str) -> None:
    arts = artifacts({**base(owner), "sysctl": {KEY: value}})
    if arts is not None:
        check_all(arts, value, sysctl=True, before=baseline(owner))


@pytest.mark.parametrize(
    "value",
    ["${f:exec:/bin/sh:-c:id}", "${isolated_cores}", '"x"', ">100", "<5", " 1", "1 ",
     "${i:PROFILE_DIR}"],
)  # fmt: skip
def test_a_sysctl_value_a_consumer_would_reread_is_refused(value: str) -> None:
    for owner in ("systemd", "tuned"):
        assert artifacts({**base(owner), "sysctl": {KEY: value}}) is None


FIELDS = [
    lambda v: {"host": {"name": v, "role": "inference", "kernel": "6.8"}},
    lambda v: {"workload": [{"name": v, "gpus": ["GPU0"]}]},
    lambda v: {"workload": [{"name": "w", "gpus": ["GPU0"], "unit": v}]},
    lambda v: {"kernel": {"extra_args": [v]}},
    lambda v: {"kernel": {"extra_args": [f"foo={v}"]}},
    lambda v: {"modules": {"options": {"nvidia": v}}},
    lambda v: {"modules": {"blacklist": [v]}},
    lambda v: {"services": {"disable": [v]}},
    lambda v: {"preset": {"exclude": [v]}},
    lambda v: {"sysctl": {v: 1}},
]


@given(
    value=HOSTILE,
    field=st.sampled_from(range(len(FIELDS))),
    owner=st.sampled_from(["systemd", "tuned"]),
)
@settings(max_examples=200, deadline=None)
def test_arbitrary_text_in_any_field_reaches_no_consumer_that_expands_it(
    value: str, field: int, owner: str
) -> None:
    arts = artifacts({**base(owner), **FIELDS[field](value)})
    if arts is not None:
        check_all(arts, value, sysctl=False, before=baseline(owner))
