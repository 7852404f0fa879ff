#!/bin/sh
# Before removing (.deb prerm, .rpm %preun): on a removal, not an upgrade,
# the units are stopped and disabled. .deb says "remove"; .rpm counts the
# versions left after the transaction, 0 on a removal.
set -e
case "$1" in
remove | 0)
	if [ -d /run/systemd/system ]; then
		systemctl --no-reload disable --now hpcio-exporter.service hpcio-exporter-sidecar.service >/dev/null 2>&1 || true
	fi
	;;
esac
exit 0
