"""`run_ablation` with a stand-in benchmark whose figure depends on vm.swappiness in the
sandbox: it finds that setting, calls the other one no effect, and puts every value
back after its runs, after a failed run and after a refused write."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_sandbox import BEFORE, read, sandbox, standin

from hostc.bench import ablate
from hostc.bench.ablate import Bench, ablation_json, run_ablation
from hostc.bench.knobs import plan_at
from hostc.bench.run import RunFailed
from hostc.bench.stats import Word
from hostc.diagnostics import HostcError


def job(tmp_path: Path) -> tuple[Bench, Path, list[ablate.Knob]]:
    plan, root, before = sandbox(tmp_path)
    knobs, _ = plan_at(plan, root, before, {})
    return Bench(tuple(standin(root)), 3, None, root, plan), root, knobs


def plan_values(root: Path) -> dict[str, str]:
    return {p: read(root, p) for p in BEFORE}


def test_ablation_finds_the_setting_the_figure_depends_on(tmp_path: Path) -> None:
    bench, root, knobs = job(tmp_path)
    values = plan_values(root)
    said: list[str] = []
    result = run_ablation(bench, knobs, said.append)
    verdicts = {s.knob.name: dict(s.verdicts)["avg_bus_bandwidth"] for s in result.steps}
    assert verdicts["vm.swappiness"].word is Word.WORSE  # 100 -> 80 GB/s when reverted
    assert verdicts["vm.swappiness"].relative == pytest.approx(-0.2)
    assert verdicts["vm.overcommit_memory"].word is Word.NOISE
    assert plan_values(root) == values  # every value back
    assert "vm.swappiness: restored 10" in said
    doc = ablation_json(result, [])
    assert doc["steps"][0]["files"] == [
        {"path": "/proc/sys/vm/swappiness", "plan": "10", "reverted_to": "60"}
    ]
    assert doc["steps"][0]["verdicts"]["avg_bus_bandwidth"]["verdict"] == "worse"


def test_a_failed_run_under_a_reverted_value_restores_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench, root, knobs = job(tmp_path)
    monkeypatch.setenv("STANDIN_FAIL", "reverted")
    with pytest.raises(RunFailed, match="run 1 exited with status 3"):
        run_ablation(bench, knobs, lambda _: None)
    assert read(root, "/proc/sys/vm/swappiness") == "10"


def test_a_write_that_fails_after_the_kernel_took_it_is_restored_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second knob's write changes the file, then fails: that file and the first
    knob's are back at the Plan's values, and a write the kernel refused outright
    (the file unchanged) is not written again."""
    bench, root, knobs = job(tmp_path)
    real = ablate.write_value
    calls: list[tuple[str, str]] = []

    def taken_then_refused(base: Path, path: str, value: str) -> None:
        calls.append((path, value))
        real(base, path, value)
        if path.endswith("overcommit_memory") and value == "0":
            raise HostcError([])

    monkeypatch.setattr(ablate, "write_value", taken_then_refused)
    with pytest.raises(HostcError):
        run_ablation(bench, knobs, lambda _: None)
    assert read(root, "/proc/sys/vm/swappiness") == "10"
    assert read(root, "/proc/sys/vm/overcommit_memory") == "1"
    assert calls[-1] == ("/proc/sys/vm/overcommit_memory", "1")  # written back

    calls.clear()

    def refused(base: Path, path: str, value: str) -> None:
        calls.append((path, value))
        raise HostcError([])

    monkeypatch.setattr(ablate, "write_value", refused)
    with pytest.raises(HostcError):
        run_ablation(bench, knobs, lambda _: None)
    assert calls == [("/proc/sys/vm/swappiness", "60")]  # nothing changed: nothing to undo


def test_a_value_the_kernel_does_not_show_as_written_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each write is read back through the audit's observer: a kernel that rounds or
    refuses silently is caught, and the value is still restored."""
    bench, root, knobs = job(tmp_path)

    def ignored(base: Path, path: str, value: str) -> None:
        pass  # the "kernel" keeps its value

    monkeypatch.setattr(ablate, "write_value", ignored)
    with pytest.raises(HostcError, match="wrote '60' but it reads '10'"):
        run_ablation(bench, knobs[:1], lambda _: None)
    assert read(root, "/proc/sys/vm/swappiness") == "10"
