# Boot 1: the guest as it was before hostc (probe, /etc, grub.cfg, /proc/cmdline), then
# the image-builder path: the rootfs tree of v1 + apply.sh, and a reboot.
R=/root/results
hostc probe -o $R/topology.toml; echo $? >$R/probe.rc
find /etc /usr/local /var/lib/hostc -xdev -type f 2>/dev/null | grep -v -e ^/etc/machine-id -e ^/etc/ld.so.cache | sort | xargs sha256sum >$R/pristine.sha
# the image's grub.cfg predates the harness's grub.d file (vmguests.HARNESS_CMDLINE):
# regenerated first, so that it is the host as it was that revert must give back
update-grub >$R/update-grub-0.log 2>&1
grep -E '^\s*linux\s' /boot/grub/grub.cfg | head -1 >$R/pristine-grub
cat /proc/cmdline >$R/pristine-cmdline
# Issue 53: `hostc measure` on the untuned guest (before apply.sh changes anything)
. /root/vmtest/steps/measure-untuned.sh
sh /root/vmtest/v1/rootfs/apply.sh >$R/apply-v1.log 2>&1; echo $? >$R/apply-v1.rc
# v1's modules-load.d file for the same host with a GPU and an RDMA NIC (vmguests.py
# RDMA_DEVICES): boot 2's systemd-modules-load reads it; step2.sh removes it again
install -D -m 0644 /root/vmtest/modules/modprobe/etc/modules-load.d/90-hostc.conf /etc/modules-load.d/90-hostc.conf
# v1's kubelet files as a kubeadm node (tests/vm/v1-kubelet.toml) beside stand-ins for
# the kubelet package's unit and kubeadm's drop-in (tests/vm/kubeadm): no kubelet runs;
# boot 2 reads back what the kubelet would be started with and read; step2.sh removes them again
K=/root/vmtest/kubelet/kubelet
# (the build installs the config staged, for hostc-kubelet-reset to put in place: here by hand)
install -D -m 0644 $K/var/lib/hostc/staged/etc/kubernetes/kubelet.conf.d/90-hostc.conf /etc/kubernetes/kubelet.conf.d/90-hostc.conf
install -D -m 0644 $K/etc/systemd/system/kubelet.service.d/90-hostc.conf /etc/systemd/system/kubelet.service.d/90-hostc.conf
install -D -m 0644 /root/vmtest/kubeadm/kubelet.service /usr/lib/systemd/system/kubelet.service
install -D -m 0644 /root/vmtest/kubeadm/10-kubeadm.conf /usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf
install -m 0755 /root/vmtest/kubeadm/kubelet /usr/bin/kubelet
systemctl --no-block reboot
