#!/bin/sh
# Populates a chartctl data dir (schema 9) through the /v1 API of a
# running server; see README.md.
set -eu
URL=$1; DATA=$2
KEY=$(python3 -c "import json,sys;print(json.load(open('$DATA/initial-admin.json'))['api_key'])")
api() { m=$1; p=$2; shift 2; curl -fsS -X "$m" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' "$URL$p" "$@"; echo; }
api POST /v1/users -d '{"email":"ci@example.com"}'
# The CI user's key, kept beside data/ (ci-key.txt) so the test can present it.
api POST /v1/users/ci@example.com/api-keys -d '{"name":"ci","scopes":["repo:read","repo:write"]}' |
  python3 -c "import json,sys;print(json.load(sys.stdin)['data']['key'])" > ci-key.txt
api POST /v1/organizations -d '{"name":"acme","description":"Acme Inc."}'
api POST /v1/teams -d '{"name":"platform","organization":"acme"}'
api POST /v1/teams/platform/members -d '{"email":"ci@example.com","role":"maintainer"}'
api POST /v1/repositories -d '{"name":"acme-charts","organization":"acme"}'
mkdir -p charts/web/templates
printf 'apiVersion: v2\nname: web\nversion: 1.0.0\ndescription: web chart\n' > charts/web/Chart.yaml
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n' > charts/web/templates/cm.yaml
(cd charts && tar --sort=name --mtime=2026-01-01 --owner=0 --group=0 -czf web-1.0.0.tgz web)
curl -fsS -H "Authorization: Bearer $(cat ci-key.txt)" -F chart=@charts/web-1.0.0.tgz "$URL/v1/repositories/acme-charts/charts"; echo
rm -r charts
