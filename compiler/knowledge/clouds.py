"""How much user-data each cloud takes: the limit a first-boot config (cloud-init's
`user-data`, Ignition's `config.ign`) must fit when it is passed as the instance's
user data, custom data or metadata value.

Clouds measure differently: EC2, Azure and GCP count the bytes as given (EC2: "in raw
form, before it is base64-encoded"), Nova and OCI count the base64 text the API takes
(4 characters for every 3 bytes, `ceil(n / 3) * 4`).  `fits` applies each row's own
measure, so a 40,000-byte file fits Nova's 65,535 and not OCI's 32,000.  A cloud that
counts other metadata in the same budget (OCI: the SSH keys too) leaves less than the
row says: the row is the upper bound.
"""

from __future__ import annotations

import enum

import attrs

from hostc.knowledge.table import Table
from hostc.record import Record


class Measure(enum.StrEnum):
    """What the cloud counts against its limit."""

    RAW = "raw"  # the bytes of the file as given
    BASE64 = "base64"  # the base64 text of the file (the API's encoding)


@attrs.frozen(repr=False, eq=False)
class UserDataLimit(Record):
    #: the cloud's name as users know it
    cloud: str
    #: the largest size the cloud takes, in bytes of `measure`
    limit: int
    measure: Measure
    #: the field that carries the user data
    field: str

    def size(self, data: bytes) -> int:
        """`data` as this cloud counts it."""
        return len(data) if self.measure is Measure.RAW else -(-len(data) // 3) * 4

    def fits(self, data: bytes) -> bool:
        return self.size(data) <= self.limit

    def describe(self) -> str:
        """`EC2 16384 bytes` and the like, with how the bytes are counted."""
        how = "" if self.measure is Measure.RAW else " of base64"
        return f"{self.cloud} {self.limit} bytes{how}"


#: The user-data limits of the clouds GPU nodes run on, each with its source.
LIMITS: Table[str, UserDataLimit] = Table(
    {
        "ec2": (
            UserDataLimit("EC2", 16384, Measure.RAW, "UserData"),
            "AWS EC2 User Guide, 'Work with instance user data' (instancedata-add-user-data"
            ".html): 'User data is limited to 16 KB, in raw form, before it is "
            "base64-encoded'; the API's error names 16384 bytes",
        ),
        "oci": (
            UserDataLimit("OCI", 32000, Measure.BASE64, "metadata.user_data"),
            "OCI Compute docs, 'Updating Instance Metadata' (updatinginstancemetada.htm): "
            "'The combined size of these two attributes [metadata, extendedMetadata] can "
            "be a maximum of 32,000 bytes'; user_data is given base64-encoded",
        ),
        "openstack": (
            UserDataLimit("OpenStack Nova", 65535, Measure.BASE64, "user_data"),
            "OpenStack Nova user docs, 'Provide user data to instances' (user/user-data."
            "html): 'The provided user data must be base64 encoded and is restricted to "
            "65535 bytes'",
        ),
        "azure": (
            UserDataLimit("Azure", 65535, Measure.RAW, "osProfile.customData"),
            "Azure docs, 'Custom data and cloud-init on Azure Virtual Machines' "
            "(virtual-machines/custom-data): 'The size can't exceed 64 KB'; "
            "VirtualMachineOSProfile.CustomData (Azure SDK reference): 'The maximum "
            "length of the binary array is 65535 bytes'",
        ),
        "gcp": (
            UserDataLimit("GCP", 262144, Measure.RAW, "metadata user-data"),
            "Compute Engine REST reference, Metadata (compute/docs/reference/rest/v1/"
            "Metadata): a value's 'size must be less than or equal to 262144 bytes "
            "(256 KiB)'",
        ),
    }
)


def exceeded(data: bytes) -> list[UserDataLimit]:
    """The clouds whose limit `data` passes, smallest limit first (LIMITS' order)."""
    return [lim for lim in LIMITS.values() if not lim.fits(data)]
