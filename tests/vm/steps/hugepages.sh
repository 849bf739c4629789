# Boot 3 (v2 in effect): the runtime hugepage pools (issue 52, F2 and a second pool).
# Sourced by step3.sh after its audit of v2.  v2 asks for its pools at runtime
# (hugepages.allocate): hostc-hugepages.service wrote each node's count of both sizes
# early in this boot.  Results under $R/hugepages/.
H=/root/results/hugepages
mkdir -p $H
cat /proc/cmdline >$H/cmdline
systemctl show -p ActiveState -p Result -p UnitFileState hostc-hugepages.service >$H/unit 2>&1
journalctl -b -u hostc-hugepages.service -o cat --no-pager >$H/journal 2>&1
# NODE KB NR FREE SURPLUS for every node and size the kernel offers
for d in /sys/devices/system/node/node[0-9]*/hugepages/hugepages-*kB; do
    n=${d#/sys/devices/system/node/node}; n=${n%%/*}
    s=${d##*/hugepages-}
    echo "$n $s $(cat "$d/nr_hugepages") $(cat "$d/free_hugepages") $(cat "$d/surplus_hugepages")"
done >$H/counts 2>&1
# systemd's monotonic stamps: the unit became active before sysinit.target, before the
# workload and before hostc's other units began to start
for u in hostc-hugepages.service sysinit.target demo2.service hostc-tuning.service hostc-verify.service; do
    echo "$u $(systemctl show -p ActiveEnterTimestampMonotonic --value $u) $(systemctl show -p InactiveExitTimestampMonotonic --value $u)"
done >$H/order 2>&1
# the audit rows of both pools, this boot (the mapping rows map one page each, live)
hostc audit /root/vmtest/v2/node.toml --json >$H/audit.json 2>$H/audit.err; echo $? >$H/audit.rc
# what hostc-apply does when the script changes: the unit again; every count is in place
# already, so it writes nothing and succeeds
systemctl restart hostc-hugepages.service; echo $? >$H/rerun.rc
journalctl -b -u hostc-hugepages.service -o cat --no-pager >$H/journal-rerun 2>&1
# a pool the kernel cannot give fails the script, naming the node, size and counts: the
# unit's script with one more count for a node this guest does not have (no memory is
# taken for it), run by hand
# shellcheck disable=SC2016  # the script's own words, not this shell's
sed 's/^exit "\$failed"$/reserve 7 2048 2M 1\nexit "$failed"/' /usr/local/sbin/hostc-hugepages >/run/hostc-hugepages-bad
sh /run/hostc-hugepages-bad >$H/bad.out 2>&1; echo $? >$H/bad.rc
rm -f /run/hostc-hugepages-bad
