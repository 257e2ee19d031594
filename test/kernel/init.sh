#!/bin/busybox sh
# /init of a real-kernel test guest (test/kernel/run.sh). Role a hosts
# the agent in an exporter; role b runs the checks against it and against
# its own kernel. Every verdict is one console line "KT PASS|FAIL <check>
# <detail>"; "KT DONE" ends b's run.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
exec > /dev/console 2>&1
role=$(sed -n 's/.*kt\.role=\([a-z]*\).*/\1/p' /proc/cmdline)
peer=$(sed -n 's/.*kt\.peer=\([0-9a-f:]*\).*/\1/p' /proc/cmdline)
hostname "kt-$role"
echo "KT BOOTED $role uptime $(cut -d' ' -f1 /proc/uptime)"

pass() { echo "KT PASS $*"; }
fail() { echo "KT FAIL $*"; }
finish() { echo "KT DONE $role uptime $(cut -d' ' -f1 /proc/uptime)"; sync; poweroff -f; }

for m in $(cat /etc/modules); do
	insmod /lib/modules/$m.ko || fail "insmod_$m"
done
ip link set lo up
ip link set eth0 up
ll=/sys/class/infiniband/rxe0/ports/1/link_layer

# waitfor SECONDS CMD...: until CMD succeeds.
waitfor() {
	n=$(($1 * 5))
	shift
	while [ $n -gt 0 ]; do
		"$@" > /dev/null 2>&1 && return 0
		usleep 200000
		n=$((n - 1))
	done
	return 1
}
ll6() { ip -6 addr show dev eth0 scope link | grep -q 'inet6 fe80' && ! ip -6 addr show dev eth0 | grep -q tentative; }
active() { grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state && [ -e /dev/infiniband/umad0 ]; }
addrxe() {
	rdma link add rxe0 type rxe netdev eth0 || return 1
	waitfor 30 active
}
ibmount() { echo InfiniBand > /tmp/link_layer && mount --bind /tmp/link_layer $ll; }
metric() { wget -q -O - http://127.0.0.1:9684/metrics 2>/dev/null | grep "^$1" ; }

waitfor 30 ll6 || fail "ipv6_link_local no link-local address on eth0"
if ! addrxe; then
	fail "rxe_device rdma link add rxe0 failed"
	{ ls /sys/class/net /sys/class/infiniband; lsmod; dmesg | tail -15; } 2>&1 | sed 's/^/KT LOG /'
	finish
fi
pass "rxe_device rxe0 on eth0: link_layer $(cat $ll), gid0 $(cat /sys/class/infiniband/rxe0/ports/1/gids/0), uptime $(cut -d' ' -f1 /proc/uptime)"

if [ "$role" = a ]; then
	ibmount
	ibtracer_exporter --config.file=/etc/kt.yml --web.listen-address=127.0.0.1:9684 --device.retry-interval=1s > /tmp/exporter.log 2>&1 &
	if waitfor 60 metric 'ibtracer_device_up 1'; then
		pass "agent_registration the exporter's agent is up (classes 0x30, 0x32 by REGISTER_AGENT2, after ENABLE_PKEY)"
	else
		fail "agent_registration $(tail -3 /tmp/exporter.log)"
	fi
	probe conflict
	echo "KT READY a"
	while true; do sleep 60; done
fi

# Role b. The RoCE message first: the port as the kernel shows it.
probe open
ibtracer_exporter --config.file=/etc/kt.yml --web.listen-address=127.0.0.1:9684 --device.retry-interval=1s --log.level=debug > /tmp/roce.log 2>&1 &
pid=$!
sleep 30
reason=$(metric 'ibtracer_device_down_reason')
kill $pid
wait $pid 2> /dev/null
errs=$(grep -c 'level=error' /tmp/roce.log)
if [ "$errs" -ge 1 ] && [ "$errs" -le 2 ] && grep -q 'rxe0 port 1 is RoCE' /tmp/roce.log && [ "$reason" = 'ibtracer_device_down_reason{reason="roce_port"} 1' ]; then
	pass "roce_exporter $errs error line(s) in 30 s ($(grep -c 'level=debug' /tmp/roce.log) debug), metric: $reason"
else
	fail "roce_exporter errors=$errs reason=[$reason] log: $(grep level=error /tmp/roce.log | head -2)"
fi

ibmount
chmod 600 /dev/infiniband/umad0
probe perm
probe ask -gid "$peer" -wait 120s
probe timeout -gid "$peer"
probe refused -gid "$peer"
probe nosmi -gid "$peer"
# infiniband-diags' own ibping server, asked by our client on this
# guest's own GID (the kernel loops it back): an independent reader of our
# ping request. It receives it and builds its answer with the hostname;
# libibmad then addresses the answer to the requester's LID without the GRH
# (dlid 0), which this port refuses, so no answer comes back by GID.
ibping -S -d -d > /tmp/ibping.log 2>&1 &
ipid=$!
probe ping -gid "$(cat /sys/class/infiniband/rxe0/ports/1/gids/0)" -want "$(hostname).$(cat /proc/sys/kernel/domainname)"
kill $ipid
wait $ipid 2> /dev/null
if grep -q 'umad_recv: mad received by agent' /tmp/ibping.log && grep -q 'mad_respond_via: qp 0x1 class 0x32 method 129' /tmp/ibping.log; then
	pass "ibping_server infiniband-diags' ibping -S received our ping and answered it ($(grep -m1 'umad_set_addr' /tmp/ibping.log | sed 's/.*umad_set_addr: //'))"
else
	fail "ibping_server ibping -S did not receive our ping: $(tail -3 /tmp/ibping.log)"
fi

# Device removal and return under a running exporter.
ibtracer_exporter --config.file=/etc/kt.yml --web.listen-address=127.0.0.1:9684 --device.retry-interval=1s > /tmp/exporter.log 2>&1 &
pid=$!
if waitfor 60 metric 'ibtracer_device_up 1'; then
	umount $ll
	rdma link delete rxe0
	if waitfor 30 metric 'ibtracer_device_up 0'; then
		down=$(metric 'ibtracer_device_down_reason')
		addrxe && ibmount
		if waitfor 60 metric 'ibtracer_device_up 1'; then
			pass "device_removal device_up 1 -> 0 ($down) -> 1 after rxe0 was deleted and added again"
		else
			fail "device_removal device_up stayed 0 after rxe0 came back: $(grep -E 'level=(error|warn)' /tmp/exporter.log | tail -3)"
		fi
	else
		fail "device_removal device_up stayed 1 after rxe0 was deleted"
	fi
else
	fail "device_removal the exporter did not open the device: $(tail -3 /tmp/exporter.log)"
fi
kill $pid
wait $pid 2> /dev/null
grep -E 'level=(error|warn)' /tmp/exporter.log | sed 's/^/KT LOG /' | head -20
finish
