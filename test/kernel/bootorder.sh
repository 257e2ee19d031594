#!/usr/bin/env bash
# The boot-order guest of the real-kernel test (docs/packaging.md, "Boot
# order"): Debian's systemd and udev as PID 1 in a QEMU guest, the
# packaged unit, udev rule and sysusers.d file in place, and the unit
# started before ib_umad is loaded. bootorder-guest.sh, run by a unit
# ordered after ours, then loads the RDMA modules, makes a Soft-RoCE
# device and reports whether the service's device list lets it in.
#
#   test/kernel/bootorder.sh WORKDIR KERNELDIR
#
# Called by run.sh (run.sh WORKDIR bootorder), which fetches the kernel.
# Writes WORKDIR/c.log, the guest's console ("KT PASS|FAIL <check> ...").
# Exit 0 when the guest finished, 77 when it cannot run here (not root:
# debootstrap and the root's owners need it), 1 on any other failure.
#
# The Debian root (debootstrap minbase with systemd and udev, of this
# machine's suite from the mirror its APT sources name) is cached as a
# tarball beside the kernel: about 2 minutes the first time.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
work=${1:?usage: bootorder.sh WORKDIR KERNELDIR}
kdir=${2:?usage: bootorder.sh WORKDIR KERNELDIR}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${IBTRACER_KERNEL_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/ibtracer-kernel-test}
limit=${KT_TIMEOUT:-300}
t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }
skip() { echo "KT SKIP $*" >&2; exit 77; }
die() { echo "bootorder.sh: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "the systemd guest's root is built with debootstrap and keeps its files' owners: needs root"
for tool in debootstrap busybox cpio rdma go; do
	command -v $tool > /dev/null || die "$tool is missing: run scripts/deps.sh"
done

# The Debian root, cached.
suite=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)
[ -n "$suite" ] && grep -qx 'ID=debian' /etc/os-release || die "/etc/os-release names no Debian release"
mirror=$(apt-get indextargets --format '$(SITE)' "Codename: $suite" 'Identifier: Packages' 2> /dev/null | head -1)
[ -n "$mirror" ] || die "no APT source for $suite (apt-get indextargets)"
tarball=$cache/debroot-$suite-systemd.tar
mkdir -p "$cache"
exec 9> "$cache/.lock"
flock 9 2> /dev/null || true
if [ ! -s "$tarball" ]; then
	echo "bootorder.sh: debootstrap $suite from $mirror into $tarball" >&2
	boot=$(mktemp -d "$cache/.root.XXXXXX")
	chmod 0755 "$boot" # the root directory's mode, as tar keeps it
	trap 'rm -rf "$boot"' EXIT
	debootstrap --variant=minbase --include=systemd,udev "$suite" "$boot" "$mirror" > "$work/debootstrap.log" 2>&1 ||
		die "debootstrap failed; see $work/debootstrap.log"
	rm -rf "$boot"/usr/share/doc "$boot"/usr/share/man "$boot"/usr/share/locale "$boot"/usr/share/info \
		"$boot"/var/cache/apt "$boot"/var/lib/apt/lists
	tar -cf "$tarball.tmp" -C "$boot" . && mv "$tarball.tmp" "$tarball"
	rm -rf "$boot"
	trap - EXIT
fi
exec 9>&-
echo "KT TIME root_ready $(elapsed)"

# The guest's root: Debian's, with the package's files where the package
# puts them (packaging/nfpm.yaml) and the exporter built static.
r=$work/c-root
rm -rf "$r"
mkdir -p "$r"
tar -xf "$tarball" -C "$r"
chmod 0755 "$r"
(cd "$repo" && CGO_ENABLED=0 go build -trimpath -o "$r/usr/bin/ibtracer_exporter" .) || die "go build failed"
install -m 0644 "$repo/examples/systemd/ibtracer_exporter.service" "$r/usr/lib/systemd/system/ibtracer_exporter.service"
install -m 0644 "$repo/packaging/91-ibtracer-umad.rules" "$r/usr/lib/udev/rules.d/91-ibtracer-umad.rules"
install -m 0644 "$repo/packaging/ibtracer_exporter.sysusers" "$r/usr/lib/sysusers.d/ibtracer_exporter.conf"
install -D -m 0644 "$repo/packaging/ibtracer.yml" "$r/etc/ibtracer_exporter/ibtracer.yml"
install -D -m 0644 "$repo/examples/systemd/ibtracer_exporter.default" "$r/etc/default/ibtracer_exporter"
# The arguments file is the site's: a 1 s retry (6 s for the RoCE port
# the exporter sees before the test shows it as InfiniBand) keeps the
# guest's run short.
sed -i 's/^IBTRACER_EXPORTER_ARGS="/&--device.retry-interval=1s /' "$r/etc/default/ibtracer_exporter"
grep -q '^IBTRACER_EXPORTER_ARGS="--device.retry-interval=1s ' "$r/etc/default/ibtracer_exporter" ||
	die "cannot set --device.retry-interval in the arguments file"
# Enabled, as `systemctl enable` does, with the test's unit after it.
mkdir -p "$r/etc/systemd/system/multi-user.target.wants"
ln -sf /usr/lib/systemd/system/ibtracer_exporter.service "$r/etc/systemd/system/multi-user.target.wants/"
install -m 0755 "$here/bootorder-guest.sh" "$r/usr/local/sbin/kt-bootorder"
cat > "$r/etc/systemd/system/kt-bootorder.service" << 'EOF'
[Unit]
Description=real-kernel test: ib_umad loads after ibtracer_exporter.service started
After=ibtracer_exporter.service
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/kt-bootorder
EOF
ln -sf /etc/systemd/system/kt-bootorder.service "$r/etc/systemd/system/multi-user.target.wants/"
# The console is the test's: no getty on it.
ln -sf /dev/null "$r/etc/systemd/system/serial-getty@ttyS0.service"
ln -sf /dev/null "$r/etc/systemd/system/getty.target"
# busybox (static) and rdma (iproute2) with its libraries; the modules
# where only kt-bootorder finds them: nothing else loads them.
cp "$(command -v busybox)" "$r/usr/local/bin/busybox"
cp "$(command -v rdma)" "$r/usr/local/bin/rdma"
for lib in $(ldd "$(command -v rdma)" | awk '/=>/ {print $3}'); do
	[ -e "$r$lib" ] || cp -L "$lib" "$r/lib/x86_64-linux-gnu/"
done
mkdir -p "$r/usr/local/lib/kt-modules"
cp "$kdir"/modules/*.ko "$r/usr/local/lib/kt-modules/"
ln -sf /lib/systemd/systemd "$r/init"
(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1 > "$work/c.gz")
rm -rf "$r"
echo "KT TIME initramfs_built $(elapsed)"

# The guest: systemd as /init from the initramfs; its NIC on QEMU's user
# network with restrict=on (nothing leaves QEMU).
tb=$(date +%s.%N)
qemu-system-x86_64 -accel tcg -M pc -m 1024 -smp 1 -nographic -no-reboot -monitor none \
	-serial "file:$work/c.log" -kernel "$kdir/vmlinuz" -initrd "$work/c.gz" \
	-append "console=ttyS0 loglevel=3 panic=-1 net.ifnames=0 systemd.show_status=0" \
	-nic user,model=e1000,restrict=on,mac=52:54:00:12:34:03 > "$work/c.qemu" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2> /dev/null || true; wait 2> /dev/null || true; }
trap cleanup EXIT
deadline=$(($(date +%s) + limit))
while kill -0 "$pid" 2> /dev/null; do
	grep -qa 'KT DONE' "$work/c.log" 2> /dev/null && break
	if [ "$(date +%s)" -ge "$deadline" ]; then
		echo "bootorder.sh: guest c did not finish within ${limit}s" >&2
		exit 1
	fi
	sleep 1
done
sleep 1
cleanup
trap - EXIT
echo "KT TIME guest_run $(awk -v a="$tb" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')"
echo "KT TIME total $(elapsed)"
grep -qa 'KT DONE' "$work/c.log" || die "guest c stopped before the end; see $work/c.log and $work/c.qemu"
