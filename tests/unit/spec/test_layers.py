"""Spec layers (`extends`, `[force]`, `[remove]`): the merge is a pure function of the
layer order and priorities, provenance names the file that won, and every error
names both files and lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.diagnostics import HostcError
from hostc.spec import layers

from conftest import ROOT

#: Keys at several depths, each a path into the spec's tables.
KEYS: tuple[tuple[str, ...], ...] = (
    ("sysctl", "vm.swappiness"),
    ("sysctl", "kernel.numa_balancing"),
    ("limits", "nofile"),
    ("kubelet", "kube_reserved", "memory"),
    ("hugepages", "per_node", "0"),
)
FORCE, NORMAL = 50, 100


def _put(table: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for k in path[:-1]:
        table = table.setdefault(k, {})
    table[path[-1]] = value


def _key(path: tuple[str, ...]) -> str:
    from hostc.spec.merge import keypath

    return keypath(path)


# One layer: for some keys, an operation: ("set", v), ("force", v) or ("remove",).
op = st.one_of(
    st.tuples(st.just("set"), st.integers(0, 9)),
    st.tuples(st.just("force"), st.integers(0, 9)),
    st.tuples(st.just("remove")),
)
layer = st.dictionaries(st.sampled_from(range(len(KEYS))), op, max_size=len(KEYS))


def _write_chain(tmp: Path, chain: list[dict[int, tuple[Any, ...]]]) -> tuple[Path, dict]:
    """Files l0 … ln, each extending the one before; returns the top file and the model's
    expected state: key → (value, priority, file)."""
    state: dict[int, tuple[int, int, str]] = {}
    prev = None
    for i, ops in enumerate(chain):
        name = f"l{i}.toml"
        doc: dict[str, Any] = {}
        if prev is not None:
            doc["extends"] = [prev]
        for k, o in sorted(ops.items()):
            if o[0] == "remove":
                if k not in state:
                    continue  # removing what nothing sets is an error, tested apart
                path = KEYS[k]
                names = doc.setdefault("remove", {})
                for part in path[:-2]:
                    names = names.setdefault(part, {})
                names.setdefault(path[-2], []).append(path[-1])
                if state[k][1] >= NORMAL:
                    del state[k]
        for k, o in sorted(ops.items()):
            if o[0] == "set":
                _put(doc, KEYS[k], o[1])
                if k not in state or state[k][1] >= NORMAL:
                    state[k] = (o[1], NORMAL, name)
            elif o[0] == "force":
                _put(doc.setdefault("force", {}), KEYS[k], o[1])
                state[k] = (o[1], FORCE, name)
        if prev is None:
            doc.setdefault("host", {"name": "h", "role": "general"})
        (tmp / name).write_text(tomli_w.dumps(doc))
        prev = name
    return tmp / f"l{len(chain) - 1}.toml", state


def _get(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    for k in path:
        if not isinstance(data, dict) or k not in data:
            return None
        data = data[k]
    return data


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(chain=st.lists(layer, min_size=1, max_size=5))
def test_layer_order_and_priority_decide_every_value(tmp_path_factory: Any, chain: list) -> None:
    """Later refines earlier, a forced value beats every later plain one, a removal takes out
    what came before (forced values stay) — at every depth; provenance names the winner."""
    tmp = tmp_path_factory.mktemp("chain")
    top, expected = _write_chain(tmp, chain)
    merged = layers.read(top)
    for k, path in enumerate(KEYS):
        got = _get(merged.data, path)
        if k in expected:
            value, _, file = expected[k]
            assert got == value, (path, chain)
            assert merged.provenance[_key(path)].file == file
        else:
            assert got is None, (path, chain)
            assert _key(path) not in merged.provenance


def test_a_class_change_reaches_every_host_that_extends_it(tmp_path: Path) -> None:
    (tmp_path / "classes").mkdir()
    (tmp_path / "hosts").mkdir()
    cls = tmp_path / "classes" / "c.toml"
    hosts = [tmp_path / "hosts" / f"h{i}.toml" for i in range(4)]
    for i, h in enumerate(hosts):
        own = '[sysctl]\n"vm.swappiness" = 3\n' if i == 3 else ""
        h.write_text(f'extends = ["../classes/c.toml"]\n[host]\nname = "h{i}"\n{own}')
    for value in (10, 20):
        cls.write_text(
            f'[host]\nname = "c"\nrole = "general"\n[sysctl]\n"vm.swappiness" = {value}\n'
        )
        got = [layers.read(h).data["sysctl"]["vm.swappiness"] for h in hosts]
        assert got == [value, value, value, 3]


def test_compile_file_reads_and_parses_a_layered_spec_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Telling a layered spec apart and merging it share one read and one parse."""
    from collections import Counter

    from hostc import inputs

    reads: Counter[str] = Counter()
    parses: Counter[str] = Counter()
    real_read, real_parse = inputs.read_bytes_bounded, layers.parse
    monkeypatch.setattr(
        inputs, "read_bytes_bounded", lambda p, **k: reads.update([str(p)]) or real_read(p, **k)
    )
    counted = lambda t, f: parses.update([f]) or real_parse(t, f)  # noqa: E731
    monkeypatch.setattr(layers, "parse", counted)
    monkeypatch.setattr("hostc.pipeline.compile.parse", counted, raising=False)  # where it was
    layers.parsed.cache_clear()
    host = tmp_path / "h.toml"
    topo = ROOT / "examples" / "h100-4gpu-inference" / "topology.toml"
    (tmp_path / "c.toml").write_text(
        f'version = 1\n[host]\nname = "c"\nrole = "general"\ntopology = "{topo}"\n'
    )
    host.write_text('extends = ["c.toml"]\n[host]\nname = "h"\n')
    plan, _ = api.compile_file(host)
    assert plan.host.name == "h"
    assert (reads[str(host)], parses[str(host)]) == (1, 1)


def test_siblings_that_disagree_are_an_error_naming_both_files_and_lines(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('[sysctl]\n"vm.swappiness" = 5\n')
    (tmp_path / "b.toml").write_text('# b\n[sysctl]\n"vm.swappiness" = 7\n')
    (tmp_path / "h.toml").write_text('extends = ["a.toml", "b.toml"]\n')
    with pytest.raises(HostcError) as e:
        layers.read(tmp_path / "h.toml")
    (d,) = e.value.diagnostics
    assert f"{tmp_path}/a.toml:2" in d.message and f"{tmp_path}/b.toml:3" in d.message
    assert (d.file, d.line) == (f"{tmp_path}/b.toml", 3)


def test_the_extending_file_settles_a_sibling_disagreement(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('[sysctl]\n"vm.swappiness" = 5\n')
    (tmp_path / "b.toml").write_text('[sysctl]\n"vm.swappiness" = 7\n')
    (tmp_path / "h.toml").write_text(
        'extends = ["a.toml", "b.toml"]\n[sysctl]\n"vm.swappiness" = 1\n'
    )
    merged = layers.read(tmp_path / "h.toml")
    assert merged.data["sysctl"] == {"vm.swappiness": 1}
    assert merged.provenance['sysctl."vm.swappiness"'].file == "h.toml"


def test_workloads_merge_by_name_and_lists_accumulate(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text(
        '[[workload]]\nname = "a"\ngpus = ["GPU0"]\n[[workload]]\nname = "b"\ngpus = ["GPU1"]\n'
        '[modules]\nblacklist = ["bluetooth"]\n'
    )
    (tmp_path / "h.toml").write_text(
        'extends = ["c.toml"]\n[[workload]]\nname = "b"\ngpus = ["GPU2"]\n'
        '[[workload]]\nname = "c"\ngpus = ["GPU3"]\n[modules]\nblacklist = ["btusb", "bluetooth"]\n'
    )
    data = layers.read(tmp_path / "h.toml").data
    assert [(w["name"], w["gpus"]) for w in data["workload"]] == [
        ("a", ["GPU0"]),
        ("b", ["GPU2"]),
        ("c", ["GPU3"]),
    ]
    assert data["modules"]["blacklist"] == ["bluetooth", "btusb"]


def test_relative_paths_resolve_against_the_file_that_names_them(tmp_path: Path) -> None:
    """A class names its topology relative to itself; the host in another folder finds it."""
    plan, _ = api.compile_file(ROOT / "examples" / "fleet" / "hosts" / "dgx-r1-01.toml")
    assert plan.host.name == "dgx-r1-01"
    rows = {p.key: p for p in plan.provenance}
    assert rows["host.topology"].file == "../classes/dgx-inference.toml"
    assert rows["host.name"].file == "dgx-r1-01.toml"


def test_a_single_file_spec_has_no_provenance_section() -> None:
    from hostc.report import plan_view

    plan, _ = api.compile_file(ROOT / "examples" / "h100-4gpu-inference" / "node.toml")
    assert plan.provenance == ()
    assert "provenance" not in plan_view.plan_json(plan)
    assert "spec values set by" not in plan_view.render(plan)


def test_a_bad_value_is_reported_at_the_file_and_line_that_set_it(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text(
        'version = 1\n[host]\nname = "c"\nrole = "general"\n\n[cpu]\nisolate = 7\n'
    )
    (tmp_path / "h.toml").write_text('extends = ["c.toml"]\n')
    with pytest.raises(HostcError) as e:
        api.compile_file(tmp_path / "h.toml")
    assert [(d.file, d.line, str(d.path)) for d in e.value.diagnostics] == [
        (f"{tmp_path}/c.toml", 7, "cpu.isolate")
    ]


def test_a_remove_that_is_neither_true_a_list_nor_a_table_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text('[sysctl]\n"vm.swappiness" = 5\n')
    (tmp_path / "h.toml").write_text('extends = ["c.toml"]\n\n[remove]\nsysctl = false\n')
    with pytest.raises(HostcError) as e:
        layers.read(tmp_path / "h.toml")
    (d,) = e.value.diagnostics
    assert (d.file, d.line, str(d.path)) == (f"{tmp_path}/h.toml", 4, "remove.sysctl")
    assert "a list of names" in d.message


def test_hostc_plan_names_the_file_and_line_of_each_value() -> None:
    from conftest import run_hostc

    r = run_hostc("plan", ROOT / "examples" / "fleet" / "hosts" / "dgx-r1-03.toml")
    assert r.returncode == 0, r.stderr
    tail = r.stdout.split("spec values set by:\n", 1)[1]
    rows = {line.split()[0]: line.split()[1:] for line in tail.splitlines()}
    assert rows["limits.nofile"] == ["dgx-r1-03.toml:8", "(force.limits.nofile)"]
    assert rows["kernel.iommu"] == ["../classes/dgx-inference.toml:48", "(force.kernel.iommu)"]
    assert rows["cpu.isolate"][0] == "../classes/dgx-inference.toml:29"
