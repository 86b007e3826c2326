package chartdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/distribution/reference"
	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Where a version's image list comes from (CONTRACT §18 "Discovery"):
// the domain's values, named here for the callers of ImagesOf.
const (
	// ImagesAnnotation: Chart.yaml's artifacthub.io/images annotation.
	ImagesAnnotation = chartctl.ImagesAnnotation
	// ImagesPending: not known yet; the rendering job (decision 9) finds
	// them later.
	ImagesPending = chartctl.ImagesPending
)

// imagesKey is the Artifact Hub annotation listing a chart's images.
const imagesKey = "artifacthub.io/images"

// Images is what a version's metadata says about the images it deploys.
type Images struct {
	// Images are the image references, normalized as Docker does
	// (nginx:1.25 is docker.io/library/nginx:1.25), sorted, without
	// duplicates.
	Images []string
	// Source is ImagesAnnotation or ImagesPending from ImagesOf; a
	// stored record (VersionImages) may also say chartctl.ImagesRendered
	// or chartctl.ImagesUnrenderable.
	Source string
	// Error says why the annotation was not understood, or why the chart
	// is unrenderable ("" otherwise).
	Error string
}

// ImagesOf reads the images a chart version lists in its
// artifacthub.io/images annotation, from its Chart.yaml as JSON (the
// stored metadata). A version without the annotation is pending; one
// whose annotation is not a YAML list of {image} is pending with Error
// set, never a failure of the version.
func ImagesOf(metadata []byte) Images {
	var md struct {
		Annotations map[string]string `json:"annotations"`
	}
	// Most charts have no Artifact Hub annotation: they are answered
	// without parsing their metadata (the images backfill asks this of
	// every version without an image record).
	if !bytes.Contains(metadata, []byte("artifacthub.io")) || json.Unmarshal(metadata, &md) != nil {
		return Images{Source: ImagesPending}
	}
	raw, ok := md.Annotations[imagesKey]
	if !ok {
		return Images{Source: ImagesPending}
	}
	var list []struct {
		Image string `json:"image"`
	}
	if err := yaml.Unmarshal([]byte(raw), &list); err != nil {
		return Images{Source: ImagesPending, Error: "the " + imagesKey + " annotation is not a YAML list of {name, image}: " + err.Error()}
	}
	seen := map[string]bool{}
	var out []string
	for _, it := range list {
		ref, err := NormalizeImage(it.Image)
		if err != nil {
			return Images{Source: ImagesPending, Error: fmt.Sprintf("the %s annotation lists %q: %v", imagesKey, it.Image, err)}
		}
		if !seen[ref] {
			seen[ref] = true
			out = append(out, ref)
		}
	}
	sort.Strings(out)
	return Images{Images: out, Source: ImagesAnnotation}
}

// NormalizeImage spells an image reference in full, as Docker reads it:
// docker.io/library/ is implied for a bare name, docker.io/ for a
// two-part one.
func NormalizeImage(s string) (string, error) {
	named, err := reference.ParseNormalizedNamed(strings.TrimSpace(s))
	if err != nil {
		return "", err
	}
	return named.String(), nil
}

// ImageQuery is a parsed search for images (--image, ?image=).
type ImageQuery struct {
	name   string
	tag    string
	digest string
}

// ParseImageQuery parses an image search: a reference with or without a
// tag or digest (nginx, nginx:1.25, ghcr.io/org/app@sha256:…).
func ParseImageQuery(s string) (ImageQuery, error) {
	ref, err := reference.ParseNormalizedNamed(strings.TrimSpace(s))
	if err != nil {
		return ImageQuery{}, err
	}
	q := ImageQuery{name: ref.Name()}
	if t, ok := ref.(reference.Tagged); ok {
		q.tag = t.Tag()
	}
	if d, ok := ref.(reference.Digested); ok {
		q.digest = d.Digest().String()
	}
	return q, nil
}

// Match reports whether the normalized image reference img matches q:
// the same repository; with a tag in q, that tag or one it prefixes
// before a '.' or '-' (nginx:1.25 matches nginx:1.25.3 and
// nginx:1.25-alpine, not nginx:1.250); with a digest, that digest.
func (q ImageQuery) Match(img string) bool {
	ref, err := reference.ParseNormalizedNamed(img)
	if err != nil || ref.Name() != q.name {
		return false
	}
	if q.digest != "" {
		d, ok := ref.(reference.Digested)
		return ok && d.Digest().String() == q.digest
	}
	if q.tag == "" {
		return true
	}
	t, ok := ref.(reference.Tagged)
	if !ok {
		return false
	}
	tag := t.Tag()
	if tag == q.tag {
		return true
	}
	return strings.HasPrefix(tag, q.tag) && (tag[len(q.tag)] == '.' || tag[len(q.tag)] == '-')
}

// VersionImages is what a stored version answers about its images: its
// record, once the background job has found them (rendered, unrenderable
// or from the annotation); before that, what its annotation says, read
// from its stored Chart.yaml; else pending.
func VersionImages(cv *chartctl.ChartVersion) Images {
	if r := cv.Images; r != nil {
		return Images{Images: r.Images, Source: r.Source, Error: r.Error}
	}
	return ImagesOf(cv.Metadata)
}
