"""One truth for a change (issue 50 item 2): what `hostc diff` says a change costs, what
hostc-apply does on the host (in a sandbox root: HOSTC_ROOT, where it says what it would
run and runs nothing) and what the Ansible play acts on are the same thing.

Changes are generated: each setting class alone and in random combinations, over the
examples and their runtime-owner variants (hostc's own tuning unit, TuneD, irqbalance
owning IRQs, a kubelet node).  For each pair of builds:

- `hostc-apply --disruption` (the new build's script over the two manifests) prints
  exactly the disruption `hostc diff` computes (`hostc.fleet.diffinputs.review`, what
  `--json` prints);
- the delivery's guarded steps (`hostc.delivery.activation`), run through hostc-apply
  in the sandbox, run exactly the live steps and restarts that disruption names, and
  none while it owes a reboot;
- the Ansible vars carry no decision of their own (the play reads `--disruption`).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.artifact import Artifact
from hostc.delivery.activation import steps
from hostc.fleet.diffinputs import review
from hostc.targets import lifecycle

from conftest import ROOT, need_tool

Edit = Callable[[dict[str, Any]], None]


def _sysctl(key: str, value: int) -> Edit:
    return lambda d: d.setdefault("sysctl", {}).__setitem__(key, value)


def _more_housekeeping(d: dict[str, Any]) -> None:
    d["cpu"]["housekeeping_per_node"] = d["cpu"].get("housekeeping_per_node", 2) + 1


def _blacklist(d: dict[str, Any]) -> None:
    m = d.setdefault("modules", {})
    m["blacklist"] = [*m.get("blacklist", []), "pcspkr"]


def _disable(d: dict[str, Any]) -> None:
    s = d.setdefault("services", {})
    s["disable"] = [*s.get("disable", []), "whoopsie.service"]


def _thp(d: dict[str, Any]) -> None:
    d.setdefault("kernel", {})["transparent_hugepage"] = "never"


def _nofile(d: dict[str, Any]) -> None:
    d.setdefault("limits", {})["nofile"] = 4194304


def _reserved(d: dict[str, Any]) -> None:
    if "kubelet" in d:
        d["kubelet"].setdefault("system_reserved", {})["memory"] = "6Gi"


def _runtime_hugepages(d: dict[str, Any]) -> None:
    """The pools written per node by hostc-hugepages.service, not the command line."""
    d.setdefault("hugepages", {"size": "1G", "total": 2})["allocate"] = "runtime"


def _second_pool(d: dict[str, Any]) -> None:
    hp = d.setdefault("hugepages", {"size": "1G", "total": 2})
    hp.setdefault("pools", []).append({"size": "2M", "total": 64})


#: the setting classes a fleet changes: each alone and combined
EDITS: dict[str, Edit] = {
    "sysctl": _sysctl("vm.swappiness", 7),
    "socket-sysctl": _sysctl("net.core.somaxconn", 8192),
    "housekeeping": _more_housekeeping,
    "blacklist": _blacklist,
    "services.disable": _disable,
    "thp": _thp,
    "limits.nofile": _nofile,
    "kubelet managers": _reserved,
    "hugepages at runtime": _runtime_hugepages,
    "hugepage pool": _second_pool,
}


def _tuned(d: dict[str, Any]) -> None:
    d.setdefault("runtime", {})["owner"] = "tuned"


def _irqbalance(d: dict[str, Any]) -> None:
    d.setdefault("irq", {})["owner"] = "irqbalance"


#: example × runtime-owner variant
VARIANTS: dict[str, tuple[str, Edit | None]] = {
    "dgx (hostc tuning, hostc IRQs)": ("dgx-h100-inference", None),
    "dgx, irqbalance owns IRQs": ("dgx-h100-inference", _irqbalance),
    "h100, TuneD owns runtime": ("h100-4gpu-inference", _tuned),
    "rke2 kubelet node": ("dgx-h100-rke2", None),
}


@functools.cache
def _build(variant: str, edits: frozenset[str], where: str) -> tuple[Path, list[Artifact]] | None:
    """The variant with `edits` applied, written as a spec beside its snapshot; its
    delivery's files (rootfs: every host file with hostc-apply and the manifest).  None
    when the spec is refused (a combination the checks do not accept)."""
    example, owner = VARIANTS[variant]
    src = ROOT / "examples" / example
    data = tomllib.loads((src / "node.toml").read_text())
    if owner is not None:
        owner(data)
    for name in sorted(edits):
        EDITS[name](data)
    folder = Path(where) / f"{example}-{abs(hash((variant, edits)))}"
    folder.mkdir(parents=True, exist_ok=True)
    topo = data["host"].get("topology", "topology.toml")
    shutil.copy(src / topo, folder / Path(topo).name)
    data["host"]["topology"] = Path(topo).name
    spec = folder / "node.toml"
    spec.write_text(tomli_w.dumps(data))
    try:
        plan, _ = api.compile_file(spec)
    except api.HostcError:
        return None
    return spec, [a for a in api.emit(plan, ["rootfs"]) if a.kind.value == "file"]


def _sandbox(root: Path, old: list[Artifact], new: list[Artifact]) -> Path:
    """A host root holding the old build's manifest as applied and the new one's."""
    if root.exists():
        shutil.rmtree(root)
    var = root / "var" / "lib" / "hostc"
    var.mkdir(parents=True)
    (var / "manifest").write_bytes(_manifest(old))
    (var / "manifest.new").write_bytes(_manifest(new))
    script = root / "hostc-apply"
    script.write_bytes(next(a.data for a in new if a.path == lifecycle.APPLY))
    return script


def _manifest(files: list[Artifact]) -> bytes:
    return next(a.data for a in files if a.path == lifecycle.NEW_MANIFEST)


def _apply(root: Path, script: Path, *args: str, awk: Path | None = None) -> str:
    """hostc-apply ARGS in the sandbox; `awk`: a folder whose `awk` comes first on PATH."""
    path = f"{awk}{os.pathsep}{os.environ['PATH']}" if awk else os.environ["PATH"]
    done = subprocess.run(
        ["sh", str(script), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "HOSTC_ROOT": str(root), "HOSTC_CHANGED": "", "PATH": path},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _as_applier(d: dict[str, Any]) -> dict[str, set[str]]:
    """`hostc diff --json`'s disruption, in hostc-apply --disruption's words."""
    return {
        "reboot": set(d["reboot_for"]),
        "drain": {"the kubelet's managers (checkpoints cleared at boot)"}
        if d["kubelet_reset"]
        else set(),
        "restart": set(d["restart"]),
        "live": set(d["live"]),
        "later": set(d["later"]),
        "summary": {d["summary"]},
    }


def _printed(text: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {k: set() for k in ("reboot", "drain", "restart", "live", "later")}
    out["summary"] = set()
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        out[kind].add(rest)
    return out


CHANGE = st.tuples(
    st.sampled_from(sorted(VARIANTS)),
    st.frozensets(st.sampled_from(sorted(EDITS)), max_size=3),
    st.frozensets(st.sampled_from(sorted(EDITS)), max_size=3),
)


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> str:
    if shutil.which("sh") is None:
        pytest.skip("no sh")
    return str(tmp_path_factory.mktemp("one-truth"))


def _pair(
    where: str, change: tuple[str, frozenset[str], frozenset[str]]
) -> tuple[Any, Path, Path, tuple[Path, list[Artifact]]] | None:
    """The change's disruption as `hostc diff` computes it, and a sandbox root holding both
    builds' manifests with the new build's hostc-apply (None: a side is refused)."""
    variant, before, after = change
    old, new = _build(variant, before, where), _build(variant, after, where)
    if old is None or new is None:
        return None
    said = review(str(old[0]), str(new[0])).disruption
    assert said is not None
    root = Path(where) / "root"
    return said, root, _sandbox(root, old[1], new[1]), new


#: the awks a host may run hostc-apply's manifest reading with: Debian's default (mawk),
#: GNU awk (RHEL, SUSE), BusyBox's; those installed here are each compared
AWKS = ("mawk", "gawk", "busybox")


@pytest.fixture(scope="module")
def awks(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A folder per awk installed here, holding `awk` as a link to it."""
    out = []
    for name in AWKS:
        found = shutil.which(name)
        if found is None:
            continue
        folder = tmp_path_factory.mktemp(f"awk-{name}")
        if name == "busybox":
            (folder / "awk").write_text(f'#!/bin/sh\nexec {found} awk "$@"\n')
            (folder / "awk").chmod(0o755)
        else:
            (folder / "awk").symlink_to(found)
        out.append(folder)
    if not out:  # CI=true: a failure, as every missing tool
        need_tool("mawk")
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(change=CHANGE)
def test_hostc_apply_prints_exactly_the_disruption_hostc_diff_computes(
    where: str, awks: list[Path], change: tuple[str, frozenset[str], frozenset[str]]
) -> None:
    found = _pair(where, change)
    if found is None:
        return
    said, root, script, _ = found
    for awk in awks:
        printed = _printed(_apply(root, script, "--disruption", awk=awk))
        assert printed == _as_applier(said.to_json()), (awk.name, change)


def _ran(root: Path, script: Path, new: list[Artifact], family: Any) -> set[tuple[str, ...]]:
    """The guarded live steps hostc-apply lets run (`would run: …`), as argv."""
    out: set[tuple[str, ...]] = set()
    for step in steps(new, family):
        if not step.guard:
            continue
        said = _apply(root, script, *step.guard[1:], *step.argv)
        if "would run:" in said:
            out.add(step.argv)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(change=CHANGE)
def test_the_steps_hostc_apply_runs_are_exactly_the_disruptions_live_steps_and_restarts(
    where: str, change: tuple[str, frozenset[str], frozenset[str]]
) -> None:
    found = _pair(where, change)
    if found is None:
        return
    said, root, script, new = found
    plan, _ = api.compile_file(new[0])
    ran = _ran(root, script, new[1], plan.host.os_family)
    restarts = {a[2] for a in ran if a[:2] == ("systemctl", "try-restart")}
    started = {a[2] for a in ran if a[:2] == ("systemctl", "restart")}
    profiles = {f"TuneD profile {a[2]}" for a in ran if a[:2] == ("tuned-adm", "profile")}
    live = set(said.live)
    if said.reboot:  # nothing live but what carries the reboot's change (a TuneD profile)
        assert not (restarts or started or ("sysctl", "--system") in ran), ran
        assert profiles == set(said.live), ran
        return
    assert restarts == set(said.restart), change
    # a unit named live (alone, or with what its restart does in brackets: the hugepage
    # unit's pools) is (re)started by its guarded step, or enabled --now
    units = {w for w in (u.split(" ", 1)[0] for u in live) if w.endswith(".service")}
    now = {s.argv[-1] for s in steps(new[1], plan.host.os_family) if "--now" in s.argv}
    assert started <= units and units - started <= now, (units, started, now)
    assert (("sysctl", "--system") in ran) == ("sysctl" in live)
    assert profiles == {x for x in live if x.startswith("TuneD profile ")}


def test_the_ansible_vars_carry_no_decision_of_their_own() -> None:
    """The play drains, reboots and restarts by what `hostc-apply --disruption` prints,
    never by flags of its own beside the files (R3: they disagreed with hostc diff)."""
    plan, _ = api.compile_file(ROOT / "examples" / "dgx-h100-rke2" / "node.toml")
    text = next(
        a.text for a in api.emit(plan, ["ansible"]) if a.path.endswith(".yml") and "vars" in a.path
    )
    assert "hostc_files" in text
    for flag in ("boot:", "restart:"):
        assert f"  {flag}" not in text, flag


@pytest.mark.parametrize(
    ("variant", "edit", "expected"),
    [
        # R3: a kubelet manager change drains and reboots, on every applier
        ("rke2 kubelet node", "kubelet managers", "reboot"),
        # R4: the manager's default limits: no reboot anywhere
        ("dgx (hostc tuning, hostc IRQs)", "limits.nofile", "restart"),
        ("rke2 kubelet node", "limits.nofile", "live"),
        # R5: a blacklist line unloads nothing: the next boot, no reboot
        ("dgx (hostc tuning, hostc IRQs)", "blacklist", "none"),
        # R6: a listen()-time sysctl reaches the servers at their next start
        ("dgx (hostc tuning, hostc IRQs)", "socket-sysctl", "live"),
        # a TuneD-owned host: a one-sysctl change reboots nothing
        ("h100, TuneD owns runtime", "sysctl", "live"),
        # services.disable: stopping a unit is said, not hidden
        ("dgx (hostc tuning, hostc IRQs)", "services.disable", "live"),
    ],
)
def test_each_finding_is_one_answer_on_every_applier(
    where: str, variant: str, edit: str, expected: str
) -> None:
    old, new = _build(variant, frozenset(), where), _build(variant, frozenset({edit}), where)
    assert old is not None and new is not None
    said = review(str(old[0]), str(new[0])).disruption
    assert said is not None
    root = Path(where) / "root"
    script = _sandbox(root, old[1], new[1])
    printed = _apply(root, script, "--disruption")
    assert printed.splitlines()[-1] == f"summary {expected}", printed
    assert said.summary == expected, said
    if edit == "socket-sysctl":
        assert any("net.core.somaxconn until their next start" in x for x in said.later)
    if edit == "services.disable":
        assert "stops whoopsie.service" in said.live
    if edit == "kubelet managers":
        assert said.kubelet_reset and "drain " in printed


@pytest.mark.parametrize("name", sorted({e for e, _ in VARIANTS.values()}))
def test_system_conf_d_is_reread_by_a_reload_never_a_reexec(name: str) -> None:
    """R8: `daemon-reload` rereads system.conf.d (src/core/main.c, MANAGER_RELOAD); a
    re-exec gains nothing and is the heavier path: no step and no script asks for one."""
    plan, _ = api.compile_file(ROOT / "examples" / name / "node.toml")
    arts = [a for a in api.emit(plan, ["all", "rootfs", "cloud-init"])]
    assert not [s for s in steps(arts, plan.host.os_family) if "daemon-reexec" in s.argv]
    assert not [a.path for a in arts if b"daemon-reexec" in a.data]
