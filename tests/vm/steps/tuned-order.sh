# TuneD's profile applied before a kubelet starts (issue 52, F3), in the lifecycle VM's
# TuneD scenario.  Sourced by step5.sh and step6.sh, which call one function each:
#   boot 5, after the TuneD owner's apply.sh and the copy of tuned.log, before the
#   reboot:  . /root/vmtest/steps/tuned-order.sh; tuned_order_install
#   boot 6, before step6.sh truncates /var/log/tuned/tuned.log:
#            . /root/vmtest/steps/tuned-order.sh; tuned_order_record
# Results under /root/results/tuned-order/ (tests/vm/test_vm_tuned_order.py).

# tuned_order_install: a stand-in kubelet.service, enabled, ordered by nothing of its own
# (only hostc-tuned-ready.service's Before= holds it back), whose command records what it
# finds when systemd starts it; and an empty tuned.log, so that an "applied" line there
# at boot 6 is boot 6's own.
tuned_order_install() {
    O=/root/results/tuned-order
    mkdir -p $O
    cat >/usr/local/sbin/vmtest-kubelet <<'KUBELET'
#!/bin/sh
# A stand-in kubelet (tests/vm/steps/tuned-order.sh): what it finds as systemd starts it.
O=/run/vmtest-tuned-order
mkdir -p $O
cut -d' ' -f1 /proc/uptime >$O/kubelet-uptime
systemctl is-active hostc-tuned-ready.service >$O/ready-at-kubelet 2>&1
systemctl is-active tuned.service >$O/tuned-at-kubelet 2>&1
busctl --timeout=5 call com.redhat.tuned /Tuned com.redhat.tuned.control active_profile >$O/profile-at-kubelet 2>&1
grep -c "static tuning from profile 'hostc' applied" /var/log/tuned/tuned.log >$O/applied-at-kubelet 2>&1
cat /sys/kernel/mm/transparent_hugepage/defrag >$O/defrag-at-kubelet 2>&1
exit 0
KUBELET
    chmod 0755 /usr/local/sbin/vmtest-kubelet
    cat >/etc/systemd/system/kubelet.service <<'UNIT'
# A stand-in for the kubelet package's unit (tests/vm/steps/tuned-order.sh): no ordering
# of its own, as the package's unit has none against TuneD.
[Unit]
Description=kubelet: The Kubernetes Node Agent (stand-in)

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/vmtest-kubelet

[Install]
WantedBy=multi-user.target
UNIT
    {
        systemctl daemon-reload &&
            systemctl enable kubelet.service &&
            systemctl is-enabled hostc-tuned-ready.service
    } >$O/install.log 2>&1
    echo $? >$O/install.rc
    : >/var/log/tuned/tuned.log
}

# tuned_order_record: what the stand-in saw, systemd's stamps of the three units, the
# wait's own journal, TuneD's "applied" line of this boot and the chain that ordered the
# kubelet.  (step6.sh's audit.json and verify.log hold the new rows' read-back.)
tuned_order_record() {
    O=/root/results/tuned-order
    mkdir -p $O
    cp /run/vmtest-tuned-order/* $O/ 2>/dev/null
    for u in tuned.service hostc-tuned-ready.service kubelet.service; do
        systemctl show -p ActiveState -p Result -p ActiveEnterTimestampMonotonic \
            -p InactiveExitTimestampMonotonic -p After "$u" >"$O/show-$u" 2>&1
    done
    journalctl -b -u hostc-tuned-ready.service -o cat --no-pager >$O/ready.log 2>&1
    grep "static tuning from profile" /var/log/tuned/tuned.log >$O/applied.log 2>&1
    systemd-analyze critical-chain kubelet.service >$O/critical-chain 2>&1
}
