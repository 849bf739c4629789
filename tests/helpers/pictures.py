"""Read a partition picture back: which CPUs it shows, as what; and a headless Chromium
screenshot of an SVG or HTML file, decoded enough to tell a blank page from a drawing."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pytest

from hostc.cpuset import CpuSet

from conftest import IN_CI

SVG = "{http://www.w3.org/2000/svg}"


def cpus_shown(svg_text: str) -> dict[int, list[tuple[str, str]]]:
    """CPU → every (class, workloads) the picture gives it: cells by data-cpu, folded
    runs by their data-cpus cpulist."""
    root = ET.fromstring(svg_text)
    out: dict[int, list[tuple[str, str]]] = {}
    for e in root.iter():
        cls = e.get("data-class")
        if cls is None:
            continue
        where = e.get("data-cpu")
        ids = [int(where)] if where is not None else list(CpuSet.parse(e.get("data-cpus", "")))
        for cpu in ids:
            out.setdefault(cpu, []).append((cls, e.get("data-workload", "")))
    return out


def screenshot(chromium: str, page: Path, png: Path, width: int, height: int, tmp: Path) -> None:
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={tmp / 'profile'}",
            f"--screenshot={png}",
            f"--window-size={width},{height}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
        # Chromium keeps crash reports under ~/.config and dconf its cache under ~/.cache
        # whatever --user-data-dir says: the test's own folder is its home
        env={**os.environ, "HOME": str(tmp), "XDG_CONFIG_HOME": str(tmp / "config"),
             "XDG_CACHE_HOME": str(tmp / "cache")},
    )  # fmt: skip


def png_size_and_colours(data: bytes, enough: int = 8) -> tuple[int, int, int]:
    """(width, height, distinct pixel values up to `enough`) of an 8-bit RGB/RGBA PNG,
    filters undone row by row from the top; stops once `enough` colours are seen."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            ihdr = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", ihdr[:10])
    assert depth == 8 and colour in (2, 6), f"unexpected PNG format {depth}/{colour}"
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    prev, seen = bytearray(stride), set()
    for y in range(height):
        f, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        seen |= {bytes(line[i : i + bpp]) for i in range(0, stride, bpp)}
        if len(seen) >= enough:
            break
        prev = line
    return width, height, len(seen)


def need_chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if IN_CI:
            pytest.fail("chromium is missing; .ci/run must install it")
        pytest.skip("chromium not installed: the browser rendering test needs it")
    return path


def browser_check(page: Path, width: int, height: int, tmp_path: Path) -> None:
    """Chromium draws `page` at width × height: a PNG of that size, not one flat colour."""
    png = tmp_path / (page.stem + ".png")
    screenshot(need_chromium(), page, png, width, height, tmp_path)
    w, h, colours = png_size_and_colours(png.read_bytes())
    assert (w, h) == (width, height)
    assert colours >= 3, "the screenshot is blank"
