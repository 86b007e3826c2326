#!/bin/sh
# Populates a chartctl data dir (schema 19) through the /v1 API, Helm's
# OCI push and the registry API of a running server; see README.md.
set -eu
URL=$1; DATA=$2; HELM=${HELM:-helm}
HOST=${URL#http://}
KEY=$(python3 -c "import json,sys;print(json.load(open('$DATA/initial-admin.json'))['api_key'])")
curl -fsS -X POST -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' "$URL/v1/repositories" \
  -d '{"name":"acme-charts","visibility":"public"}'; echo
export HELM_REGISTRY_CONFIG=$(mktemp)
echo "$KEY" | "$HELM" registry login "$HOST" -u admin --password-stdin --plain-http
mkdir -p charts/web/templates
printf 'apiVersion: v2\nname: web\nversion: 1.0.0\ndescription: web chart\n' > charts/web/Chart.yaml
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n' > charts/web/templates/cm.yaml
(cd charts && tar --sort=name --mtime=2026-01-01 --owner=0 --group=0 -czf web-1.0.0.tgz web)
# A chart version: its manifest is not an OCI artifact.
"$HELM" push charts/web-1.0.0.tgz "oci://$HOST/acme-charts" --plain-http
# Two OCI artifacts: an image at acme-charts/tools, tagged v1, and an SBOM
# referring to the chart's manifest.
python3 - "$URL" "$KEY" <<'PY'
import base64, hashlib, json, sys, urllib.request
url, key = sys.argv[1], sys.argv[2]
auth = "Basic " + base64.b64encode(("admin:" + key).encode()).decode()
def req(method, path, body=b"", ctype="application/octet-stream", accept=None):
    r = urllib.request.Request(url + path, data=body if method in ("POST", "PUT") else None, method=method)
    r.add_header("Authorization", auth)
    r.add_header("Content-Type", ctype)
    if accept:
        r.add_header("Accept", accept)
    with urllib.request.urlopen(r) as resp:
        return resp.read(), resp.headers
def blob(name, data):
    d = "sha256:" + hashlib.sha256(data).hexdigest()
    req("POST", "/v2/%s/blobs/uploads/?digest=%s" % (name, d), data)
    return {"mediaType": "application/octet-stream", "digest": d, "size": len(data)}
def manifest(name, ref, m):
    body = json.dumps(m, separators=(",", ":")).encode()
    req("PUT", "/v2/%s/manifests/%s" % (name, ref), body, "application/vnd.oci.image.manifest.v1+json")
    return {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + hashlib.sha256(body).hexdigest(), "size": len(body)}
cfg = blob("acme-charts/tools", b'{"architecture":"amd64","os":"linux"}')
cfg["mediaType"] = "application/vnd.oci.image.config.v1+json"
layer = blob("acme-charts/tools", b"tools layer " * 100)
layer["mediaType"] = "application/vnd.oci.image.layer.v1.tar"
manifest("acme-charts/tools", "v1", {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": cfg, "layers": [layer]})
_, h = req("HEAD", "/v2/acme-charts/web/manifests/1.0.0", accept="application/vnd.oci.image.manifest.v1+json")
subject = {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": h["Docker-Content-Digest"], "size": int(h["Content-Length"])}
empty = blob("acme-charts/web", b"{}")
empty["mediaType"] = "application/vnd.oci.empty.v1+json"
sbom = blob("acme-charts/web", b'{"spdxVersion":"SPDX-2.3","name":"web"}')
sbom["mediaType"] = "application/spdx+json"
m = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "artifactType": "application/spdx+json",
     "config": empty, "layers": [sbom], "subject": subject}
d = "sha256:" + hashlib.sha256(json.dumps(m, separators=(",", ":")).encode()).hexdigest()
manifest("acme-charts/web", d, m)
PY
rm -r charts "$HELM_REGISTRY_CONFIG"
