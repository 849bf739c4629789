"""A tiny SVG writer over xml.etree: every attribute and text goes through `clean`
and the serializer (`markup` for HTML written as text), numbers are integers or
fixed-point, and bytes are deterministic."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html import escape

from hostc.diagnostics import terminal

SVG_NS = "http://www.w3.org/2000/svg"

Attr = str | int


def clean(text: str) -> str:
    """Text as it may stand in SVG or HTML: every character of
    `charsets.TERMINAL_UNSAFE_TEXT` (C0 but line feed and tab, which XML 1.0 forbids
    even escaped; DEL, C1; the bidi, zero-width and separator characters that reorder
    or hide what a reviewer reads) as a visible `\\xNN`/`\\uNNNN` escape, the form every
    medium of hostc shows them in (`diagnostics.terminal`).  The serializer then
    escapes `&<>"`."""
    return terminal(text)


def markup(text: str) -> str:
    """The one escaping function of hostc's HTML and SVG output written as text (the
    review page): `clean`, then `&<>"'` as character references, so the text is
    character data or an attribute value wherever it is put, and reads as it was."""
    return escape(clean(text), quote=True)


def el(parent: ET.Element | None, tag: str, text: str | None = None, **attrs: Attr) -> ET.Element:
    """An element with attributes in the order given (`class_` → `class`, `_` → `-`)."""
    names = {k: k.rstrip("_").replace("__", ":").replace("_", "-") for k in attrs}
    e = ET.Element(tag) if parent is None else ET.SubElement(parent, tag)
    for k, v in attrs.items():
        e.set(names[k], clean(str(v)))
    if text is not None:
        e.text = clean(text)
    return e


def titled(parent: ET.Element, tag: str, title: str, **attrs: Attr) -> ET.Element:
    """An element with a `<title>` child: the hover text, and what a screen reader says."""
    e = el(parent, tag, None, **attrs)
    el(e, "title", title)
    return e


def root(width: int, height: int, label: str) -> ET.Element:
    return el(
        None,
        "svg",
        xmlns=SVG_NS,
        width=width,
        height=height,
        viewBox=f"0 0 {width} {height}",
        role="img",
        aria_label=label,
        font_family="DejaVu Sans, Verdana, Arial, sans-serif",
    )


def dumps(svg: ET.Element) -> str:
    ET.indent(svg, space=" ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(svg, encoding="unicode") + "\n"


def width_of(text: str, size: int) -> int:
    """About how wide `text` is at `size` px in a sans font (0.6 em a character)."""
    return (len(text) * size * 6 + 9) // 10


def fit(text: str, width: int, size: int) -> str:
    """`text` cut with an ellipsis to fit `width` px (the full text is in the title)."""
    most = max(1, width * 10 // (size * 6))
    return text if len(text) <= most else text[: max(1, most - 1)] + "…"
