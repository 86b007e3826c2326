#!/bin/sh
# chartctl package: reload systemd. The data in /var/lib/chartctl and the
# chartctl user are kept on remove and on purge: charts are not deleted by
# uninstalling a package. Remove them by hand when you mean it.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
exit 0
