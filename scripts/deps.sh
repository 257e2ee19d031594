#!/usr/bin/env bash
# Installs the Debian packages the tests need: the only list of them.
#   scripts/deps.sh           install what is missing (nothing to do: no apt at all)
#   scripts/deps.sh --always  apt-get update and install them all (CI)
#   libibmad-dev, libibumad-dev        cgo cross-checks against libibmad / libibumad
#   libopensm-dev                      cgo cross-check of the SA constants against OpenSM's iba/ib_types.h
#   make, gcc, linux-libc-dev, pkg-config  the test command, cgo and rdma/ib_user_mad.h
#   ibsim-utils, libumad2sim0          the upstream InfiniBand simulator
#   opensm, infiniband-diags           the SM and the stock diagnostics (oracles)
#   ibutils                            ibdiagpath (its behaviour under ibsim is pinned by a test)
#   prometheus, prometheus-alertmanager  promtool, and the real Prometheus and Alertmanager
#   victoria-metrics                   vmalert (1.79): every rule file loads in it (-dryRun); victoria-metrics, vmagent
#   systemd                            systemd-analyze verify of the shipped unit
#   groff-base                         groff -ww checks the man pages made from docs/cli.md and docs/exporter.md
#   rpm, debootstrap                   the packages' checks: rpm -qp, and a Debian root to install the .deb in;
#                                      the real-kernel test's systemd guest (its root)
#   chromium, fonts-dejavu-core        the pages rendered in headless chromium (TestPagesInChromium, scripts/render-pages.sh)
#   qemu-system-x86, busybox-static, cpio, iproute2, xz-utils, zstd  the real-kernel test (test/kernel): QEMU guests on
#                                      Debian's kernel (fetched there with apt-get download), busybox and
#                                      rdma (iproute2) in their initramfs
set -euo pipefail
pkgs=(make gcc libc6-dev linux-libc-dev pkg-config libibmad-dev libibumad-dev libopensm-dev
	ibsim-utils libumad2sim0 opensm infiniband-diags ibutils prometheus prometheus-alertmanager victoria-metrics systemd groff-base
	rpm debootstrap chromium fonts-dejavu-core qemu-system-x86 busybox-static cpio iproute2 xz-utils zstd)
missing=()
if [ "${1:-}" = "--always" ]; then
	missing=("${pkgs[@]}")
else
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "ok installed" || missing+=("$p")
	done
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get > /dev/null; then
	echo "deps: not a Debian system; the tests need these (Debian names): ${missing[*]}" >&2
	exit 0
fi
SUDO=""
[ "$(id -u)" != 0 ] && SUDO="sudo"
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
