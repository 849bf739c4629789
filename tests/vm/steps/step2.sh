# Boot 2: v1 in effect.  Audit, the verifier, what the kernel said about its arguments;
# then v2 applied over v1, and a reboot.
R=/root/results
hostc audit /root/vmtest/v1/node.toml --json >$R/audit-v1.json; echo $? >$R/audit-v1.rc
# Issue 53: `hostc measure` on the tuned boot: three planted, three clean windows
. /root/vmtest/steps/measure-tuned.sh
systemctl is-failed hostc-verify.service >$R/verify-v1 2>&1
journalctl -b -u hostc-verify.service -o cat --no-pager >$R/verify-v1.log 2>&1
dmesg >$R/dmesg-v1 2>&1
pid=$(systemctl show -p MainPID --value demo.service)
grep -E '^(Cpus|Mems)_allowed_list' /proc/$pid/status >$R/demo-v1 2>&1
grep -E 'bind|interleave|prefer' /proc/$pid/numa_maps | head -3 >$R/demo-numa-v1 2>&1
# Issue 50: the workloads' AllowedCPUs= have the cgroup cpuset controller on, and this
# 6.1 kernel gives a task that moves into a cpuset the cpuset's CPUs.  The CPUs of PID 1,
# of journald (started at boot), of a service started now and of both after a restart,
# and the root's controllers (the test wants cpuset among them)
cpus() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$1/status; }
mainpid() { systemctl show -p MainPID --value "$1"; }
{
    echo "pid1 $(cpus 1)"
    echo "journald $(cpus $(mainpid systemd-journald.service))"
    systemd-run --quiet --unit=vmtest-later.service /bin/sleep 600
    sleep 1
    echo "later $(cpus $(mainpid vmtest-later.service))"
    systemctl restart systemd-journald.service vmtest-later.service
    sleep 1
    echo "journald-restarted $(cpus $(mainpid systemd-journald.service))"
    echo "later-restarted $(cpus $(mainpid vmtest-later.service))"
    systemctl stop vmtest-later.service
    echo "root-controllers $(cat /sys/fs/cgroup/cgroup.subtree_control)"
} >$R/services-cpus-v1 2>&1
# What hostc-tuning wrote that the kernel shows: every CPU's PM QoS resume latency beside
# whether it has cpuidle state 1.
for d in /sys/devices/system/cpu/cpu[0-9]*; do
    s1=-
    [ -e "$d/cpuidle/state1" ] && s1=state1
    printf '%s %s %s\n' "${d##*/cpu}" "$(cat "$d/power/pm_qos_resume_latency_us" 2>/dev/null || echo absent)" "$s1"
done >$R/pmqos-v1
# The corrected-error poll: each machinecheck device's check_interval and ignore_ce, or
# "absent" (Debian's cloud kernel is built without CONFIG_X86_MCE: no machinecheck)
for d in /sys/devices/system/machinecheck/machinecheck[0-9]*; do
    [ -e "$d" ] && echo "${d##*/} $(cat $d/check_interval) $(cat $d/ignore_ce)"
done >$R/mce-v1
[ -s $R/mce-v1 ] || echo absent >$R/mce-v1
# Every file v1 installed, as the guest has it (the test compares with the build)
awk '$1 == "file" {print $3}' /var/lib/hostc/manifest | xargs sha256sum >$R/installed-v1.sha 2>&1
# The modules of the modules-load.d file step1.sh installed: loaded at this boot?
systemctl is-active systemd-modules-load.service >$R/modules-load-v1 2>&1
for m in $(grep -v -e '^#' -e '^$' /etc/modules-load.d/90-hostc.conf); do
    if [ -d /sys/module/$(echo $m | tr - _) ]; then echo "$m loaded"; else echo "$m absent"; fi
done >$R/modules-v1
rm -f /etc/modules-load.d/90-hostc.conf
# The kubelet files step1.sh installed: the config drop-in in the folder the kubelet
# reads (--config-dir), the unit's drop-ins, and the arguments the stand-in kubelet got
cat /etc/kubernetes/kubelet.conf.d/*.conf >$R/kubelet-v1.conf 2>&1
systemctl show -p DropInPaths kubelet.service >$R/kubelet-v1.unit 2>&1
{ systemctl start kubelet.service && cat /run/vmtest-kubelet.args; } >$R/kubelet-v1.args 2>&1
rm -rf /etc/kubernetes /etc/systemd/system/kubelet.service.d /usr/lib/systemd/system/kubelet.service /usr/lib/systemd/system/kubelet.service.d /usr/bin/kubelet /run/vmtest-kubelet.args
# Issue 50 (review-outputs-4 R2): a netdev that appears while hostc-tuning runs is
# configured by a run that follows.  The udev rule is the one hostc builds for v1 on the
# snapshot with an RDMA NIC (its netdev ibp24s0: vmtest/nic), a dummy netdev of that name
# stands in for the NIC, and a drop-in makes each run last (ExecStartPost=sleep) so that
# the second netdev appears inside a run, after it placed the interrupts.  An interrupt
# moved onto an isolated CPU at that moment is put back only by a later run.  All under
# /run: gone at the reboot.
mkdir -p /run/udev/rules.d /run/systemd/system/hostc-tuning.service.d
cp /root/vmtest/nic/systemd/etc/udev/rules.d/90-hostc-tuning.rules /run/udev/rules.d/
printf '[Service]\nExecStartPost=/bin/sleep 20\n' >/run/systemd/system/hostc-tuning.service.d/99-vmtest-slow.conf
systemctl daemon-reload
udevadm control --reload
runs() { journalctl -b -u hostc-tuning.service -o cat --no-pager | grep -c '^hostc-tuning: done'; }
in_post() { # the run of hostc-tuning now going is in its ExecStartPost sleep
    c=$(systemctl show -p ControlPID --value hostc-tuning.service)
    [ "${c:-0}" != 0 ] && [ "$(cat /proc/$c/comm 2>/dev/null)" = sleep ]
}
{
    r0=$(runs)
    ip link add ibp24s0 type dummy
    i=0; until in_post || [ $i -ge 120 ]; do sleep 1; i=$((i + 1)); done
    echo "first-run-in-progress $(in_post && echo yes || echo no) after ${i}s, runs $r0 -> $(runs)"
    moved=""
    for f in /proc/irq/[0-9]*/smp_affinity_list; do
        n=${f#/proc/irq/}; n=${n%%/*}
        [ "$(cat $f)" = 2 ] && continue
        if echo 2 2>/dev/null >$f && [ "$(cat $f)" = 2 ]; then moved=$n; break; fi
    done
    echo "planted irq ${moved:-none} on cpu 2"
    r1=$(runs)
    ip link del ibp24s0
    ip link add ibp24s0 type dummy
    echo "second-add during-run $(in_post && echo yes || echo no)"
    i=0; until [ "$(runs)" -gt "$r1" ] && ! in_post || [ $i -ge 180 ]; do sleep 1; i=$((i + 1)); done
    echo "runs-after-second-add $(( $(runs) - r1 )) after ${i}s"
    [ -n "$moved" ] && echo "irq-after $(cat /proc/irq/$moved/smp_affinity_list)"
    journalctl -b -u systemd-udevd.service -o cat --no-pager | grep -c 'hostc-tuning-udev.*failed' | sed 's/^/udev-failures /'
} >$R/nic-during-run 2>&1
ip link del ibp24s0
rm -f /run/udev/rules.d/90-hostc-tuning.rules /run/systemd/system/hostc-tuning.service.d/99-vmtest-slow.conf
udevadm control --reload
systemctl daemon-reload
systemctl restart hostc-tuning.service
# v1's apply.sh again (nothing changed) and hostc-tuning run twice: no manager reload
# (PID 1 logs "Reloading" for each) and the workload keeps its process (issue 30)
reloads() { journalctl -b _PID=1 -o cat --no-pager | grep -c '^Reloading'; }
n0=$(reloads)
echo "$pid" >$R/demo-pids
sh /root/vmtest/v1/rootfs/apply.sh >$R/reapply-v1.log 2>&1; echo $? >$R/reapply-v1.rc
systemctl restart hostc-tuning.service; systemctl restart hostc-tuning.service
systemctl show -p MainPID --value demo.service >>$R/demo-pids
echo $(( $(reloads) - n0 )) >$R/reloads-v1
# Issue 30's three kinds of update, in this boot, each followed by what happened (the
# test compares it with the disruption `hostc diff` computes for the same two builds):
# a sysctl only, one workload moved, then v2 (kernel arguments) before the reboot.
pids() { for u in demo.service demo2.service; do systemctl show -p MainPID --value $u; done | tr '\n' ' '; echo; }
update() { # NAME: apply its tree; the workloads' PIDs and PID 1's reload count after
    sh /root/vmtest/$1/rootfs/apply.sh >$R/apply-$1.log 2>&1; echo $? >$R/apply-$1.rc
    pids >$R/pids-after-$1
    echo $(( $(reloads) - n0 )) >$R/reloads-after-$1
}
pids >$R/pids-before-updates
update v1-sysctl
sysctl -n vm.swappiness >$R/swappiness-v1-sysctl
update v1-place
grep Cpus_allowed_list /proc/$(systemctl show -p MainPID --value demo2.service)/status >$R/demo2-v1-place
update v2
systemctl --no-block reboot
