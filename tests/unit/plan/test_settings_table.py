"""The settings table (issue 18): one declaration per setting, checked as data."""

from __future__ import annotations

import enum
import typing
from typing import Any

import attrs
import pytest

from hostc.report.settings_page import render
from hostc.settings import SETTINGS, Family, Setting, sysctl
from hostc.settings.model import Merge
from hostc.spec.model import HostSpec
from hostc.spec.presets import ENTRIES

from conftest import ROOT
from regenerate import COMMAND


def test_docs_settings_md_is_current() -> None:
    assert (ROOT / "docs" / "settings.md").read_text() == render(), f"stale: {COMMAND}"


def test_names_are_unique() -> None:
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("s", SETTINGS, ids=lambda s: s.name)
def test_a_spec_key_names_a_field_of_the_spec(s: Setting[Any]) -> None:
    if s.spec_key is None:
        return
    cls: Any = HostSpec
    for part in s.spec_key:
        fields = attrs.fields_dict(cls)
        assert part in fields, (s.name, part)
        cls = _attrs_class(fields[part].type)
    assert s.help and s.example


def _attrs_class(annotation: Any) -> Any:
    """The attrs class of a field's type (a postponed annotation, or one resolved by
    an earlier load: `Hugepages | None`); `object` for a scalar."""
    from hostc.spec import model

    if isinstance(annotation, str):
        annotation = getattr(model, annotation.split(" | ")[0], object)
    found = [a for a in (annotation, *typing.get_args(annotation)) if attrs.has(a)]
    return found[0] if found else object


@pytest.mark.parametrize("e", ENTRIES, ids=lambda e: f"{e.layer}:{e.setting.name}")
def test_a_preset_value_has_its_settings_type(e: Any) -> None:
    t = e.setting.type
    if issubclass(t, enum.Enum):
        assert isinstance(e.value, t), e
    elif e.setting.merge is Merge.RISE:
        assert isinstance(e.value, int) or e.value == "unlimited", e
    else:
        assert isinstance(e.value, t), e


def test_a_sysfs_row_names_the_file_a_host_shows_it_in() -> None:
    """The row is the whole declaration of a sysfs knob: hostc-tuning, TuneD, audit and
    explain all read its file from the row."""
    for s in SETTINGS:
        if s.family is Family.SYSFS:
            assert s.sysfs is not None, s.name


def test_a_max_merge_takes_the_largest_layer() -> None:
    assert not Merge.MAX.takes(536870912, 268435456)
    assert Merge.MAX.takes(268435456, 536870912)
    assert Merge.RISE.takes(1024, "unlimited") and not Merge.RISE.takes("unlimited", 1024)


def test_an_undeclared_sysctl_gets_a_row_of_its_own_once() -> None:
    row = sysctl("net.ipv4.tcp_fastopen")
    assert row is sysctl("net.ipv4.tcp_fastopen") and row.family is Family.SYSCTL
    assert sysctl("vm.swappiness").merge is Merge.LAST
