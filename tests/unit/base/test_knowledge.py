"""Every row of hostc's knowledge names its source, and every fact is stated once.

`hostc.knowledge` holds what hostc knows about kernels, distributions, architectures,
vendors, kubelets and container runtimes.  A row without a source cannot be checked by
the next maintainer, so each table is a `Table` whose rows carry one; this test walks
every module of the package and fails on a bare table or a row with an empty source.
"""

from __future__ import annotations

import enum
import importlib
import pkgutil
from types import ModuleType

import pytest

import hostc.knowledge
from hostc.knowledge.arch import Arch
from hostc.knowledge.family import OsFamily
from hostc.knowledge.table import Table
from hostc.knowledge.vendor import (
    ARM_IMPLEMENTERS,
    MODEL_PREFIXES,
    X86_VENDORS,
    Vendor,
    cpu_vendor,
)

MODULES = sorted(m.name for m in pkgutil.iter_modules(hostc.knowledge.__path__, "hostc.knowledge."))


def _tables(module: ModuleType) -> dict[str, object]:
    """Public module-level collections (private ones are helpers: unit multipliers, sets
    derived from a table)."""
    out = {}
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, type | ModuleType):
            continue
        if isinstance(value, dict | list | tuple | set | frozenset | Table):
            out[name] = value
    return out


def _bare_problem(value: object) -> str | None:
    """Why a collection that is not a Table still passes: rows with a `source`, or values
    derived from an enum whose own facts are Tables."""
    items = list(value.values() if isinstance(value, dict) else value)  # type: ignore[attr-defined]
    if isinstance(value, tuple) and all(type(i) is int for i in items):
        return None  # one fact: a release, (6, 2)
    if items and all(isinstance(i, enum.Enum) for i in items):
        return None
    if items and all(getattr(i, "source", "") for i in items):
        return None
    return "is a bare collection: make it a Table whose rows carry their source"


@pytest.mark.parametrize("name", MODULES)
def test_every_row_has_a_source(name: str) -> None:
    module = importlib.import_module(name)
    problems = []
    for table_name, value in _tables(module).items():
        if isinstance(value, Table):
            problems += [
                f"{table_name}[{k!r}] has no source" for k, s in value.sources().items() if not s
            ]
        elif table_name.isupper() and (why := _bare_problem(value)) is not None:
            problems.append(f"{table_name} {why}")
    assert not problems, f"{name}: " + "; ".join(problems)


def test_the_walk_sees_every_table() -> None:
    """The walk is not vacuous: it finds the tables the package is known to hold."""
    found = {
        f"{name.rsplit('.', 1)[1]}.{t}"
        for name in MODULES
        for t, v in _tables(importlib.import_module(name)).items()
        if isinstance(v, Table)
    }
    assert {
        "arch.COMMAND_LINE_SIZE",
        "arch.HUGEPAGE_SIZES",
        "distro.SYSTEMD",
        "distro.IRQBALANCE",
        "family.BOOT_CARRIER",
        "kernel.AMD_PSTATE_SINCE",
        "kubelet.CPU_OPTIONS",
        "runtime.RUNC_RESETS_AFFINITY",
        "vendor.ARM_IMPLEMENTERS",
    } <= found


def test_a_row_without_a_source_is_refused_by_the_walk() -> None:
    bad = Table({"x": (1, "")})
    assert [k for k, s in bad.sources().items() if not s] == ["x"]


def test_facts_hang_off_the_typed_value() -> None:
    assert Arch.from_uname("x86_64").is_x86 and Arch.from_uname("amd64").is_x86
    assert Arch.from_uname("mips").command_line_size == 512
    assert Arch.S390X.command_line_size == 4096
    assert Arch.from_uname("ppc64").usual_hugepage_sizes == ("16M", "16G")
    assert OsFamily.from_os_release("rocky", ["rhel", "centos", "fedora"]) is OsFamily.RHEL
    assert OsFamily.RHEL.bootloader_argv is None
    assert OsFamily.DEBIAN.initramfs_argv == ("update-initramfs", "-u", "-k", "all")


def test_every_vendor_the_tables_name_is_a_member() -> None:
    """The Plan holds a `Vendor`: a name the importers normalise to must be a member, or
    `Vendor.of` would turn a known implementer (Grace's `nvidia`) into OTHER in plan.json."""
    named = {*X86_VENDORS.values(), *ARM_IMPLEMENTERS.values(), *MODEL_PREFIXES.values()}
    assert {Vendor.of(v) for v in named} == {Vendor(v) for v in named}
    assert Vendor.OTHER not in {Vendor.of(v) for v in named}
    assert Vendor.of(cpu_vendor("GenuineIntel")) is Vendor.INTEL
    assert Vendor.of(cpu_vendor("CentaurHauls")) is Vendor.OTHER  # kept as spelled, no facts
    assert Vendor.of(None) is None


def test_the_knowledge_package_imports_no_other_stage() -> None:
    """Spec, topology, Plan and targets all read it, so it reads none of them."""
    import ast
    from pathlib import Path

    for path in Path(hostc.knowledge.__path__[0]).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("hostc"):
                # hostc.record: the base its frozen values share, no stage
                assert node.module.startswith(("hostc.knowledge", "hostc.vocab", "hostc.record")), (
                    f"{path.name} imports {node.module}"
                )
