"""A tiny SVG writer over xml.etree: every attribute and text is escaped by the
serializer, numbers are integers or fixed-point, and bytes are deterministic."""

from __future__ import annotations

import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"

Attr = str | int


def clean(text: str) -> str:
    """XML 1.0 forbids most control characters even escaped: show them as `\\xNN`."""
    return "".join(
        f"\\x{ord(c):02x}" if (ord(c) < 0x20 and c not in "\t\n") or 0x7F <= ord(c) < 0xA0 else c
        for c in text
    )


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
