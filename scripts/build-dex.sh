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
DEX_COMMIT=ab64ed778070
# The module proxy may answer "not available" for the api/v2 pseudo-version
# (Dex's go.mod replaces api/v2 with its own directory, so that version was
# never published); the module is then taken from Dex's git repository at
# the same commit (DEX_GIT: a URL or a local clone) through a replace, as
# Dex's own go.mod does. v2.4.0 would not do: it lacks the MFA messages the
# pinned server uses.
DEX_GIT="${DEX_GIT:-https://github.com/dexidp/dex}"
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
  echo "api/v2@$DEX_API_VERSION is not on the module proxy; taking it from $DEX_GIT at $DEX_COMMIT" >&2
  git clone --quiet --no-checkout "$DEX_GIT" dex-src
  git -C dex-src archive "$DEX_COMMIT" api/v2 | tar -x
  go mod edit -replace "github.com/dexidp/dex/api/v2=./api/v2"
  go get "github.com/dexidp/dex@$DEX_VERSION"
fi
go build -trimpath -o "$out/dex" github.com/dexidp/dex/cmd/dex
echo "$DEX_VERSION" > "$out/dex.version"
echo "built dex $DEX_VERSION into $out/dex"
