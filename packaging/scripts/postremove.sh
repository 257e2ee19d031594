#!/bin/sh
# ibtracer-exporter: after the files went (deb postrm, rpm %postun).
# deb "purge" removes the configuration (dpkg removes the conffiles; this
# removes what it leaves: its backups, and the directory when empty). The ibtracer user and
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
	# Only what the package put there: a node-name map, web configuration
	# or TLS keys the administrator keeps beside it stay, and so does the
	# directory then.
	rm -f /etc/ibtracer_exporter/ibtracer.yml /etc/ibtracer_exporter/ibtracer.yml.dpkg-*
	rmdir --ignore-fail-on-non-empty /etc/ibtracer_exporter 2> /dev/null || true
	rm -f /etc/default/ibtracer_exporter /etc/default/ibtracer_exporter.dpkg-*
	;;
[1-9]*)
	if command -v systemctl > /dev/null 2>&1; then
		systemctl try-restart ibtracer_exporter.service || true
	fi
	;;
esac
exit 0
