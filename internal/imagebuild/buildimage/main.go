// Command buildimage writes the chartctl container image as an OCI image
// layout directory, without a container daemon (`make image` runs it):
//
//	go run ./internal/imagebuild/buildimage --out dist/image \
//	    --binary linux/amd64=dist/image/chartctl-linux-amd64 \
//	    --binary linux/arm64=dist/image/chartctl-linux-arm64 \
//	    --lint linux/amd64=dist/image/chartctl-lint-linux-amd64 \
//	    --lint linux/arm64=dist/image/chartctl-lint-linux-arm64 \
//	    --version 1.2.3 --revision $(git rev-parse HEAD)
//
// With --push REF it then pushes the image index and its SBOMs to REF
// (`make image-push`), with the credentials of ~/.docker/config.json
// (`docker login` or `crane auth login`); with --push and no --binary it
// pushes the layout already in --out.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/chartctl/chartctl/internal/imagebuild"
)

type binaries map[string]string

func (b binaries) String() string { return fmt.Sprint(map[string]string(b)) }

func (b binaries) Set(v string) error {
	plat, path, ok := strings.Cut(v, "=")
	if !ok || !strings.HasPrefix(plat, "linux/") || path == "" {
		return fmt.Errorf("want PLATFORM=PATH, e.g. linux/amd64=bin/chartctl, not %q", v)
	}
	b[plat] = path
	return nil
}

func main() {
	bins, lints := binaries{}, binaries{}
	o := imagebuild.Options{}
	out := flag.String("out", "dist/image", "OCI layout directory to write (replaced)")
	created := flag.String("created", "", "creation time, RFC 3339 (default: SOURCE_DATE_EPOCH, else the Unix epoch)")
	flag.Var(bins, "binary", "PLATFORM=PATH of a static chartctl binary (repeat per platform)")
	flag.Var(lints, "lint", "PLATFORM=PATH of a static chartctl-lint binary (repeat per platform)")
	flag.StringVar(&o.Version, "version", "dev", "image version (label and tag)")
	flag.StringVar(&o.Revision, "revision", "", "source revision (label)")
	flag.StringVar(&o.Source, "source", "https://github.com/chartctl/chartctl", "source repository URL (label)")
	flag.StringVar(&o.CABundle, "ca-bundle", imagebuild.CABundle, "PEM CA certificates to ship in the image")
	push := flag.String("push", "", "push the image to this reference, e.g. "+imagebuild.Repository+":1.2.3")
	flag.Parse()
	o.Binaries, o.Linters = bins, lints
	o.Created = time.Unix(0, 0).UTC()
	if sde := os.Getenv("SOURCE_DATE_EPOCH"); sde != "" && *created == "" {
		var secs int64
		if _, err := fmt.Sscan(sde, &secs); err == nil {
			o.Created = time.Unix(secs, 0).UTC()
		}
	}
	if *created != "" {
		t, err := time.Parse(time.RFC3339, *created)
		if err != nil {
			fmt.Fprintf(os.Stderr, "buildimage: invalid --created: %v\n", err)
			os.Exit(2)
		}
		o.Created = t
	}
	if len(bins) > 0 || *push == "" {
		if err := imagebuild.Build(*out, o); err != nil {
			fmt.Fprintf(os.Stderr, "buildimage: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("wrote %s (%d platforms) to %s\n", imagebuild.Repository+":"+o.Version, len(bins), *out)
	}
	if *push != "" {
		if err := imagebuild.Push(*out, *push, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			fmt.Fprintf(os.Stderr, "buildimage: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("pushed %s to %s\n", *out, *push)
	}
}
