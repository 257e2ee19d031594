#!/bin/sh
# ibtracer-exporter: before the files go (deb prerm, rpm %preun). On a
# removal (deb "remove", rpm 0), not an upgrade: stop and disable the service.
set -e

case "$1" in
remove | 0) ;;
*) exit 0 ;;
esac
if command -v systemctl > /dev/null 2>&1; then
	systemctl --no-reload disable ibtracer_exporter.service || true
	if [ -d /run/systemd/system ]; then
		systemctl stop ibtracer_exporter.service || true
	fi
fi
exit 0
