#!/bin/sh
# Populates a chartctl data dir (schema 9) through the /v1 API of a
# running server; see README.md.
set -eu
URL=$1; DATA=$2
KEY=$(python3 -c "import json,sys;print(json.load(open('$DATA/initial-admin.json'))['api_key'])")
api() { m=$1; p=$2; shift 2; curl -fsS -X "$m" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' "$URL$p" "$@"; echo; }
api POST /v1/repositories -d '{"name":"acme-charts","visibility":"public"}'
mkdir -p charts
# Versions whose tags sort otherwise than the versions do ('+' is written
# '_' in a tag), in two charts whose names share a prefix.
for c in web:1.0.0 web:1.1.0+build.7 web:1.1.1-rc.1 web:2.0.0 web-app:0.1.0; do
  n=${c%%:*}; v=${c#*:}
  rm -rf "charts/$n"; mkdir -p "charts/$n/templates"
  printf 'apiVersion: v2\nname: %s\nversion: %s\ndescription: %s chart\n' "$n" "$v" "$n" > "charts/$n/Chart.yaml"
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n' > "charts/$n/templates/cm.yaml"
  (cd charts && tar --sort=name --mtime=2026-01-01 --owner=0 --group=0 -czf "$n-$v.tgz" "$n")
  curl -fsS -H "Authorization: Bearer $KEY" -F "chart=@charts/$n-$v.tgz" "$URL/v1/repositories/acme-charts/charts"; echo
done
rm -r charts
