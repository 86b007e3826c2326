#!/bin/sh
# Populates a chartctl data dir (schema 18) through the /v1 API and Helm's
# OCI push of a running server; see README.md.
set -eu
URL=$1; DATA=$2; HELM=${HELM:-helm}
HOST=${URL#http://}
KEY=$(python3 -c "import json,sys;print(json.load(open('$DATA/initial-admin.json'))['api_key'])")
api() { m=$1; p=$2; shift 2; curl -fsS -X "$m" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' "$URL$p" "$@"; echo; }
api POST /v1/repositories -d '{"name":"acme-charts","visibility":"public"}'
export HELM_REGISTRY_CONFIG=$(mktemp)
echo "$KEY" | "$HELM" registry login "$HOST" -u admin --password-stdin --plain-http
mkdir -p charts
package() {
  n=$1; v=$2
  rm -rf "charts/$n"; mkdir -p "charts/$n/templates"
  printf 'apiVersion: v2\nname: %s\nversion: %s\ndescription: %s chart\n' "$n" "$v" "$n" > "charts/$n/Chart.yaml"
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n' > "charts/$n/templates/cm.yaml"
  (cd charts && tar --sort=name --mtime=2026-01-01 --owner=0 --group=0 -czf "$n-$v.tgz" "$n")
}
# Pushed over OCI only: each version's manifest and tag.
for v in 1.0.0 1.1.0+build.7 2.0.0; do
  package web "$v"
  "$HELM" push "charts/web-$v.tgz" "oci://$HOST/acme-charts" --plain-http
done
# Uploaded through /v1, then pushed over OCI: Helm's manifest is kept as
# an alternate beside the derived one (CONTRACT §18 decision 10).
package api 3.0.0
curl -fsS -H "Authorization: Bearer $KEY" -F "chart=@charts/api-3.0.0.tgz" "$URL/v1/repositories/acme-charts/charts"; echo
"$HELM" push charts/api-3.0.0.tgz "oci://$HOST/acme-charts" --plain-http
rm -r charts "$HELM_REGISTRY_CONFIG"
