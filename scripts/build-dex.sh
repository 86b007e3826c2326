#!/usr/bin/env bash
# Builds Dex (the OpenID provider the SSO tests sign in through) into
# .tools/dex/dex, at a pinned commit of its main branch. `go install
# module@version` is refused for Dex (its go.mod replaces its api/v2 module
# and its v2 tags are not addressable), so it is built from a throw-away
# module that requires Dex at the pinned pseudo-version and keeps it with a
# tools file. Skips the build when the binary for this pin is already there.
#
# Only the Go module proxy is used (CI reaches no github.com): the proxy has
# no version of github.com/dexidp/dex/api/v2 at this commit (Dex's go.mod
# replaces it with its own directory, so it was never published; v2.4.0
# lacks the MFA messages the pinned server uses), so that module's files are
# committed in scripts/dex/apiv2 (see its README) and the throw-away module
# replaces api/v2 with that directory, as Dex's own go.mod does. Moving the
# pin means copying those files again from the new commit.
set -euo pipefail
cd "$(dirname "$0")/.."

DEX_VERSION=v0.0.0-20260806151424-ab64ed778070
api="$PWD/scripts/dex/apiv2"
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
go mod edit -replace "github.com/dexidp/dex/api/v2=$api"
go get "github.com/dexidp/dex@$DEX_VERSION"
go build -trimpath -o "$out/dex" github.com/dexidp/dex/cmd/dex
echo "$DEX_VERSION" > "$out/dex.version"
echo "built dex $DEX_VERSION into $out/dex"
