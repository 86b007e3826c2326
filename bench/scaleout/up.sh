#!/usr/bin/env bash
# Three `chartctl serve` replicas on one PostgreSQL and one S3 bucket
# (versitygw) behind an nginx load balancer, all on loopback, all in one
# directory: the reference deployment of docs/scale-out.md, for trying it
# by hand and for the scale-out benchmark.
#
#   bench/scaleout/up.sh BINARY DIR     start everything; prints the URLs
#   bench/scaleout/down.sh DIR          stop everything started in DIR
#
# Needs Debian's postgresql and nginx (apt-get install -y postgresql
# nginx) and versitygw (CHARTCTL_VERSITYGW, or on PATH:
# go install github.com/versity/versitygw/cmd/versitygw@v1.8.0).
# Ports: BASE_PORT (default 18080) is the load balancer, BASE_PORT+1..+3
# the replicas, BASE_PORT+10 versitygw, BASE_PORT+20 PostgreSQL.
# Extra `chartctl serve` flags for every replica: CHARTCTL_SERVE_FLAGS.
# MIGRATE_FROM=DATA moves a stopped single node's data directory onto the
# database and bucket before the replicas start.
set -euo pipefail

bin=$(realpath "${1:?usage: up.sh BINARY DIR}")
dir=$(realpath -m "${2:?usage: up.sh BINARY DIR}")
base=${BASE_PORT:-18080}
lb=$base s3port=$((base + 10)) pgport=$((base + 20))
pgbin=${CHARTCTL_POSTGRES_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
vgw=${CHARTCTL_VERSITYGW:-$(command -v versitygw || true)}
[ -x "$pgbin/postgres" ] || { echo "PostgreSQL not found: apt-get install -y postgresql" >&2; exit 1; }
[ -x "$vgw" ] || { echo "versitygw not found: set CHARTCTL_VERSITYGW" >&2; exit 1; }
command -v nginx >/dev/null || { echo "nginx not found: apt-get install -y nginx" >&2; exit 1; }

mkdir -p "$dir"/{pg,s3/data,s3/meta,nginx/tmp,r1,r2,r3}
export AWS_ACCESS_KEY_ID=chartctl AWS_SECRET_ACCESS_KEY=chartctl-secret-key

wait_for() { # wait_for WHAT COMMAND...
	local what=$1; shift
	for _ in $(seq 1 150); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
	echo "$what did not start; see $dir/*.log" >&2; exit 1
}

# PostgreSQL, as the postgres OS user when run as root (it refuses root).
as_pg=()
if [ "$(id -u)" = 0 ]; then chown postgres: "$dir/pg"; as_pg=(runuser -u postgres --); fi
if [ ! -f "$dir/pg/data/PG_VERSION" ]; then
	"${as_pg[@]}" "$pgbin/initdb" -D "$dir/pg/data" -U postgres -A trust -E UTF8 --locale=C >"$dir/initdb.log"
fi
"${as_pg[@]}" "$pgbin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/postgres.log" -w \
	-o "-p $pgport -k $dir/pg -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
"${as_pg[@]}" "$pgbin/psql" -h 127.0.0.1 -p "$pgport" -U postgres -tAc \
	"SELECT 1 FROM pg_database WHERE datname = 'chartctl'" | grep -q 1 ||
	"${as_pg[@]}" "$pgbin/createdb" -h 127.0.0.1 -p "$pgport" -U postgres chartctl
db="postgres://postgres@127.0.0.1:$pgport/chartctl?sslmode=disable"

# versitygw, posix backend, and the bucket. --keep-alive: S3 services keep
# connections open; versitygw by default closes each after one request, so
# every blob read or write would pay a new connection.
"$vgw" --access "$AWS_ACCESS_KEY_ID" --secret "$AWS_SECRET_ACCESS_KEY" --region us-east-1 \
	--port "127.0.0.1:$s3port" --quiet --keep-alive posix --sidecar "$dir/s3/meta" "$dir/s3/data" >"$dir/versitygw.log" 2>&1 &
echo $! >"$dir/versitygw.pid"
wait_for versitygw curl -s -o /dev/null "http://127.0.0.1:$s3port/"
# Signed with curl's SigV4 (the payload hash of an empty body); a bucket
# that exists already is fine.
curl -s -o /dev/null -X PUT --aws-sigv4 aws:amz:us-east-1:s3 --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
	-H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
	"http://127.0.0.1:$s3port/charts"
blobs="s3://charts?endpoint=http://127.0.0.1:$s3port&region=us-east-1&path_style=true"

# MIGRATE_FROM=DATA: first move a stopped single-node data directory onto
# the database and the bucket (docs/scale-out.md, the runbook), and give
# the replicas its secrets key (its webhook secrets are sealed with it).
if [ -n "${MIGRATE_FROM:-}" ]; then
	"$bin" admin migrate --from "$MIGRATE_FROM" --database "$db" --blob-store "$blobs"
	[ -f "$MIGRATE_FROM/secrets.key" ] && cp "$MIGRATE_FROM/secrets.key" "$dir/secrets.key"
fi
[ -f "$dir/secrets.key" ] || head -c 32 /dev/urandom | base64 >"$dir/secrets.key"
chmod 600 "$dir/secrets.key"

# The replicas, each with its own --data (initial-admin.json, upload
# sessions), all with the load balancer's URL as their base URL.
for i in 1 2 3; do
	# shellcheck disable=SC2086
	"$bin" serve --addr "127.0.0.1:$((base + i))" --data "$dir/r$i" --base-url "http://127.0.0.1:$lb" \
		--database "$db" --blob-store "$blobs" --secrets-key-file "$dir/secrets.key" \
		--trusted-proxies 127.0.0.1/32 ${CHARTCTL_SERVE_FLAGS:-} >"$dir/r$i.log" 2>&1 &
	echo $! >"$dir/r$i.pid"
done
for i in 1 2 3; do wait_for "replica $i" curl -fs "http://127.0.0.1:$((base + i))/readyz"; done

# Run as root, nginx's workers would switch to nobody, who cannot write
# the temp paths here.
user_line=
[ "$(id -u)" = 0 ] && user_line="user root;"
cat >"$dir/nginx/nginx.conf" <<EOF
$user_line
daemon on;
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/error.log warn;
worker_processes 1;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $dir/nginx/tmp/body;
    proxy_temp_path $dir/nginx/tmp/proxy;
    fastcgi_temp_path $dir/nginx/tmp/fastcgi;
    uwsgi_temp_path $dir/nginx/tmp/uwsgi;
    scgi_temp_path $dir/nginx/tmp/scgi;
    upstream chartctl {
        server 127.0.0.1:$((base + 1));
        server 127.0.0.1:$((base + 2));
        server 127.0.0.1:$((base + 3));
        keepalive 32;
    }
    server {
        listen 127.0.0.1:$lb;
        client_max_body_size 0;
        proxy_request_buffering off;
        location / {
            proxy_pass http://chartctl;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$http_host;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto \$scheme;
        }
    }
}
EOF
nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf"
wait_for nginx curl -fs "http://127.0.0.1:$lb/readyz"

admin=$(ls "$dir"/r?/initial-admin.json 2>/dev/null | head -1 || true)
echo "load balancer  http://127.0.0.1:$lb"
echo "replicas       http://127.0.0.1:$((base + 1)) http://127.0.0.1:$((base + 2)) http://127.0.0.1:$((base + 3))"
echo "database       $db"
echo "blob store     $blobs"
echo "admin          ${admin:-none here: the database was set up before}"
echo "stop with      $(dirname "$0")/down.sh $dir"
