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
# lacks the MFA messages the pinned server uses), so that module's source
# (go.mod, api.proto) is committed in scripts/dex/apiv2 (see its README);
# its Go code is generated here with protoc (Debian's protobuf-compiler)
# and the protoc-gen-go / protoc-gen-go-grpc versions Dex generates with,
# and the throw-away module replaces api/v2 with that generated copy, as
# Dex's own go.mod replaces it with its directory. Moving the pin means
# copying go.mod and api.proto again from the new commit.
set -euo pipefail
cd "$(dirname "$0")/.."

DEX_VERSION=v0.0.0-20260806151424-ab64ed778070
api="$PWD/scripts/dex/apiv2"
out="$PWD/.tools/dex"

if [ -x "$out/dex" ] && [ "$(cat "$out/dex.version" 2>/dev/null)" = "$DEX_VERSION" ]; then
  echo "dex $DEX_VERSION already built in $out/dex"
  exit 0
fi

if ! command -v protoc >/dev/null 2>&1; then
  echo "build-dex: protoc not found; install it (Debian: apt-get install protobuf-compiler)" >&2
  exit 1
fi
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Dex's api/v2 module, generated from its committed source.
GOBIN="$work/bin" GOFLAGS= go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.5
GOBIN="$work/bin" GOFLAGS= go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
gen="$work/apiv2"
mkdir -p "$gen/api/v2"
cp "$api/go.mod" "$api/LICENSE" "$gen/"
cp "$api/api.proto" "$gen/api/v2/api.proto"
(cd "$gen" && PATH="$work/bin:$PATH" protoc --go_out=. --go_opt=paths=source_relative \
  --go-grpc_out=. --go-grpc_opt=paths=source_relative api/v2/api.proto)
mv "$gen"/api/v2/*.go "$gen/"
rm -r "$gen/api"

mkdir -p "$work/x"
cd "$work/x"
export GOFLAGS=-mod=mod
go mod init x >/dev/null 2>&1
cat > tools.go <<'GO'
//go:build tools

// Package x only keeps Dex's command in this throw-away module.
package x

import _ "github.com/dexidp/dex/cmd/dex"
GO
go mod edit -replace "github.com/dexidp/dex/api/v2=$gen"
go get "github.com/dexidp/dex@$DEX_VERSION"
go build -trimpath -o "$out/dex" github.com/dexidp/dex/cmd/dex
echo "$DEX_VERSION" > "$out/dex.version"
echo "built dex $DEX_VERSION into $out/dex"
