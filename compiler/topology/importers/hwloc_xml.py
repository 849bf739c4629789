"""hwloc XML, the file: parsing, attributes, bitmaps and the object tree.

The rest of the importer (`hwloc_numa` for CPUs, NUMA nodes and distances,
`hwloc_io` for PCI devices) reads the tree through these helpers, so every
malformed attribute is reported the same way: a message, and text to find the
line by (ElementTree keeps no line numbers).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator

from hostc.cpuset import MAX_CPU, CpuListError, CpuSet

# hwloc writes 32-bit words as 0x%08x, empty words for 0, and a `0xf...f,` prefix
HINT = "export the topology with `lstopo --of xml FILE` (hwloc 2.x) on the host"
# for bitmaps that are infinitely set; anything else is a damaged file.
_MASK = re.compile(r"(?:0xf\.\.\.f,?)?(?:0x[0-9a-fA-F]{1,8})?(?:,(?:0x[0-9a-fA-F]{1,8})?)*")
_NUMBER = re.compile(r"[0-9]{1,19}")
_POSITION = re.compile(r": line \d+, column \d+$")
Element = ET.Element


class Bad(Exception):
    """A problem in the file; `needle` is text to search for the line number."""

    def __init__(
        self,
        message: str,
        needle: str | None = None,
        hint: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.needle = needle
        self.hint = hint
        self.line = line


def line_of(text: str, needle: str | None) -> int | None:
    """ElementTree keeps no line numbers, so find the offending text instead."""
    if not needle:
        return None
    at = text.find(needle)
    return None if at < 0 else text.count("\n", 0, at) + 1


def short(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:40] + "…")


def type_of(el: Element) -> str:
    t = el.get("type", "")
    return "Package" if t == "Socket" else t  # v1 called packages sockets


def objects(el: Element) -> Iterator[Element]:
    return (c for c in el if c.tag == "object")


def int_attr(el: Element, attr: str, what: str) -> int:
    value = el.get(attr)
    if value is None:
        raise Bad(f"{what} has no {attr} attribute")
    if value.isascii() and value.isdigit() and len(value) < 20:
        return int(value)
    raise Bad(f"{what}: {attr}={short(value)} is not a number", f'{attr}="{value}"')


def opt_int(el: Element, attr: str, what: str) -> int | None:
    return None if el.get(attr) is None else int_attr(el, attr, what)


_WORDS = (MAX_CPU + 1) // 32


def check_mask(el: Element, attr: str) -> str | None:
    """The bitmap text with its shape checked (no set is built), or None if absent."""
    value = el.get(attr)
    if value is None:
        return None
    value = value.strip()
    # 2048 words is CPU 65535, where CpuSet.parse stops too; beyond is a damaged file.
    if value.count(",") >= _WORDS or _MASK.fullmatch(value) is None:
        raise Bad(
            f"{attr}={short(value)} is not an hwloc bitmap (hex words like 0x000000ff,,0x1)",
            f'{attr}="{value}"',
        )
    return value


def mask(el: Element, attr: str) -> CpuSet | None:
    value = check_mask(el, attr)
    if value is None:
        return None
    try:
        return CpuSet.from_mask(value.removeprefix("0xf...f").lstrip(","))
    except (CpuListError, ValueError):
        raise Bad(f"{attr}={short(value)} is not an hwloc bitmap", f'{attr}="{value}"') from None


def numbers(els: Iterable[Element], what: str) -> list[int]:
    out: list[int] = []
    for el in els:
        for tok in (el.text or "").split():
            if _NUMBER.fullmatch(tok) is None:
                raise Bad(f"{what}: {short(tok)} is not a number", tok)
            out.append(int(tok))
    return out


def infos(el: Element) -> list[tuple[str, str]]:
    return [(i.get("name", ""), i.get("value", "")) for i in el if i.tag == "info"]


def info(el: Element, name: str) -> str | None:
    return next((v for n, v in infos(el) if n == name), None)


def load(text: str) -> Element:
    if not text.strip():
        raise Bad("the hwloc XML file is empty", hint=HINT)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        if not text.lstrip().startswith("<"):
            # Not XML at all (a path mix-up): say so without pointing into its content.
            raise Bad("not XML, so not an hwloc export", hint=HINT) from None
        position = getattr(e, "position", None)
        detail = _POSITION.sub("", str(e)).removeprefix("not well-formed").strip(" ()")
        raise Bad(
            f"not well-formed XML ({detail}): the file is cut short or is not XML",
            hint=HINT,
            line=position[0] if position else None,
        ) from None
    except (UnicodeError, ValueError) as e:
        raise Bad(f"cannot read the XML: {e}", hint=HINT) from None
    if root.tag != "topology":
        raise Bad(f"not hwloc XML: the root element is <{root.tag}>, not <topology>", hint=HINT)
    version = root.get("version")
    if version is not None and not version.startswith(("1.", "2.")):
        raise Bad(
            f"hwloc XML version {version} is not supported (hostc reads v1 and v2.0)",
            f'version="{version}"',
            hint="re-export with hwloc 2.x: `lstopo --of xml FILE`",
        )
    return root


class Tree:
    """The object tree with parent links, which ElementTree lacks."""

    def __init__(self, machine: Element) -> None:
        self.machine = machine
        self.order = list(machine.iter("object"))
        self.parent: dict[Element, Element] = {}
        for el in self.order:
            for child in objects(el):
                self.parent[child] = el
            for attr in el.attrib:
                if attr.endswith(("cpuset", "nodeset")):
                    check_mask(el, attr)  # hwloc itself accepts bad masks: check them all
        self.numa = [el for el in self.order if type_of(el) == "NUMANode"]
        self.packages = [el for el in self.order if type_of(el) == "Package"]

    def ancestors(self, el: Element) -> Iterator[Element]:
        while el in self.parent:
            el = self.parent[el]
            yield el

    def nearest(self, el: Element, kind: str) -> Element | None:
        return next((a for a in self.ancestors(el) if type_of(a) == kind), None)
