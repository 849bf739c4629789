"""The first hour's papercuts of the fourth newcomer trial (issue 54 item 5,
first-day-4 R1, H1, H2, A1, A2, X1, E2, H4, O2, D1, D2): each through what a user runs
or reads."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from hostc.cli.base import EXIT_CODES
from tests.cli.test_completion import _complete
from tests.conftest import ROOT, run_hostc

from sysfs_fixtures import build, smt_host

DOCS = ROOT / "docs"
H100 = ROOT / "examples" / "h100-4gpu-inference" / "node.toml"


def test_cli_md_renders_the_exit_code_table_and_a_completion_section() -> None:
    """R1: the table sat in an empty fence that swallowed the next heading."""
    tokens = MarkdownIt("commonmark").parse((DOCS / "cli.md").read_text())
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert "Shell completion" in headings
    fences = [t.content for t in tokens if t.type == "fence"]
    table = EXIT_CODES.removeprefix("\b\n") + "\n"
    assert table in fences, "the table `hostc --help` ends with, as a code block"
    assert not any(f.lstrip().startswith("## ") for f in fences), "no heading inside code"


def test_the_completion_install_says_mkdir_source_and_the_bash_completion_package() -> None:
    """H1: the folder may not exist; without bash-completion the file is never read."""
    text = (DOCS / "cli.md").read_text()
    assert "mkdir -p ~/.local/share/bash-completion/completions" in text
    assert "source <(hostc completion bash)" in text
    assert "bash-completion package" in text
    assert "source <(hostc completion bash)" in (ROOT / "README.md").read_text()


def test_completion_offers_the_values_of_target_completion_and_schema() -> None:
    """H2: values, not file names."""
    assert _complete("hostc build --target sys") == ["sysctl", "systemd"]
    assert _complete("hostc completion fi") == ["fish"]
    assert _complete("hostc schema to") == ["topology"]
    assert _complete("hostc diff --format ht") == ["html"]


def test_audit_on_another_machine_says_so_first_and_keeps_its_columns(tmp_path: Path) -> None:
    """A1: a 2-CPU host audited against a 128-CPU snapshot; A2: a setting name longer
    than the others never shifts its row's EXPECTED and FOUND."""
    root = build(smt_host(1, 2, 1, 1), tmp_path / "root")
    r = run_hostc("audit", H100, "--root", root)
    assert r.returncode == 1, r.stderr
    first = next(ln for ln in r.stderr.splitlines() if ln.startswith("warning:"))
    assert first.startswith("warning: this host is not the snapshot's machine: online CPUs 0-1")
    lines = r.stdout.split("\n\n")[0].splitlines()
    head = lines[0]
    at = head.index("EXPECTED")
    names = [ln[head.index("SETTING") : at].rstrip() for ln in lines[1:]]
    assert max(map(len, names)) > 40, "a name past the old cap of the column"
    for ln in lines[1:]:
        assert ln[at - 2 : at] == "  " and ln[at] != " ", ln


def test_explain_says_how_to_change_a_preset_setting() -> None:
    """X1: the spec key that overrides it and the preset.exclude entry that drops it."""
    r = run_hostc("explain", H100, "max_cstate")
    assert r.returncode == 0, r.stderr
    assert (
        "  change   kernel.limit_cstates in the spec overrides it\n"
        '           preset.exclude = ["max_cstate"] leaves it out\n'
    ) in r.stdout
    doc = json.loads(run_hostc("explain", H100, "cpu_governor", "--json").stdout)
    assert doc["settings"][0]["change"].startswith("cpufreq.governor in the spec")


def test_a_typo_gets_the_nearest_key_and_the_nearest_command(tmp_path: Path) -> None:
    """E2: `did you mean`, before the list of every key."""
    spec = tmp_path / "node.toml"
    spec.write_text(
        'version = 1\n[host]\nname = "x"\nrole = "general"\n[sysclt]\n"vm.swappiness" = 1\n'
    )
    r = run_hostc("check", spec, "--topology", H100.parent / "topology.toml")
    assert r.returncode == 2
    assert "hint: did you mean sysctl? known keys:" in r.stderr, r.stderr
    r = run_hostc("biuld")
    assert r.returncode == 2 and "Did you mean 'build'?" in r.stderr


#: a frame of hostc's own code in a traceback (compiler/ in a checkout, hostc/ installed)
HOSTC_FRAME = re.compile(r'File "[^"]*/(compiler|hostc)/[^"]*\.py"')


@pytest.mark.parametrize("delay", [0.12, 0.16, 0.2, 0.25, 0.5, 1.0])
def test_ctrl_c_while_starting_exits_130_without_a_traceback(delay: float, tmp_path: Path) -> None:
    """H4: SIGINT while Python imports hostc (0.1-0.3 s on an idle 2-core machine: the
    earlier delays), or once the fleet's build is under way.  Python's own start-up
    before hostc's first line (`site`) is out of hostc's reach: a traceback there has no
    frame of hostc's."""
    hosts = ROOT / "examples" / "fleet" / "hosts"
    with subprocess.Popen(
        [sys.executable, "-m", "hostc", "build", hosts, "--out", tmp_path / "out"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as p:
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
    assert not HOSTC_FRAME.search(err), err
    if p.returncode == 130 and "interrupted:" in err:
        assert "run the same command again" in err


def test_every_ansible_rollout_variable_is_documented(tmp_path: Path) -> None:
    """O2: each variable the playbook reads with a default, in docs/rollout.md's table."""
    r = run_hostc(
        "build", ROOT / "examples" / "fleet" / "hosts", "-t", "ansible", "--out", tmp_path, "-q"
    )
    assert r.returncode == 0, r.stderr
    playbook = (tmp_path / "ansible" / "playbook.yml").read_text()
    read = set(re.findall(r"\b(hostc_[a-z_]+) \| default\(", playbook))
    assert {"hostc_serial_reboot", "hostc_drain", "hostc_drain_timeout"} <= read
    doc = (DOCS / "rollout.md").read_text()
    table = doc[doc.index("## Ansible rollout variables") :]
    missing = sorted(v for v in read if f"`{v}`" not in table)
    assert not missing, missing


def test_kubelet_keys_are_in_the_spec_table_and_kubernetes_md_is_a_page() -> None:
    """D1: every key of `[kubelet]` in the schema is in spec.md's table."""
    schema = json.loads(run_hostc("schema", "node").stdout)
    keys = schema["$defs"]["Kubelet"]["properties"]
    table = (DOCS / "spec.md").read_text()
    missing = sorted(k for k in keys if f"`kubelet.{k}`" not in table)
    assert not missing, missing
    page = (DOCS / "kubernetes.md").read_text()
    assert page.count("\n## ") >= 4, "sections, not one paragraph"


def test_nothing_a_user_reads_points_outside_the_repository() -> None:
    """D2: no link or reference a user of a clone cannot follow (docs/testing.md names
    `../shared` only as the test data a fresh clone skips)."""
    for path in [ROOT / "README.md", *DOCS.glob("*.md")]:
        text = path.read_text()
        assert "../shared/reference" not in text, path
        assert not re.search(r"\]\((\.\./\.\.|/|\.\./shared)", text), path
        assert not re.search(r"(?<![\w.])/work/", text), path
