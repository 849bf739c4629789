"""The readers on real outputs of nccl-tests and vLLM, copied from public reports (each
fixture names its source), and the generic readers on the formats their sources print.

Formats: nccl-tests src/util.cu (NVIDIA/nccl-tests a0b82b2260cf5152b9f8c061bbf7eaf0ba096432:
writeResultHeader, writeBenchmarkLineBody, writeResultFooter `# %-20s : %g %s`); vLLM
vllm/benchmarks/throughput.py (vllm-project/vllm 020283147c84ad8cc97eadffcdb033ea56322563:
`Throughput: %.2f requests/s, %.2f total tokens/s, %.2f output tokens/s`) and
benchmarks/benchmark_serving.py (0049e29c41fd383bda519a3f250e3227713081ef: the
`{s:{c}^{n}}` banner, `{:<40} {:<10.2f}` rows, `"=" * 50` at the end).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hostc.bench.generic import last_json, read_auto, reader_for, unit_better
from hostc.bench.readers import (
    NCCL,
    VLLM_SERVING,
    VLLM_THROUGHPUT,
    Better,
    Figure,
    _nccl_header,
)
from hostc.diagnostics import HostcError

#: Real outputs, each file exactly as its public report shows it (its source below).
OUTPUTS = Path(__file__).parent / "outputs"
SOURCES = {
    # nccl-tests, NCCL_ALGO=RING on 2 nodes: the header, rows of the largest sizes, footer
    "nccl-tests-issue-252.txt": "https://github.com/NVIDIA/nccl-tests/issues/252",
    # rccl-tests (nccl-tests' format): rows without their header; the footer with the
    # trailing space of `%g %s` when no -c check was asked, and the closing line
    "rccl-pr-2078.txt": "https://github.com/ROCm/rccl/pull/2078",
    # nccl-tests 2.20.0 on 2 x GB10: the current header (`#wrong`, `root`), no footer
    "dgx-spark-playbooks-pr-103.txt": "https://github.com/NVIDIA/dgx-spark-playbooks/pull/103",
    # p5.48xlarge under mpirun --tag-output: `[1,0]<stdout>:` before every line; the
    # footer line is the one quoted in the same thread
    "aws-k8s-tester-pr-503.txt": "https://github.com/aws/aws-k8s-tester/pull/503",
    # 2022: the older header, no `root` column, `error` for `#wrong` (no rows shown)
    "nccl-tests-issue-107.txt": "https://github.com/NVIDIA/nccl-tests/issues/107",
    # `vllm bench serve` on gemma-3-27b-it: the current block (failed requests, peaks)
    "vllm-pr-33743.txt": "https://github.com/vllm-project/vllm/pull/33743",
    # a block with the reporter's arrow after a number, and the lines before it
    "vllm-pr-31826.txt": "https://github.com/vllm-project/vllm/pull/31826",
}


def output(name: str) -> str:
    assert name in SOURCES, name
    return (OUTPUTS / name).read_text()


NCCL_252 = output("nccl-tests-issue-252.txt")
NCCL_RCCL_2078 = output("rccl-pr-2078.txt")
NCCL_SPARK_103 = output("dgx-spark-playbooks-pr-103.txt")
NCCL_TAGGED_503 = output("aws-k8s-tester-pr-503.txt")
NCCL_OLD_107 = output("nccl-tests-issue-107.txt")
SERVING_33743 = output("vllm-pr-33743.txt")
SERVING_31826 = output("vllm-pr-31826.txt")

# https://github.com/vllm-project/vllm/pull/8914 (the line before and after that PR)
THROUGHPUT_OLD = "Throughput: 81.74 requests/s, 20926.37 tokens/s\n"
THROUGHPUT_NEW = "Throughput: 89.27 requests/s, 22853.37 total tokens/s, 11426.69 output tokens/s\n"


def by_name(figures: tuple[Figure, ...]) -> dict[str, Figure]:
    return {f.name: f for f in figures}


def test_nccl_reads_the_footer_and_every_size_of_both_placements() -> None:
    found = by_name(NCCL.read(NCCL_252))
    head = found["avg_bus_bandwidth"]
    assert (head.value, head.unit, head.better, head.headline) == (
        95.3009,
        "GB/s",
        Better.HIGHER,
        True,
    )
    assert found["busbw_oop_1073741824_float_sum"].value == 93.58
    assert found["busbw_ip_8589934592_float_sum"].value == 94.80
    assert not found["busbw_ip_8589934592_float_sum"].headline
    assert len(found) == 1 + 5 * 2


def test_nccl_without_a_header_reads_the_footer_only() -> None:
    """Rows are read against their header's columns: none, no rows (never guessed)."""
    assert [f.name for f in NCCL.read(NCCL_RCCL_2078)] == ["avg_bus_bandwidth"]
    assert NCCL.read(NCCL_RCCL_2078)[0].value == 142.652


def test_nccl_reads_the_current_header_without_a_footer() -> None:
    found = by_name(NCCL.read(NCCL_SPARK_103))
    assert "avg_bus_bandwidth" not in found
    assert found["busbw_oop_16384_float_sum"].value == 0.52
    assert found["busbw_ip_8192_float_sum"].value == 0.27


def test_nccl_takes_mpiruns_tag_off_each_line() -> None:
    found = by_name(NCCL.read(NCCL_TAGGED_503))
    assert found["avg_bus_bandwidth"].value == 92.3405
    assert found["busbw_ip_16_float_sum"].value == 0.0


def test_nccl_reads_the_older_header_without_root() -> None:
    """The columns are found by name: busbw is the 7th and 11th word of the old header."""
    headers = [h for line in NCCL_OLD_107.splitlines() if (h := _nccl_header(line))]
    assert len(headers) == 1
    assert [i for i, w in enumerate(headers[0]) if w == "busbw"] == [6, 10]
    assert "root" not in headers[0]


def test_vllm_throughput_reads_both_spellings_of_the_line() -> None:
    new = by_name(VLLM_THROUGHPUT.read("INFO loading\n" + THROUGHPUT_NEW))
    assert {n: (f.value, f.unit) for n, f in new.items()} == {
        "requests_per_s": (89.27, "req/s"),
        "total_tokens_per_s": (22853.37, "tok/s"),
        "output_tokens_per_s": (11426.69, "tok/s"),
    }
    old = by_name(VLLM_THROUGHPUT.read(THROUGHPUT_OLD))
    assert {n: f.value for n, f in old.items()} == {
        "requests_per_s": 81.74,
        "total_tokens_per_s": 20926.37,
    }
    assert all(f.better is Better.HIGHER for f in (*new.values(), *old.values()))


def test_vllm_serving_reads_rates_up_latencies_down_and_no_counts() -> None:
    found = by_name(
        VLLM_SERVING.read("Starting initial single prompt test run...\n" + SERVING_33743)
    )
    assert found["request_throughput"].value == 0.77
    assert found["output_token_throughput"].better is Better.HIGHER
    assert (found["p99_ttft"].value, found["p99_ttft"].unit) == (4610.48, "ms")
    assert found["median_itl"].better is Better.LOWER
    assert found["benchmark_duration"].better is Better.LOWER
    # counts have no unit: no figure
    assert "successful_requests" not in found and "peak_concurrent_requests" not in found
    assert "total_input_tokens" not in found


def test_vllm_serving_takes_the_number_before_a_note_and_the_last_block() -> None:
    found = by_name(VLLM_SERVING.read(SERVING_31826))
    assert found["median_ttft"].value == 27.44  # `27.44             <========`
    assert found["request_throughput"].value == 6.16
    # two real reports one after the other: the last block is the run's result
    both = by_name(VLLM_SERVING.read(SERVING_31826 + SERVING_33743))
    assert both["request_throughput"].value == 0.77


def test_auto_tries_each_built_in_reader() -> None:
    for text, name in (
        (NCCL_252, "nccl"),
        (SERVING_33743, "vllm-serving"),
        (THROUGHPUT_NEW, "vllm-throughput"),
    ):
        found = read_auto(text)
        assert found is not None and found[0].name == name
    assert read_auto("nothing here\n") is None


def test_the_line_reader_takes_its_direction_from_the_unit() -> None:
    text = "epoch 1\nstep time: 412.5 ms\nstep time: 398.25 ms\nthroughput = 1520.5 samples/sec\n"
    step = reader_for("line:step time", None)
    assert step is not None
    assert step.read(text) == (Figure("step time", 398.25, "ms", Better.LOWER),)
    rate = reader_for("line:throughput", None)
    assert rate is not None and rate.read(text)[0].better is Better.HIGHER
    assert unit_better("GB/s") is Better.HIGHER and unit_better("widgets") is None
    loss = reader_for("line:loss", None)
    assert loss is not None
    with pytest.raises(HostcError, match="pass --better"):
        loss.read("loss: 0.25\n")
    loss_down = reader_for("line:loss", Better.LOWER)
    assert loss_down is not None and loss_down.read("loss: 0.25\n")[0].value == 0.25
    assert loss_down.read("loss: 0.25\nval_loss: 0.5\n")[0].value == 0.25


def test_the_regex_reader_names_its_figure_by_its_group() -> None:
    r = reader_for(r"regex:iter (?P<iter_ms>[0-9.]+) (?P<unit>ms)", Better.LOWER)
    assert r is not None
    assert r.read("iter 12.5 ms\niter 11.0 ms\n") == (Figure("iter_ms", 11.0, "ms", Better.LOWER),)
    for bad, why in (
        ("regex:(", "no regular expression"),
        ("regex:([0-9]+)", "exactly one named group"),
    ):
        with pytest.raises(HostcError, match=why):
            reader_for(bad, Better.LOWER)
    with pytest.raises(HostcError, match="needs --better"):
        reader_for("regex:(?P<x>[0-9]+)", None)


def test_the_json_reader_reads_a_dump_after_other_output() -> None:
    """vLLM's --output-json document (vllm/benchmarks/throughput.py, json.dump(…,
    indent=4)) printed after its log; nccl-tests' -J document keeps the average under
    average_bus_bandwidth.bandwidth (src/util.cu writeResultFooter)."""
    results = {
        "elapsed_time": 11.2,
        "num_requests": 1000,
        "total_num_tokens": 256000,
        "requests_per_second": 89.27,
        "tokens_per_second": 22853.37,
    }
    text = THROUGHPUT_NEW + json.dumps(results, indent=4) + "\n"
    r = reader_for("json:requests_per_second", Better.HIGHER)
    assert r is not None and r.read(text) == (
        Figure("requests_per_second", 89.27, "", Better.HIGHER),
    )
    nccl = {
        "results": [{"size": 8, "out_of_place": {"bus_bw": 0.0}}],
        "average_bus_bandwidth": {"bandwidth": 95.3, "okay": "unchecked"},
    }
    deep = reader_for("json:average_bus_bandwidth.bandwidth", Better.HIGHER)
    assert deep is not None and deep.read(json.dumps(nccl, indent=2))[0].value == 95.3
    last = reader_for("json:results[-1].out_of_place.bus_bw", Better.HIGHER)
    assert last is not None and last.read(json.dumps(nccl))[0].value == 0.0
    # an inner object on a line of its own is never taken for the document
    assert last_json('log\n{\n  "a": [\n    {"b": 1}\n  ]\n}\n') == {"a": [{"b": 1}]}
    assert deep.read('{"average_bus_bandwidth": {"bandwidth": true}}') == ()


@pytest.mark.parametrize(
    ("spec", "better", "message"),
    [
        ("nccl-test", None, "unknown reader"),
        ("nccl", Better.HIGHER, "--better goes with"),
        ("json:a..b", Better.HIGHER, "is no path"),
        ("json:", Better.HIGHER, "needs a path"),
    ],
)
def test_reader_names_that_are_refused(spec: str, better: Better | None, message: str) -> None:
    with pytest.raises(HostcError, match=message) as e:
        reader_for(spec, better)
    assert e.value.diagnostics[0].file == "--reader"


def test_a_figure_that_is_not_finite_is_no_figure() -> None:
    assert NCCL.read("# Avg bus bandwidth    : nan \n# Avg bus bandwidth    : inf\n") == ()
