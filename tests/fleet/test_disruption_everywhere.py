"""One structured, loud answer to "does this reboot or restart anything?" wherever a
reviewer or a bot looks (issue 54 item 2, first-day-4 O1, V1, V2, V3, H3): the same
`Disruption` object per host and a fleet summary object in every `--json`, a badge on
the HTML page, the spec key as the reviewer wrote it above the Plan detail, the cost and
the exact commands in `hostc pre-commit`, and colour on a terminal only."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.fleet.test_fleet_review import HOSTS, _git, fleet  # noqa: F401 (the fixture)

from conftest import run_hostc

#: the keys of `Disruption.to_json`: every per-host and fleet object has them
DISRUPTION_KEYS = {"reboot", "restart", "kubelet_reset", "live", "later", "reboot_for"}
DISRUPTION_KEYS |= {"files", "summary"}


def _more_hugepages(fleet: Path) -> None:  # noqa: F811 (the fixture's name)
    cls = fleet / "classes" / "dgx-inference.toml"
    text = cls.read_text()
    assert "\ntotal = 64\n" in text
    cls.write_text(text.replace("\ntotal = 64\n", "\ntotal = 96\n"))


def test_fleet_diff_json_gives_the_disruption_object_per_group_and_for_the_fleet(
    fleet: Path,  # noqa: F811
) -> None:
    _more_hugepages(fleet)
    r = run_hostc("diff", "hosts/@HEAD", "hosts/", "--json", "--jobs", "1", cwd=fleet)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    (group,) = doc["groups"]
    assert isinstance(group["disruption"], dict), "an object, never an English sentence"
    assert set(group["disruption"]) == DISRUPTION_KEYS
    assert group["disruption"]["reboot"] is True
    assert group["disruption"]["reboot_for"] == ["kernel arguments"]
    assert group["spec"] == [{"key": "hugepages.total", "old": "64", "new": "96"}]
    total = doc["disruption"]
    assert set(total) >= DISRUPTION_KEYS and total["reboot"] is True
    assert total["summary"] == "reboot"
    assert total["hosts"] == {"reboot": list(HOSTS), "none": ["epyc-t-01"]}


def test_the_review_shows_the_spec_key_as_written_above_the_plan_detail(
    fleet: Path,  # noqa: F811
) -> None:
    _more_hugepages(fleet)
    one = "hosts/dgx-r1-01.toml"
    r = run_hostc("diff", f"{one}@HEAD", one, cwd=fleet)
    assert r.returncode == 1, r.stderr
    out = r.stdout
    line = "- `hugepages.total`: `64` → `96` (../classes/dgx-inference.toml:33)"
    assert line in out, out
    assert out.index(line) < out.index("hugepages[1048576]"), "the Plan detail below it"
    fleet_md = run_hostc("diff", "hosts/@HEAD", "hosts/", "--jobs", "1", cwd=fleet).stdout
    assert "- spec `hugepages.total`: `64` → `96`" in fleet_md


def test_the_review_page_has_a_badge_readable_columns_and_one_reason_column(
    fleet: Path,  # noqa: F811
) -> None:
    _more_hugepages(fleet)
    one = "hosts/dgx-r1-01.toml"
    page = run_hostc("diff", f"{one}@HEAD", one, "--format", "html", cwd=fleet).stdout
    badge = '<span class="badge reboot">reboot</span>'
    assert badge in page and page.index(badge) < page.index("<h2>"), "at the top"
    assert "<th>reason</th>" in page and "<th>old reason</th>" not in page
    assert "td.val{min-width:" in page, "old and new keep a readable width"
    assert "<code>hugepages.total</code>" in page


def test_changed_json_sums_the_fleet_as_the_same_object(
    fleet: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    assert run_hostc("build", "hosts/", "--out", out, "-q", cwd=fleet).returncode == 0
    _more_hugepages(fleet)
    r = run_hostc("changed", "hosts/", "--out", out, "--json", "--jobs", "1", cwd=fleet)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc["hosts"]["dgx-r1-01"]) == DISRUPTION_KEYS
    summary = doc["summary"]
    assert isinstance(summary, dict) and set(summary) >= DISRUPTION_KEYS
    assert summary["reboot"] is True and summary["hosts"]["reboot"] == list(HOSTS)
    assert summary["line"].startswith("4 hosts: 3 hosts reboot")


def test_pre_commit_shows_the_cost_and_the_exact_commands(
    fleet: Path,  # noqa: F811
) -> None:
    assert run_hostc("build", "hosts/", "--out", "out", "-q", cwd=fleet).returncode == 0
    _more_hugepages(fleet)
    cls = "classes/dgx-inference.toml"
    r = run_hostc("pre-commit", "hosts/", "--out", "out", cls, "--jobs", "1", cwd=fleet)
    assert r.returncode == 1, r.stderr
    assert "  on a running host: reboots for kernel arguments" in r.stdout, r.stdout
    assert "to update: hostc build hosts/ --out out -t all" in r.stdout
    assert "the Plan-level change: hostc diff hosts/@HEAD hosts/" in r.stdout
    assert "HOSTS@REV" not in r.stdout and "--out OUT" not in r.stdout, "no placeholders"
    assert "\x1b[" not in r.stdout, "no colour in a pipe"


def test_pre_commit_json_gives_each_stale_hosts_disruption_object_and_the_commands(
    fleet: Path,  # noqa: F811
) -> None:
    """first-day-4 O3: `pre-commit` had no --json; a bot reads the same object as
    `changed --json` gives per host."""
    assert run_hostc("build", "hosts/", "--out", "out", "-q", cwd=fleet).returncode == 0
    cls = "classes/dgx-inference.toml"
    r = run_hostc("pre-commit", "hosts/", "--out", "out", cls, "--json", cwd=fleet)
    current = json.loads(r.stdout)["hosts"]
    assert r.returncode == 0 and current, r.stderr
    assert not [h for h in current if h["differences"] or "disruption" in h]
    _more_hugepages(fleet)
    r = run_hostc("pre-commit", "hosts/", "--out", "out", cls, "--json", "--jobs", "1", cwd=fleet)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    stale = {h["host"]: h for h in doc["hosts"] if h["differences"]}
    assert stale and all(set(h["disruption"]) == DISRUPTION_KEYS for h in stale.values())
    assert all(h["disruption"]["reboot"] is True for h in stale.values())
    assert doc["commands"] == {
        "update": "hostc build hosts/ --out out -t all",
        "review": "hostc diff hosts/@HEAD hosts/",
    }


def test_diff_json_is_format_json_and_refuses_another_format(
    fleet: Path,  # noqa: F811
) -> None:
    """first-day-4 O3: `--json` and `--format json` are one thing; with html a usage error."""
    a, b = "hosts/dgx-r1-01.toml", "hosts/dgx-r1-02.toml"
    one, two = (
        run_hostc("diff", a, b, *flag, cwd=fleet) for flag in (["--json"], ["--format", "json"])
    )
    assert one.stdout == two.stdout and one.returncode == two.returncode
    r = run_hostc("diff", a, b, "--json", "--format", "html", cwd=fleet)
    assert r.returncode == 2 and "--json is --format json" in r.stderr and not r.stdout


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("word", "env", "coloured"),
    [
        ("reboot", {}, True),
        ("restart", {}, True),
        ("live", {}, False),
        ("reboot", {"NO_COLOR": "1"}, False),
    ],
)
def test_reboot_and_restart_lines_stand_out_on_a_terminal_only(
    word: str, env: dict[str, str], coloured: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hostc.cli.text import write_costs

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    line = "reboots for kernel arguments"
    text = f"host-a  {line}\nhost-b  no change on the host\n"
    tty = _Terminal()
    write_costs(tty, text, {line: word})
    assert ("\x1b[" in tty.getvalue()) is coloured
    if coloured:
        first, second = tty.getvalue().split("\n")[:2]
        assert first.startswith("\x1b[1;3") and second == "host-b  no change on the host"
    piped = io.StringIO()
    write_costs(piped, text, {line: word})
    assert piped.getvalue() == text, "never in a pipe"
