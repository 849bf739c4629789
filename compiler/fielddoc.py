"""Field metadata for the input models: help text and an example per attrs field.

The spec and the topology snapshot both document their keys this way, and the JSON
Schemas (`hostc schema`) are generated from it; a base module, so neither model imports
the other for it.
"""

from __future__ import annotations


def doc(text: str, example: object = None) -> dict[str, object]:
    meta: dict[str, object] = {"help": text}
    if example is not None:
        meta["example"] = example
    return meta
