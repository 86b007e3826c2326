#!/bin/sh
# chartctl package: create the system user, let it read its config file,
# reload systemd. The service is not started: edit
# /etc/chartctl/config.yaml, then `systemctl enable --now chartctl`.
set -e

if ! getent passwd chartctl >/dev/null 2>&1; then
	if command -v systemd-sysusers >/dev/null 2>&1 && [ -f /usr/lib/sysusers.d/chartctl.conf ]; then
		systemd-sysusers /usr/lib/sysusers.d/chartctl.conf
	else
		useradd --system --user-group --home-dir /var/lib/chartctl --no-create-home \
			--shell /usr/sbin/nologin --comment "chartctl server" chartctl
	fi
fi

# The config file may hold secrets: root writes it, the service reads it.
if [ -f /etc/chartctl/config.yaml ]; then
	chgrp chartctl /etc/chartctl/config.yaml
	chmod 0640 /etc/chartctl/config.yaml
fi

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	# On upgrade, restart a running server on the new binary.
	if systemctl is-active --quiet chartctl.service; then
		systemctl restart chartctl.service || true
	fi
fi
exit 0
