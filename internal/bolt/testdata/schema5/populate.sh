#!/bin/sh
# Populates a chartctl data dir (schema 5) through the /v1 and /v2 APIs of
# a running server; see README.md.
set -eu
URL=$1; DATA=$2
KEY=$(python3 -c "import json,sys;print(json.load(open('$DATA/initial-admin.json'))['api_key'])")
api() { m=$1; p=$2; shift 2; curl -fsS -X "$m" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' "$URL$p" "$@"; echo; }
api POST /v1/repositories -d '{"name":"kept"}'
api POST /v1/repositories -d '{"name":"gone"}'
api POST /v1/repositories/kept/webhooks -d '{"url":"https://hooks.example.invalid/kept","events":["*"]}'
api POST /v1/repositories/gone/webhooks -d '{"url":"https://hooks.example.invalid/gone","events":["*"]}'
api POST /v1/admin/webhooks -d '{"url":"https://hooks.example.invalid/admin","events":["repository.deleted"]}'
api PUT /v1/repositories/kept/quota -d '{"max_versions":5}'
api PUT /v1/repositories/kept/retention -d '{"keep_latest":3}'
# Upload sessions left open (one chunk sent) in both repositories.
upload() { # repo
  loc=$(curl -fsS -o /dev/null -D - -X POST -H "Authorization: Bearer $KEY" "$URL/v2/$1/app/blobs/uploads/" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
  curl -fsS -o /dev/null -X PATCH -H "Authorization: Bearer $KEY" -H 'Content-Type: application/octet-stream' -H 'Content-Range: 0-4' --data-binary hello "$URL$loc"
}
upload kept
upload gone
api DELETE /v1/repositories/gone
