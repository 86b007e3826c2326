// Package artifacthub reads, checks and writes a repository's
// artifacthub-repo.yml, the file Artifact Hub reads beside a Helm
// repository's index.yaml, or as the "artifacthub.io" tag of an OCI
// repository, to give its publisher verified-publisher status, let its
// owners claim it and leave packages out
// (https://artifacthub.io/docs/topics/repositories/).
//
// Documents are checked against the JSON Schema Artifact Hub's file is
// published with (SchemaStore's artifacthub-repo.json, embedded as
// schema.json) with santhosh-tekuri/jsonschema, formats asserted, and then
// for what the schema cannot say: that ignore's versions are regular
// expressions, and sizes.
package artifacthub

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"mime"
	"regexp"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/santhosh-tekuri/jsonschema/v6"
	yamlv3 "go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Tag is the OCI tag Artifact Hub reads the metadata from.
const Tag = "artifacthub.io"

// Media types of the OCI artifact Artifact Hub reads under Tag.
const (
	ConfigMediaType = "application/vnd.cncf.artifacthub.config.v1+yaml"
	LayerMediaType  = "application/vnd.cncf.artifacthub.repository-metadata.layer.v1.yaml"
	// ManifestMediaType is the artifact's manifest: an OCI image
	// manifest, as `oras push` writes it.
	ManifestMediaType = ocispec.MediaTypeImageManifest
)

// Limits on a document, so the file stays what it is for.
const (
	maxOwners  = 100
	maxIgnore  = 1000
	maxText    = 256
	maxPattern = 1024
)

//go:embed schema.json
var schemaJSON []byte

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// compiled returns the embedded schema, compiled once.
func compiled() (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
		if err != nil {
			schemaErr = fmt.Errorf("artifacthub-repo schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource("artifacthub-repo.json", doc); err != nil {
			schemaErr = fmt.Errorf("artifacthub-repo schema: %w", err)
			return
		}
		schema, schemaErr = c.Compile("artifacthub-repo.json")
	})
	return schema, schemaErr
}

// document is artifacthub-repo.yml with Artifact Hub's field names.
type document struct {
	RepositoryID string   `json:"repositoryID,omitempty" yaml:"repositoryID,omitempty"`
	Owners       []owner  `json:"owners,omitempty" yaml:"owners,omitempty"`
	Ignore       []ignore `json:"ignore,omitempty" yaml:"ignore,omitempty"`
}

type owner struct {
	Name  string `json:"name,omitempty" yaml:"name,omitempty"`
	Email string `json:"email,omitempty" yaml:"email,omitempty"`
}

type ignore struct {
	Name    string `json:"name" yaml:"name"`
	Version string `json:"version,omitempty" yaml:"version,omitempty"`
}

func newDocument(a *chartctl.ArtifactHubRepo) document {
	var d document
	if a == nil {
		return d
	}
	d.RepositoryID = a.RepositoryID
	for _, o := range a.Owners {
		d.Owners = append(d.Owners, owner(o))
	}
	for _, i := range a.Ignore {
		d.Ignore = append(d.Ignore, ignore(i))
	}
	return d
}

func (d document) domain() *chartctl.ArtifactHubRepo {
	a := &chartctl.ArtifactHubRepo{RepositoryID: d.RepositoryID}
	for _, o := range d.Owners {
		a.Owners = append(a.Owners, chartctl.ArtifactHubOwner(o))
	}
	for _, i := range d.Ignore {
		a.Ignore = append(a.Ignore, chartctl.ArtifactHubIgnore(i))
	}
	return a
}

// IsYAML reports whether the media type mt names YAML
// (application/yaml and its older spellings).
func IsYAML(mt string) bool {
	mt, _, _ = mime.ParseMediaType(mt)
	switch mt {
	case "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml":
		return true
	}
	return false
}

// Parse reads a document: artifacthub-repo.yml itself when isYAML, else
// JSON with Artifact Hub's field names (repositoryID, owners, ignore). It
// returns EINVALID naming "body", saying what is wrong, for a document
// Artifact Hub would refuse. An empty document (or {}) removes the
// metadata.
func Parse(body []byte, isYAML bool) (*chartctl.ArtifactHubRepo, error) {
	js := body
	if isYAML {
		if len(bytes.TrimSpace(body)) == 0 {
			js = []byte("{}")
		} else {
			var err error
			if js, err = yaml.YAMLToJSON(body); err != nil {
				return nil, chartctl.Invalid("body", "The body is not valid YAML: %s", firstLine(err.Error()))
			}
		}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, chartctl.Invalid("body", "The body is not valid JSON: %s", firstLine(err.Error()))
	}
	if err := check(inst); err != nil {
		return nil, err
	}
	var d document
	if err := json.Unmarshal(js, &d); err != nil {
		return nil, chartctl.Invalid("body", "The body is not an artifacthub-repo.yml document: %s", firstLine(err.Error()))
	}
	a := d.domain()
	if err := Validate(a); err != nil {
		return nil, err
	}
	return a, nil
}

// Validate checks a as Parse checks a document: against Artifact Hub's
// schema, that ignore versions are regular expressions (Go's, as Artifact
// Hub's own), and the sizes: at most 100 owners and 1,000 ignore entries,
// texts of at most 256 characters. It returns EINVALID naming "body".
func Validate(a *chartctl.ArtifactHubRepo) error {
	if a == nil {
		return nil
	}
	if len(a.Owners) > maxOwners {
		return chartctl.Invalid("body", "owners lists %d owners: at most %d.", len(a.Owners), maxOwners)
	}
	if len(a.Ignore) > maxIgnore {
		return chartctl.Invalid("body", "ignore lists %d packages: at most %d.", len(a.Ignore), maxIgnore)
	}
	for i, o := range a.Owners {
		if len(o.Name) > maxText || len(o.Email) > maxText {
			return chartctl.Invalid("body", "owners[%d]: a name or email is longer than %d characters.", i, maxText)
		}
		if o.Name == "" && o.Email == "" {
			return chartctl.Invalid("body", "owners[%d] has neither a name nor an email: give the owner's Artifact Hub user name or email.", i)
		}
	}
	for i, ig := range a.Ignore {
		if strings.TrimSpace(ig.Name) == "" || len(ig.Name) > maxText {
			return chartctl.Invalid("body", "ignore[%d].name must be a package name of 1 to %d characters.", i, maxText)
		}
		if len(ig.Version) > maxPattern {
			return chartctl.Invalid("body", "ignore[%d].version is longer than %d characters.", i, maxPattern)
		}
		if _, err := regexp.Compile(ig.Version); err != nil {
			return chartctl.Invalid("body", "ignore[%d].version must be a regular expression (%s); leave it out to ignore every version.", i, firstLine(err.Error()))
		}
	}
	b, err := json.Marshal(newDocument(a))
	if err != nil {
		return fmt.Errorf("encode artifacthub metadata: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("decode artifacthub metadata: %w", err)
	}
	return check(inst)
}

// check validates a decoded JSON document against the schema.
func check(inst any) error {
	sch, err := compiled()
	if err != nil {
		return err
	}
	if err := sch.Validate(inst); err != nil {
		return chartctl.Invalid("body", "The document does not match Artifact Hub's artifacthub-repo.yml schema (fields repositoryID: a UUID, owners: [{name, email}], ignore: [{name, version}]): %s",
			schemaMessage(err))
	}
	return nil
}

// english prints the schema's messages.
var english = message.NewPrinter(language.English)

// schemaMessage words a validation error on one line, naming the place.
func schemaMessage(err error) string {
	if ve, ok := err.(*jsonschema.ValidationError); ok {
		// The leaves say what is wrong where; the root only that
		// something is.
		var parts []string
		var walk func(*jsonschema.ValidationError)
		walk = func(e *jsonschema.ValidationError) {
			if len(e.Causes) == 0 {
				loc := "/" + strings.Join(e.InstanceLocation, "/")
				parts = append(parts, loc+": "+strings.Join(strings.Fields(e.ErrorKind.LocalizedString(english)), " "))
				return
			}
			for _, c := range e.Causes {
				walk(c)
			}
		}
		walk(ve)
		if len(parts) > 0 {
			return strings.Join(parts, "; ")
		}
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// JSON returns a as JSON with Artifact Hub's field names ({} for none).
func JSON(a *chartctl.ArtifactHubRepo) ([]byte, error) {
	b, err := json.Marshal(newDocument(a))
	if err != nil {
		return nil, fmt.Errorf("encode artifacthub metadata: %w", err)
	}
	return b, nil
}

// YAML returns artifacthub-repo.yml for a: its fields in Artifact Hub's
// order (repositoryID, owners, ignore).
func YAML(a *chartctl.ArtifactHubRepo) ([]byte, error) {
	var buf bytes.Buffer
	enc := yamlv3.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(newDocument(a)); err != nil {
		return nil, fmt.Errorf("encode artifacthub-repo.yml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode artifacthub-repo.yml: %w", err)
	}
	return buf.Bytes(), nil
}

// Artifact is the OCI artifact Artifact Hub reads under Tag: a manifest
// whose config is empty (as `oras push --config /dev/null:…` writes it)
// and whose one layer is artifacthub-repo.yml.
type Artifact struct {
	Manifest       []byte
	ManifestDigest string
	Config         []byte
	ConfigDigest   string
	Layer          []byte
	LayerDigest    string
}

// OCI returns the OCI artifact of a.
func OCI(a *chartctl.ArtifactHubRepo) (*Artifact, error) {
	layer, err := YAML(a)
	if err != nil {
		return nil, err
	}
	art := &Artifact{Config: []byte{}, Layer: layer}
	art.ConfigDigest = digest.SHA256.FromBytes(art.Config).String()
	art.LayerDigest = digest.SHA256.FromBytes(layer).String()
	man := ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ManifestMediaType,
		Config:    ocispec.Descriptor{MediaType: ConfigMediaType, Digest: digest.Digest(art.ConfigDigest), Size: 0},
		Layers: []ocispec.Descriptor{{MediaType: LayerMediaType, Digest: digest.Digest(art.LayerDigest), Size: int64(len(layer)),
			Annotations: map[string]string{ocispec.AnnotationTitle: "artifacthub-repo.yml"}}},
	}
	if art.Manifest, err = json.Marshal(man); err != nil {
		return nil, fmt.Errorf("encode artifacthub manifest: %w", err)
	}
	art.ManifestDigest = digest.SHA256.FromBytes(art.Manifest).String()
	return art, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
