"""Every example's first-boot config measured against each cloud's documented user-data
limit (`hostc.knowledge.clouds`, issue 54 C1): the build warns, naming the cloud and
its limit, for exactly the clouds it passes; the scripts travel compressed, so a config
fits the clouds that take 64 KB and more; and the limits are measured as each cloud
counts them (EC2 raw bytes, OCI and Nova base64 text).

Before issue 54 every example's user-data (45-113 KB) passed EC2's 16 KB with no
warning: `test_build_warns_for_each_cloud_it_exceeds` fails there.
"""

from __future__ import annotations

import pytest

from hostc import api
from hostc.knowledge.clouds import LIMITS, Measure, exceeded

from conftest import EXAMPLE_NAMES, example_plan

WRAPPERS = ("cloud-init", "ignition")


def _config(name: str, target: str) -> api.Artifact:
    (art,) = api.emit(example_plan(name), [target])
    return art


@pytest.mark.parametrize("target", WRAPPERS)
@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_build_warns_for_each_cloud_it_exceeds(name: str, target: str) -> None:
    art = _config(name, target)
    warned = api.size_warnings([art])
    over = [lim for lim in LIMITS.values() if lim.size(art.data) > lim.limit]
    if not over:
        assert warned == []
        return
    (w,) = warned
    for lim in over:
        assert lim.describe() in w.message, (lim, w.message)
    for lim in set(LIMITS.values()) - set(over):
        assert f"{lim.cloud} " not in w.message
    assert w.hint and "docs/targets.md" in w.hint


@pytest.mark.parametrize("target", WRAPPERS)
@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_config_fits_the_clouds_that_take_64_kb(name: str, target: str) -> None:
    """Compressed scripts: the largest example (8 GPUs, 8 NICs) fits Azure and GCP
    as one file; before issue 54 the DGX user-data was 113 KB."""
    data = _config(name, target).data
    assert LIMITS["azure"].fits(data) and LIMITS["gcp"].fits(data), len(data)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_ec2_limit_is_counted_on_the_raw_bytes(name: str) -> None:
    """EC2 counts the bytes before base64: every example is over its 16 KB today, and
    the warning says so (a raw 16 KB limit, not a 21,848-character base64 one)."""
    data = _config(name, "cloud-init").data
    assert LIMITS["ec2"].measure is Measure.RAW
    assert LIMITS["ec2"] in exceeded(data)


def test_limits_are_measured_as_each_cloud_counts() -> None:
    data = b"x" * 30000  # 40,000 characters of base64
    assert LIMITS["openstack"].fits(data) and not LIMITS["oci"].fits(data)
    assert LIMITS["oci"].size(data) == 40000 and LIMITS["ec2"].size(data) == 30000
    assert exceeded(b"x" * 16384) == [] and exceeded(b"x" * 16385) == [LIMITS["ec2"]]


def test_every_limit_names_its_source() -> None:
    for key in LIMITS:
        assert LIMITS.source(key), key
