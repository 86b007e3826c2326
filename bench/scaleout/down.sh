#!/usr/bin/env bash
# Stops what bench/scaleout/up.sh started in DIR (the data stays).
#
#   bench/scaleout/down.sh DIR
set -uo pipefail

dir=$(realpath -m "${1:?usage: down.sh DIR}")
pgbin=${CHARTCTL_POSTGRES_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -f "$dir/nginx/nginx.pid" ] && nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -s quit
for f in "$dir"/r?.pid "$dir/versitygw.pid"; do
	[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	rm -f "$f"
done
as_pg=()
[ "$(id -u)" = 0 ] && as_pg=(runuser -u postgres --)
[ -f "$dir/pg/data/postmaster.pid" ] && "${as_pg[@]}" "$pgbin/pg_ctl" -D "$dir/pg/data" -m fast -w stop >/dev/null
exit 0
