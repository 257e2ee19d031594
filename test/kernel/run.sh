#!/usr/bin/env bash
# Boots two QEMU guests (software emulation, no KVM) on Debian's kernel,
# with Soft-RoCE (rdma_rxe) and ib_umad, and runs the real-kernel checks
# of docs/protocol.md ("Tested against the real kernel") in them.
#
#   test/kernel/run.sh WORKDIR
#
# Writes WORKDIR/a.log and WORKDIR/b.log (the guests' consoles: lines
# "KT PASS <check> <detail>" / "KT FAIL ..."), and prints timings as
# "KT TIME <what> <seconds>". Exit 0 when guest b finished (the checks'
# verdicts are in the logs), 77 when QEMU cannot run here at all (the
# caller skips, loudly), 1 on any other failure.
#
# Environment: IBTRACER_KERNEL_CACHE (default ~/.cache/ibtracer-kernel-test)
# keeps the kernel and modules between runs; KT_PORT, the loopback TCP
# port of the guests' link (QEMU's -netdev socket on 127.0.0.1; the
# guests' traffic never leaves QEMU); KT_TIMEOUT, seconds for the whole
# run (default 300).
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
work=${1:?usage: run.sh WORKDIR}
mkdir -p "$work"
work=$(cd "$work" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${IBTRACER_KERNEL_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/ibtracer-kernel-test}
port=${KT_PORT:-$((20000 + RANDOM % 20000))}
limit=${KT_TIMEOUT:-300}
t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }
skip() { echo "KT SKIP $*" >&2; exit 77; }
die() { echo "run.sh: $*" >&2; exit 1; }

[ "$(uname -m)" = x86_64 ] || skip "the guests are x86_64 and this machine is $(uname -m)"
command -v qemu-system-x86_64 > /dev/null || skip "qemu-system-x86_64 is not installed (scripts/deps.sh installs qemu-system-x86)"
qemu-system-x86_64 -accel help 2>/dev/null | grep -qx tcg || skip "this QEMU has no TCG (software emulation)"
for tool in busybox cpio rdma ibping go; do
	command -v $tool > /dev/null || die "$tool is missing: run scripts/deps.sh"
done
busybox=$(command -v busybox)
# Debian's busybox-static is linked statically; the guests have no libc.
ldd "$busybox" > /dev/null 2>&1 && die "$busybox is not static: install busybox-static (scripts/deps.sh)"

# The kernel: Debian's, through apt, cached by package name.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}' || true)
if [ -z "$pkg" ]; then
	pkg=$(ls "$cache" 2>/dev/null | grep '^linux-image-' | tail -1 || true)
	[ -n "$pkg" ] || die "apt knows no linux-image-amd64 and nothing is cached in $cache: run apt-get update (scripts/deps.sh --always)"
fi
kdir=$cache/$pkg
# rdma_rxe's ICRC needs a crc32 shash: crc32_generic (QEMU's TCG CPU has
# no PCLMUL for crc32-pclmul).
mods="crc32_generic ib_core ib_uverbs udp_tunnel ip6_udp_tunnel rdma_rxe ib_umad e1000"
have() { for m in $mods; do [ -f "$kdir/modules/$m.ko" ] || return 1; done; [ -f "$kdir/vmlinuz" ]; }
if ! have; then
	echo "run.sh: fetching $pkg with apt into $cache" >&2
	dl=$(mktemp -d "$cache.dl.XXXXXX" 2> /dev/null || { mkdir -p "$(dirname "$cache")" && mktemp -d "$cache.dl.XXXXXX"; })
	trap 'rm -rf "$dl"' EXIT
	chmod 755 "$dl" # apt's download user reads it
	(cd "$dl" && apt-get download "$pkg" > /dev/null) || die "apt-get download $pkg failed"
	dpkg-deb -x "$dl"/*.deb "$dl/x"
	mkdir -p "$kdir.tmp/modules"
	cp "$dl"/x/boot/vmlinuz-* "$kdir.tmp/vmlinuz"
	for m in $mods; do
		f=$(find "$dl/x/lib/modules" -name "$m.ko*" | head -1)
		[ -n "$f" ] || die "$pkg has no module $m"
		case $f in
		*.ko.xz) xz -dc "$f" > "$kdir.tmp/modules/$m.ko" ;;
		*.ko.zst) zstd -qdc "$f" > "$kdir.tmp/modules/$m.ko" ;;
		*) cp "$f" "$kdir.tmp/modules/$m.ko" ;;
		esac
	done
	rm -rf "$kdir"
	mv "$kdir.tmp" "$kdir"
	rm -rf "$dl"
	trap - EXIT
fi
echo "KT TIME kernel_ready $(elapsed)"

# Our static binaries.
mkdir -p "$work/root/proc" "$work/root/sys" "$work/root/dev" "$work/root/tmp" "$work/root/bin" "$work/root/lib/modules" "$work/root/lib64" "$work/root/lib/x86_64-linux-gnu" "$work/root/etc"
(cd "$repo" && CGO_ENABLED=0 go build -trimpath -o "$work/root/bin/ibtracer_exporter" . &&
	CGO_ENABLED=0 go build -trimpath -o "$work/root/bin/probe" ./test/kernel/probe) || die "go build failed"
echo "KT TIME binaries_built $(elapsed)"

# The initramfs: busybox, rdma (iproute2) with its libraries, the modules,
# the binaries, and init.sh as /init.
cp "$busybox" "$work/root/bin/busybox"
cp "$(command -v rdma)" "$work/root/bin/rdma"
cp "$(command -v ibping)" "$work/root/bin/ibping"
for lib in $(ldd "$(command -v rdma)" "$(command -v ibping)" | awk '/=>/ {print $3} /ld-linux/ {print $1}' | sort -u); do
	case $lib in
	/lib64/*) cp -L "$lib" "$work/root/lib64/" ;;
	*) cp -L "$lib" "$work/root/lib/x86_64-linux-gnu/" ;;
	esac
done
cp "$kdir"/modules/*.ko "$work/root/lib/modules/"
cp "$here/init.sh" "$work/root/init"
chmod +x "$work/root/init"
printf 'interval: 5s\ndestinations: []\n' > "$work/root/etc/kt.yml"
echo "$mods" > "$work/root/etc/modules"
(cd "$work/root" && find . | cpio -o -H newc --quiet | gzip -1 > "$work/initrd.gz")
echo "KT TIME initramfs_built $(elapsed)"

# Two guests on one virtual link: a listens on a loopback port, b connects.
guest() { # role mac peer-mac netdev
	qemu-system-x86_64 -accel tcg -M pc -m 512 -smp 1 -nographic -no-reboot -monitor none \
		-serial "file:$work/$1.log" -kernel "$kdir/vmlinuz" -initrd "$work/initrd.gz" \
		-append "console=ttyS0 loglevel=3 panic=-1 kt.role=$1 kt.peer=$3" \
		-netdev "$4" -device "e1000,netdev=n0,mac=$2,romfile=" > "$work/$1.qemu" 2>&1 &
	echo $!
}
gid_of() { # the link-local GID (EUI-64) of a MAC
	IFS=: read -r a b c d e f <<< "$1"
	printf 'fe80:0000:0000:0000:%02x%s:%sff:fe%s:%s%s\n' $((0x$a ^ 2)) "$b" "$c" "$d" "$e" "$f"
}
maca=52:54:00:12:34:01
macb=52:54:00:12:34:02
tb=$(date +%s.%N)
pida=$(guest a $maca "$(gid_of $macb)" "socket,id=n0,listen=127.0.0.1:$port")
sleep 1
pidb=$(guest b $macb "$(gid_of $maca)" "socket,id=n0,connect=127.0.0.1:$port")
cleanup() { kill "$pida" "$pidb" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT
deadline=$(($(date +%s) + limit))
while kill -0 "$pidb" 2>/dev/null; do
	grep -q '^KT DONE' "$work/b.log" 2>/dev/null && break
	if [ "$(date +%s)" -ge "$deadline" ]; then
		echo "run.sh: guest b did not finish within ${limit}s" >&2
		cleanup
		exit 1
	fi
	sleep 1
done
sleep 1
cleanup
trap - EXIT
echo "KT TIME guests_run $(awk -v a="$tb" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')"
echo "KT TIME total $(elapsed)"
grep -q '^KT DONE' "$work/b.log" || die "guest b stopped before the end; see $work/b.log and $work/b.qemu"
