#!/usr/bin/env bash
# Builds Dex (the OpenID provider the SSO tests sign in through) into
# .tools/dex/dex, at a pinned commit of its main branch. `go install
# module@version` is refused for Dex (its go.mod replaces its api/v2 module
# and its v2 tags are not addressable), so it is built from a throw-away
# module that requires both modules at the pinned pseudo-versions and keeps
# them with a tools file. Skips the build when the binary for this pin is
# already there.
set -euo pipefail
cd "$(dirname "$0")/.."

DEX_VERSION=v0.0.0-20260806151424-ab64ed778070
DEX_API_VERSION=v2.4.1-0.20260806151424-ab64ed778070
# The module proxy answers "not available" for the api/v2 pseudo-version of
# the pinned commit; the release Dex's own go.mod requires (before its local
# replace) is taken then. It only carries the gRPC API's generated types.
DEX_API_FALLBACK=v2.4.0
out="$PWD/.tools/dex"

if [ -x "$out/dex" ] && [ "$(cat "$out/dex.version" 2>/dev/null)" = "$DEX_VERSION" ]; then
  echo "dex $DEX_VERSION already built in $out/dex"
  exit 0
fi

mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
export GOFLAGS=-mod=mod
go mod init x >/dev/null 2>&1
cat > tools.go <<'GO'
//go:build tools

// Package x only keeps Dex's command in this throw-away module.
package x

import _ "github.com/dexidp/dex/cmd/dex"
GO
if ! go get "github.com/dexidp/dex@$DEX_VERSION" "github.com/dexidp/dex/api/v2@$DEX_API_VERSION"; then
  echo "api/v2@$DEX_API_VERSION is not served by the module proxy; using api/v2@$DEX_API_FALLBACK" >&2
  go get "github.com/dexidp/dex@$DEX_VERSION" "github.com/dexidp/dex/api/v2@$DEX_API_FALLBACK"
fi
go build -trimpath -o "$out/dex" github.com/dexidp/dex/cmd/dex
echo "$DEX_VERSION" > "$out/dex.version"
echo "built dex $DEX_VERSION into $out/dex"
