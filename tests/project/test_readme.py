"""The README fits its readers: the two set-up commands first (the test command is the
one .ci/run runs), a short tour, the API's entry points with an example that runs, the
exit codes, and links into docs/ that all resolve."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from conftest import ROOT

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```$", text, re.M | re.S)


def test_the_two_set_up_commands_come_first_and_ci_runs_the_second() -> None:
    text = README.read_text()
    first = re.search(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S)
    assert first and first.group(1) == "sh"
    commands = [ln for ln in first.group(2).splitlines() if ln and not ln.startswith("#")]
    assert commands == [
        "pip install . && hostc build examples/h100-4gpu-inference/node.toml "
        "--target all --out out/",
        "pip install -e '.[test]' && python -m pytest",
    ]
    assert text.index(first.group(0)) < text.index("\n## ")  # before any section
    assert commands[1] in (ROOT / ".ci" / "run").read_text()


def test_readme_is_a_short_front_page() -> None:
    """586 lines before: the rest lives in docs/ by topic."""
    assert len(README.read_text().splitlines()) <= 150


def _links(path: Path) -> list[str]:
    text = re.sub(r"^```.*?^```$", "", path.read_text(), flags=re.M | re.S)
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("doc", [README, *DOCS], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(doc: Path) -> None:
    broken = []
    for link in _links(doc):
        if re.match(r"[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        dest = (doc.parent / target).resolve() if target else doc
        if not dest.exists():
            broken.append(link)
        elif anchor and dest.suffix == ".md":
            heads = re.findall(r"^#+ (.*)$", dest.read_text(), re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in heads}
            if anchor not in slugs:
                broken.append(link)
    assert broken == []


def test_readme_links_every_doc() -> None:
    links = set(_links(README))
    assert [d.name for d in DOCS if f"docs/{d.name}" not in links] == []


def test_readme_names_the_api_entry_points_and_they_exist() -> None:
    from hostc import api

    text = README.read_text()
    section = text[text.index("## Python API") : text.index("## Exit codes")]
    for name in ("spec_from_data", "loads_spec", "load_spec", "compile_file", "compile_plan"):
        assert f"`{name}`" in section, name
    named = re.findall(r"`([a-z_]+)`", section.split("```")[0])
    assert [n for n in named if n not in api.__all__] == []


def test_readme_api_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    (block,) = _blocks(README.read_text(), "python")
    old = Path.cwd()
    os.chdir(ROOT)
    try:
        exec(compile(block, str(README), "exec"), {"__name__": "readme"})
    finally:
        os.chdir(old)
    assert capsys.readouterr().out == "/etc/sysctl.d/90-hostc.conf reboot: True\n"
