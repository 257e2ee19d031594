#!/usr/bin/env bash
# Boots two QEMU guests (software emulation, no KVM) on Debian's kernel,
# with Soft-RoCE (rdma_rxe) and ib_umad, and runs the real-kernel checks
# of docs/protocol.md ("Tested against the real kernel") in them.
#
#   test/kernel/run.sh WORKDIR [bootorder]
#
# With bootorder, fetches the kernel and runs bootorder.sh instead: one
# guest with systemd as PID 1 and the packaged unit started before
# ib_umad is loaded (WORKDIR/c.log).
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
work=${1:?usage: run.sh WORKDIR [bootorder]}
mode=${2:-pair}
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

# The kernel: Debian's, through apt, cached by package name. Only the
# newest is kept; when apt cannot fetch it, a complete older one is used.
# rdma_rxe's ICRC needs a crc32 shash: crc32_generic (QEMU's TCG CPU has
# no PCLMUL for crc32-pclmul).
mods="crc32_generic ib_core ib_uverbs udp_tunnel ip6_udp_tunnel rdma_rxe ib_umad e1000"
have() { for m in $mods; do [ -s "$1/modules/$m.ko" ] || return 1; done; [ -s "$1/vmlinuz" ]; }
fetch() { # package directory
	local dl f m
	dl=$(mktemp -d "$cache/.dl.XXXXXX") || return 1
	chmod 755 "$dl" # apt's download user writes into it
	if ! (cd "$dl" && apt-get download "$1" > /dev/null); then
		rm -rf "$dl"
		return 1
	fi
	dpkg-deb -x "$dl"/*.deb "$dl/x" && mkdir -p "$dl/k/modules" && cp "$dl"/x/boot/vmlinuz-* "$dl/k/vmlinuz" || { rm -rf "$dl"; return 1; }
	for m in $mods; do
		f=$(find "$dl/x/lib/modules" -name "$m.ko*" | head -1)
		[ -n "$f" ] || { echo "run.sh: $1 has no module $m" >&2; rm -rf "$dl"; return 1; }
		case $f in
		*.ko.xz) xz -dc "$f" > "$dl/k/modules/$m.ko" ;;
		*.ko.zst) zstd -qdc "$f" > "$dl/k/modules/$m.ko" ;;
		*) cp "$f" "$dl/k/modules/$m.ko" ;;
		esac || { echo "run.sh: $1: cannot unpack $m" >&2; rm -rf "$dl"; return 1; }
	done
	rm -rf "$2"
	mv "$dl/k" "$2"
	rm -rf "$dl"
}
mkdir -p "$cache"
exec 9> "$cache/.lock"
flock 9 2> /dev/null || true # one fetch at a time on this machine
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}' || true)
kdir=
if [ -n "$pkg" ]; then
	if have "$cache/$pkg"; then
		kdir=$cache/$pkg
	else
		echo "run.sh: fetching $pkg with apt into $cache" >&2
		if fetch "$pkg" "$cache/$pkg"; then
			kdir=$cache/$pkg
			for old in "$cache"/linux-image-*; do
				[ "$old" = "$kdir" ] || rm -rf "$old"
			done
		else
			echo "run.sh: apt-get download $pkg failed" >&2
		fi
	fi
fi
if [ -z "$kdir" ]; then
	for old in "$cache"/linux-image-*; do
		have "$old" && kdir=$old
	done
	[ -n "$kdir" ] || die "no kernel: apt knows no linux-image-amd64 or could not fetch it, and nothing is cached in $cache (run scripts/deps.sh --always: apt-get update)"
	echo "run.sh: using the cached $(basename "$kdir")" >&2
fi
exec 9>&-
echo "KT TIME kernel_ready $(elapsed)"
if [ "$mode" = bootorder ]; then
	exec bash "$here/bootorder.sh" "$work" "$kdir"
fi

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
