#!/bin/sh
# After installing or upgrading (.deb postinst, .rpm %post): systemd learns
# the units. Nothing is enabled or started: the site configures
# /etc/default/hpcio-exporter (and sudo) first. An upgrade restarts the
# units that were running, so that they run the new binary.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	for unit in hpcio-exporter.service hpcio-exporter-sidecar.service; do
		systemctl try-restart "$unit" >/dev/null 2>&1 || true
	done
fi
exit 0
