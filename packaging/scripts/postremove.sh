#!/bin/sh
# ibtracer-exporter: after the files went (deb postrm, rpm %postun).
# deb "purge" removes the configuration (dpkg removes the conffiles; this
# removes what it leaves: backups and the directory). The ibtracer user and
# group stay, as Debian policy asks: files may still be owned by them.
# rpm $1 of 1 or more is an upgrade: restart a running service.
set -e

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
if [ -S /run/udev/control ] && command -v udevadm > /dev/null 2>&1; then
	udevadm control --reload-rules || true
fi

case "$1" in
purge)
	rm -rf /etc/ibtracer_exporter
	rm -f /etc/default/ibtracer_exporter /etc/default/ibtracer_exporter.dpkg-*
	;;
[1-9]*)
	if command -v systemctl > /dev/null 2>&1; then
		systemctl try-restart ibtracer_exporter.service || true
	fi
	;;
esac
exit 0
