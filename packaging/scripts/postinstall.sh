#!/bin/sh
# ibtracer-exporter: after the files are in place (deb postinst, rpm %post).
# deb: $1 is "configure" and $2 the version replaced, empty on a first
# install; rpm: $1 is 1 on an install, 2 or more on an upgrade (the rpm
# restarts the service in %postun, after the old files are gone).
set -e

case "$1" in
configure) upgrade=${2:+yes} ;;
[0-9]*) upgrade=no ;; # rpm
*) exit 0 ;;          # deb abort-upgrade, abort-remove ...
esac

# The system user and group, from sysusers.d; where systemd-sysusers is
# missing (a container, a system without systemd), the same by hand.
if command -v systemd-sysusers > /dev/null 2>&1; then
	systemd-sysusers ibtracer_exporter.conf
elif ! getent passwd ibtracer > /dev/null; then
	getent group ibtracer > /dev/null || groupadd --system ibtracer
	useradd --system --gid ibtracer --home-dir /nonexistent --no-create-home \
		--shell /usr/sbin/nologin --comment ibtracer_exporter ibtracer
fi

# The udev rule for devices that exist already (when udevd runs).
if [ -S /run/udev/control ] && command -v udevadm > /dev/null 2>&1; then
	udevadm control --reload-rules || true
	udevadm trigger --action=change --subsystem-match=infiniband_mad || true
fi

# The unit: systemd learns of it; an upgrade restarts a running service.
# Installing never starts it: `systemctl enable --now ibtracer_exporter`.
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
if [ "$upgrade" = yes ] && command -v systemctl > /dev/null 2>&1; then
	systemctl try-restart ibtracer_exporter.service || true
fi
exit 0
