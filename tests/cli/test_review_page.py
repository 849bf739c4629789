"""`hostc diff --format html`: one self-contained, escaped page that a browser draws."""

from __future__ import annotations

import shutil
from html.parser import HTMLParser
from pathlib import Path

from conftest import ROOT, run_hostc
from pictures import browser_check

DGX = ROOT / "examples" / "dgx-h100-inference"
VOID = {"meta", "br", "hr", "img", "input", "link"}
#: SVG elements the serializer writes self-closed (`<rect … />`)
SELF_CLOSED = {"rect", "line"}


class Structure(HTMLParser):
    """Checks nesting, and collects what would make the page load or run anything."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.tags: set[str] = set()
        self.external: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.external += [f"{tag} {k}={v}" for k, v in attrs if k in ("src", "href")]
        self.external += [f"{tag} {k}" for k, _ in attrs if k.startswith("on")]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def _page(tmp_path: Path) -> tuple[Path, str]:
    """The review page for a housekeeping change, from a directory whose name needs escaping."""
    new = tmp_path / "<b>&x"
    shutil.copytree(DGX, new)
    spec = new / "node.toml"
    spec.write_text(
        spec.read_text().replace("housekeeping_per_node = 4", "housekeeping_per_node = 5")
    )
    r = run_hostc("diff", DGX / "node.toml", spec, "--format", "html")
    assert r.returncode == 1, r.stderr
    page = tmp_path / "review.html"
    page.write_text(r.stdout, encoding="utf-8")
    return page, r.stdout


def test_review_page_is_self_contained_well_nested_and_escaped(tmp_path: Path) -> None:
    _, text = _page(tmp_path)
    p = Structure()
    p.feed(text)
    p.close()
    assert p.errors == [] and p.stack == []
    assert p.external == [], "the page loads or runs something"
    assert not p.tags & {"script", "link", "iframe", "img", "object"}
    assert {"svg", "table", "details", "summary", "style"} <= p.tags
    assert text.count("<svg ") == 2, "both partition pictures, inline"
    assert "<b>&x" not in text and "&lt;b&gt;&amp;x" in text
    assert 'class="changed"' in text, "changed settings are highlighted"
    assert "4 core(s) per NUMA node" in text and "5 core(s) per NUMA node" in text


def test_browser_draws_the_review_page(tmp_path: Path) -> None:
    page, _ = _page(tmp_path)
    browser_check(page, 1400, 1000, tmp_path)


def test_review_page_leads_with_the_change_and_folds_what_did_not(tmp_path: Path) -> None:
    _, text = _page(tmp_path)
    settings = text.index("<h2>Settings</h2>")
    assert settings < text.index("<h2>Partition</h2>"), "the change comes before the pictures"
    changed, folded = text.index('class="changed"', settings), text.index("<details>", settings)
    assert changed < folded, "changed settings first"
    unchanged = text[folded : text.index("</details>", folded)]
    assert "unchanged setting(s)</summary>" in unchanged
    assert 'class="same"' in unchanged and 'class="changed"' not in unchanged
    assert 'class="same"' not in text[settings:folded], "every unchanged row is folded"
