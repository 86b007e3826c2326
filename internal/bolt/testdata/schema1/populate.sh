#!/bin/sh
# Populates a chartctl data dir through the /v1 API of a running server.
set -eu
URL=$1; DATA=$2
KEY=$(python3 -c "import json,sys;print(json.load(open('$DATA/initial-admin.json'))['api_key'])")
api() { m=$1; p=$2; shift 2; curl -fsS -X "$m" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' "$URL$p" "$@"; echo; }
mkchart() { # name version dir
  d=charts/$1-$2; mkdir -p $d/$1/templates
  printf 'apiVersion: v2\nname: %s\nversion: %s\ndescription: %s chart %s\nappVersion: "1.0"\nkeywords: [demo]\n' $1 $2 $1 $2 > $d/$1/Chart.yaml
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n' > $d/$1/templates/cm.yaml
  (cd $d && tar --sort=name --mtime=2026-01-01 --owner=0 --group=0 -czf ../$1-$2.tgz $1)
}
up() { # repo name version [prov]
  mkchart $2 $3
  if [ $# -ge 4 ]; then
    printf -- '-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\nname: %s\nversion: %s\n-----BEGIN PGP SIGNATURE-----\nfake\n-----END PGP SIGNATURE-----\n' $2 $3 > charts/$2-$3.tgz.prov
    curl -fsS -H "Authorization: Bearer $KEY" -F chart=@charts/$2-$3.tgz -F prov=@charts/$2-$3.tgz.prov "$URL/v1/repositories/$1/charts"; echo
  else
    curl -fsS -H "Authorization: Bearer $KEY" -F chart=@charts/$2-$3.tgz "$URL/v1/repositories/$1/charts"; echo
  fi
}
api POST /v1/users -d '{"email":"ada@example.com","password":"ada password 1"}'
api POST /v1/users -d '{"email":"ops@example.com","password":"ops password 1","admin":true}'
api POST /v1/users -d '{"email":"ci@example.com"}'
api POST /v1/users/ci@example.com/api-keys -d '{"name":"ci narrow","scopes":["repo:read","repo:write"]}'
api POST /v1/users/ops@example.com/api-keys -d '{"name":"ops all","scopes":["repo:read","repo:write","team:read","team:write","org:read","org:write"]}'
api POST /v1/user/api-keys -d '{"name":"admin read","scopes":["repo:read"]}'
api POST /v1/organizations -d '{"name":"acme","description":"Acme Inc."}'
api POST /v1/teams -d '{"name":"platform","organization":"acme","description":"Platform team"}'
api POST /v1/teams/platform/members -d '{"email":"ada@example.com","role":"maintainer"}'
api POST /v1/teams/platform/members -d '{"email":"future@example.com"}'
api POST /v1/repositories -d '{"name":"public-charts","visibility":"public","description":"Public"}'
api POST /v1/repositories -d '{"name":"acme-private","organization":"acme"}'
api POST /v1/repositories -d '{"name":"admin-personal"}'
up public-charts web 1.0.0
up public-charts web v1.0.0
up public-charts web 1.1.0 prov
up acme-private api 0.1.0
up acme-private api 0.1.0+build.7
up admin-personal tool 2.0.0
