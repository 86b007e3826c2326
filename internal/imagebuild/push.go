package imagebuild

import (
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Push copies the image written by Build into the layout dir to ref (e.g.
// ghcr.io/chartctl/chartctl:1.2.3): the multi-platform index under the tag,
// then every SBOM, which registries with the OCI referrers API list under
// the platform image it describes.
func Push(dir, ref string, opts ...remote.Option) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	lp, err := layout.FromPath(dir)
	if err != nil {
		return fmt.Errorf("read the OCI layout %s: %w", dir, err)
	}
	top, err := lp.ImageIndex()
	if err != nil {
		return err
	}
	im, err := top.IndexManifest()
	if err != nil {
		return err
	}
	pushed := false
	for _, d := range im.Manifests {
		if !d.MediaType.IsIndex() {
			continue
		}
		idx, err := top.ImageIndex(d.Digest)
		if err != nil {
			return err
		}
		if err := remote.WriteIndex(tag, idx, opts...); err != nil {
			return fmt.Errorf("push %s: %w", tag, err)
		}
		pushed = true
	}
	if !pushed {
		return errors.New("the layout holds no image index; build it with make image")
	}
	for _, d := range im.Manifests {
		if d.ArtifactType != SBOMMediaType {
			continue
		}
		img, err := top.Image(d.Digest)
		if err != nil {
			return err
		}
		if err := remote.Write(tag.Context().Digest(d.Digest.String()), img, opts...); err != nil {
			return fmt.Errorf("push the SBOM %s: %w", d.Digest, err)
		}
	}
	return nil
}
