"""Issue 32, class 4: text is escaped where it leaves hostc, one function per medium
(terminal: `diagnostics.terminal`, Markdown: `review.md_text`/`md_code`), and spec and
snapshot strings refuse the bidi and zero-width characters as they refuse controls."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from hostc.cli.text import TerminalSafe
from hostc.diagnostics import terminal
from hostc.knowledge import charsets
from hostc.report.review import md_code, md_text
from hostc.spec.text import control_char

BIDI_ZW = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200c\u200d\ufeff"
HOSTILE = st.lists(
    st.one_of(
        st.characters(max_codepoint=0x9F),
        st.sampled_from(list(BIDI_ZW)),
        st.sampled_from(["\x1b[31m", "\x1b]0;x\x07", "\x9b2J", "<!--", "-->", "`", "``", "|"]),
    ),
    max_size=20,
).map("".join)
_UNSAFE_BUT_LF_TAB = re.compile(charsets.TERMINAL_UNSAFE_TEXT.pattern)


@settings(max_examples=200, deadline=None)
@given(HOSTILE)
def test_terminal_text_holds_no_control_bidi_or_zero_width(s: str) -> None:
    out = terminal(s)
    assert not _UNSAFE_BUT_LF_TAB.search(out)
    assert out.count("\n") == s.count("\n") and out.count("\t") == s.count("\t")
    stream = io.StringIO()
    TerminalSafe(stream).write(s)  # the stream cli.run puts on stdout and stderr
    assert stream.getvalue() == out


def test_cli_run_routes_stdout_through_the_terminal_boundary(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import hostc.cli.main as cli

    def hostile(_: str) -> object:
        class Cmd:
            def main(self, args: list[str], standalone_mode: bool) -> None:
                import sys

                sys.stdout.write("host value \x1b]0;pwned\x07\u202eevil\n")

        return Cmd()

    monkeypatch.setattr(cli, "_command", hostile)
    assert cli.run(["audit"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "\\x1b]0;pwned\\x07" in out


def _inline_tokens(md: str) -> list[str]:
    tokens = MarkdownIt("commonmark").enable("table").enable("strikethrough").parse(md)
    kinds = [t.type for t in tokens]
    for t in tokens:
        kinds += [c.type for c in t.children or []]
    return kinds


@settings(max_examples=200, deadline=None)
@given(HOSTILE)
def test_markdown_text_renders_literally(s: str) -> None:
    md = f"- was: {md_text(s)}"
    kinds = _inline_tokens(md)
    assert not {
        "html_inline",
        "html_block",
        "link_open",
        "em_open",
        "strong_open",
        "code_inline",
        "s_open",
        "table_open",
        "image",
    } & set(kinds)
    assert "\n" not in md and not charsets.TERMINAL_UNSAFE.search(md)


@settings(max_examples=200, deadline=None)
@given(HOSTILE.filter(lambda s: s.strip() != ""))
def test_markdown_code_is_one_code_span(s: str) -> None:
    md = f"- changed {md_code(s)}: x"
    kinds = _inline_tokens(md)
    assert kinds.count("code_inline") == 1
    assert not {"html_inline", "html_block"} & set(kinds)
    assert "\n" not in md and not charsets.TERMINAL_UNSAFE.search(md)


@given(st.text(max_size=5), st.sampled_from(list(BIDI_ZW)), st.text(max_size=5))
@settings(max_examples=50, deadline=None)
def test_spec_and_snapshot_strings_refuse_bidi_and_zero_width(a: str, c: str, b: str) -> None:
    # the one rule every spec and snapshot string goes through (structure._strict_str)
    from hostc.spec.structure import _strict_str

    assert control_char(a + c + b) is not None
    with pytest.raises(ValueError, match="control character"):
        _strict_str(a + c + b, None)


# --- HTML and SVG: one function (svgdoc.clean, and svgdoc.markup for HTML as text) ---------


@settings(max_examples=200, deadline=None)
@given(HOSTILE.map(lambda s: s + "<b>&\"'"))
def test_html_and_svg_text_is_well_formed_visible_and_reads_as_written(s: str) -> None:
    import html
    import xml.etree.ElementTree as ET

    from hostc.report.svgdoc import dumps, el, markup

    shown = terminal(s)  # what a reviewer must read: controls, bidi, zero-width visible
    page = markup(s)
    assert not _UNSAFE_BUT_LF_TAB.search(page) and not re.search(r"[<>\"']", page)
    assert html.unescape(page) == shown
    svg = el(None, "svg", xmlns="http://www.w3.org/2000/svg", aria_label=s)
    el(svg, "title", s)
    text = dumps(svg)
    assert not _UNSAFE_BUT_LF_TAB.search(text)
    back = ET.fromstring(text.split("\n", 1)[1])  # well-formed XML, whatever the input
    assert back[0].text == shown and back.get("aria-label") == shown
