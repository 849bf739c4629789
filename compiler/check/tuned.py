"""What a TuneD profile cannot carry on this host: a Plan row no artifact applies is
never dropped in silence (issue 52, F1).

With `runtime.owner = "tuned"` the hostc TuneD profile is the only artifact that sets
the runtime values; hostc-tuning.service leaves them to it.  A value the host's TuneD
does not read (an option newer than the release hostc knows, or a release hostc does not
know) is left out of the profile, and then nothing sets it.
"""

from __future__ import annotations

from collections.abc import Iterator

from hostc.diagnostics import Diagnostic, at, warning
from hostc.knowledge.tuned_options import TUNED_OPTION_SINCE
from hostc.plan.model import Plan, RuntimeOwner


def nic_channels_carried(plan: Plan) -> Iterator[Diagnostic]:
    """The Plan lowers each NIC's combined channels, but a TuneD that predates `[net]
    channels` (2.16), or one hostc does not know, gets no `[net_*]` section for them."""
    rt = plan.runtime
    if rt.owner is not RuntimeOwner.TUNED or not rt.nic_channels or plan.host.tuned.net_channels:
        return
    since = ".".join(map(str, TUNED_OPTION_SINCE["net.channels"]))
    known = plan.host.tuned.version
    which = (
        f"TuneD {'.'.join(map(str, known))}"
        if known
        else f"the TuneD of {plan.host.os or 'this host'} (not in hostc's table)"
    )
    names = ", ".join(c.device for c in rt.nic_channels)
    yield warning(
        at("irq", "nic_channels"),
        f"the NICs' combined channels ({names}) are not set: runtime.owner is tuned and "
        f"{which} may not read [net] channels (TuneD {since}), so the profile leaves them "
        "out and hostc-tuning.service leaves them to TuneD; hostc audit and hostc-verify "
        "report the driver's counts",
        hint='set irq.nic_channels = "keep" to keep the driver\'s counts on purpose, '
        'set host.os to a release hostc knows, or keep runtime.owner = "systemd"',
    )
