# Boot 3 (v2 in effect), sourced by step3.sh before its reboot: `cpu.offline` on a real
# kernel (issue 52).  tests/vm/v2-offline.toml is v2 with core 6-7 offline; its
# hostc-tuning runs here by hand (as hostc-tuning.service would at boot), twice: the
# second run finds the core offline and its inactive cpufreq policy (where one exists)
# and must set and refuse nothing.  `hostc audit` of that spec reads the core back
# offline; the RCU offload kthreads are listed for the audit rows.  The core goes back
# online at the end, so nothing of this outlives the step (the next boot starts
# without it anyway: no file is installed).
O=/root/results/cpu-offline
mkdir -p $O
OFF=/root/vmtest/offline
cat /sys/devices/system/cpu/online >$O/online-before
hostc audit $OFF/node.toml --json >$O/audit-before.json; echo $? >$O/audit-before.rc
sh $OFF/systemd/usr/local/sbin/hostc-tuning >$O/tuning1.log 2>&1; echo $? >$O/tuning1.rc
sh $OFF/systemd/usr/local/sbin/hostc-tuning >$O/tuning2.log 2>&1; echo $? >$O/tuning2.rc
cat /sys/devices/system/cpu/online >$O/online-after
cat /sys/devices/system/cpu/offline >$O/offline-after
for c in 6 7; do cat /sys/devices/system/cpu/cpu$c/online >$O/cpu$c-online; done
hostc audit $OFF/node.toml --json >$O/audit-after.json; echo $? >$O/audit-after.rc
for p in /proc/[0-9]*; do
    read -r comm <"$p/comm" 2>/dev/null || continue
    case "$comm" in
        rcuo*) echo "$comm $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$p/status")" ;;
    esac
done >$O/rcuo-kthreads
for c in 6 7; do echo 1 >/sys/devices/system/cpu/cpu$c/online || true; done
cat /sys/devices/system/cpu/online >$O/online-restored
