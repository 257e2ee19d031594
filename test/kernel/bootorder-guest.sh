#!/usr/local/bin/busybox sh
# kt-bootorder in the boot-order guest (test/kernel/bootorder.sh): a
# oneshot unit ordered after ibtracer_exporter.service. It checks that
# the service started before ib_umad was loaded, loads the RDMA modules,
# makes a Soft-RoCE device and reports, one console line each:
#   bootorder_late      the service was active and ib_umad not loaded
#   bootorder_udev      the packaged udev rule gave umad0 to the ibtracer group
#   bootorder_cgroup    from inside the service's cgroup umad0 opens (as
#                       root: only the device list systemd attached when
#                       the service started can refuse it); /dev/kmsg,
#                       which the unit does not allow, is refused there
#   bootorder_exporter  the running service opens the device:
#                       ibtracer_device_up 1, without a restart
B=/usr/local/bin/busybox
exec > /dev/ttyS0 2>&1
unit=ibtracer_exporter.service
cg=/sys/fs/cgroup/system.slice/$unit
pass() { echo "KT PASS $*"; }
fail() { echo "KT FAIL $*"; }
uptime() { $B cut -d' ' -f1 /proc/uptime; }
metric() { $B wget -q -O - http://127.0.0.1:9684/metrics 2> /dev/null | $B grep "^$1"; }
waitfor() { # SECONDS CMD...: until CMD succeeds
	n=$(($1 * 5))
	shift
	while [ $n -gt 0 ]; do
		"$@" > /dev/null 2>&1 && return 0
		$B usleep 200000
		n=$((n - 1))
	done
	return 1
}
finish() {
	journalctl -b -u $unit --no-pager -o cat | $B tail -8 | $B sed 's/^/KT LOG /'
	echo "KT DONE c uptime $(uptime)"
	systemctl poweroff --force --force
}
echo "KT BOOTED c uptime $(uptime) systemd $(systemctl --version | $B head -1)"
systemctl show -p DevicePolicy -p DeviceAllow $unit | $B sed 's/^/KT INFO /'

state=$(systemctl show -P ActiveState $unit)
started=$(systemctl show -P ExecMainStartTimestampMonotonic $unit)
if [ "$state" = active ] && [ ! -e /sys/module/ib_umad ] && ! $B grep -q infiniband_mad /proc/devices; then
	pass "bootorder_late $unit $state since ${started} us after boot; ib_umad not loaded, no infiniband_mad in /proc/devices"
else
	fail "bootorder_late $unit $state; ib_umad loaded: $([ -e /sys/module/ib_umad ] && echo yes || echo no)"
	finish
fi

for m in e1000 crc32_generic ib_core ib_uverbs udp_tunnel ip6_udp_tunnel rdma_rxe ib_umad; do
	$B insmod /usr/local/lib/kt-modules/$m.ko || fail "insmod_$m"
done
echo "KT INFO ib_umad loaded at $(uptime) s: $($B grep infiniband_mad /proc/devices | $B tr '\n' ' ')"
$B ip link set eth0 up
if ! rdma link add rxe0 type rxe netdev eth0 || ! waitfor 30 $B test -c /dev/infiniband/umad0; then
	fail "bootorder_device no /dev/infiniband/umad0: $($B ls /sys/class/infiniband /dev/infiniband 2>&1 | $B tr '\n' ' ')"
	finish
fi
# Soft-RoCE's port is Ethernet, which the exporter refuses: it is shown as
# InfiniBand, as in the other guests (init.sh).
ll=/sys/class/infiniband/rxe0/ports/1/link_layer
echo InfiniBand > /tmp/link_layer && $B mount --bind /tmp/link_layer $ll

gid=$($B awk -F: '$1 == "ibtracer" {print $3}' /etc/group)
waitfor 10 $B sh -c "$B stat -c '%g %a' /dev/infiniband/umad0 | $B grep -qx '$gid 660'"
got=$($B stat -c '%g %a' /dev/infiniband/umad0)
if [ -n "$gid" ] && [ "$got" = "$gid 660" ]; then
	pass "bootorder_udev umad0 gid $gid (ibtracer) mode 0660"
else
	fail "bootorder_udev umad0 is '$got', want gid ${gid:-of ibtracer (none)} mode 660"
fi

# A shell moved into the service's cgroup opens the devices there.
incg() { $B sh -c "echo \$\$ > $cg/cgroup.procs && exec 3<> $1 && echo opened" 2>&1 | $B tail -1; }
umad=$(incg /dev/infiniband/umad0)
kmsg=$(incg /dev/kmsg)
if [ "$umad" = opened ] && [ "${kmsg%Operation not permitted}" != "$kmsg" ]; then
	pass "bootorder_cgroup in $unit's cgroup umad0: $umad; /dev/kmsg (not allowed): $kmsg"
else
	fail "bootorder_cgroup in $unit's cgroup umad0: $umad; /dev/kmsg (not allowed): $kmsg"
fi

if waitfor 90 metric 'ibtracer_device_up 1'; then
	pass "bootorder_exporter ibtracer_device_up 1 at $(uptime) s, $(systemctl show -P NRestarts $unit) restarts"
else
	fail "bootorder_exporter $(metric 'ibtracer_device_down_reason' | $B tr '\n' ' ')"
fi
finish
