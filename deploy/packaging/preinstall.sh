#!/bin/sh
# Before installing (.deb preinst, .rpm %pre): the system user and group
# hpcio, which hpcio-exporter.service runs as. Kept on removal, as system
# users are, so that files it owns never change hands.
set -e
if ! getent group hpcio >/dev/null 2>&1; then
	groupadd --system hpcio
fi
if ! getent passwd hpcio >/dev/null 2>&1; then
	useradd --system --gid hpcio --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin --comment "hpcio_exporter" hpcio
fi
exit 0
