# Boot 3: v2 in effect.  Audit, no file of v1 that v2 does not emit; drift by
# `sysctl -w`; then a sysctl.d file that changes a Plan key for the next boot.
R=/root/results
hostc audit /root/vmtest/v2/node.toml --json >$R/audit-v2.json; echo $? >$R/audit-v2.rc
# Issue 52: per-node hugepages reserved at runtime, two pools
. /root/vmtest/steps/hugepages.sh
systemctl is-failed hostc-verify.service >$R/verify-v2 2>&1
for p in $(awk '$1 == "file" {print $3}' /root/vmtest/v1/rootfs/var/lib/hostc/manifest.new); do
    grep -q " $p\$" /var/lib/hostc/manifest || { [ -e "$p" ] && echo "$p"; }
done >$R/v1-left
systemctl is-active irqbalance.service >$R/irqbalance-v2 2>&1
sysctl -w vm.swappiness=60 >/dev/null
hostc audit /root/vmtest/v2/node.toml >$R/audit-drift.txt; echo $? >$R/audit-drift.rc
echo 'vm.swappiness = 60' >/etc/sysctl.d/99-tamper.conf
# Issue 52: `cpu.offline` on a real kernel (v2 with core 6-7 offline, undone at the end)
. /root/vmtest/steps/cpu-offline.sh
systemctl --no-block reboot
