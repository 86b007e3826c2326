#!/bin/sh
# chartctl package: stop the service before its binary goes away (not on
# upgrade: postinstall restarts it then).
set -e
case "$1" in
	remove|purge|0)
		if [ -d /run/systemd/system ]; then
			systemctl disable --now chartctl.service >/dev/null 2>&1 || true
		fi
		;;
esac
exit 0
