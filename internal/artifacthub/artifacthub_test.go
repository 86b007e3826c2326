package artifacthub_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/internal/artifacthub"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// mustPublishedSchema compiles Artifact Hub's published schema for
// artifacthub-repo.yml, kept as test data (SchemaStore's
// artifacthub-repo.json), formats asserted.
func mustPublishedSchema(tb testing.TB) *jsonschema.Schema {
	tb.Helper()
	b, err := os.ReadFile("testdata/artifacthub-repo.schema.json")
	if err != nil {
		tb.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("artifacthub-repo.json", doc); err != nil {
		tb.Fatal(err)
	}
	s, err := c.Compile("artifacthub-repo.json")
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

const repoYAML = `repositoryID: 2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab
owners:
  - name: ada
    email: ada@example.com
ignore:
  - name: internal-tool
  - name: web
    version: ^0\.
`

var repoWant = &chartctl.ArtifactHubRepo{RepositoryID: "2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab",
	Owners: []chartctl.ArtifactHubOwner{{Name: "ada", Email: "ada@example.com"}},
	Ignore: []chartctl.ArtifactHubIgnore{{Name: "internal-tool"}, {Name: "web", Version: `^0\.`}}}

func TestParseYAMLAndJSON(t *testing.T) {
	a, err := artifacthub.Parse([]byte(repoYAML), true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, repoWant) {
		t.Errorf("YAML: %+v, want %+v", a, repoWant)
	}
	js := `{"repositoryID":"2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab","owners":[{"name":"ada","email":"ada@example.com"}],"ignore":[{"name":"internal-tool"},{"name":"web","version":"^0\\."}]}`
	if a, err = artifacthub.Parse([]byte(js), false); err != nil || !reflect.DeepEqual(a, repoWant) {
		t.Errorf("JSON: %+v, %v", a, err)
	}
	for _, empty := range []string{"", "{}"} {
		if a, err := artifacthub.Parse([]byte(empty), empty == ""); err != nil || !a.Empty() {
			t.Errorf("%q: %+v, %v", empty, a, err)
		}
	}
}

// TestParseRefusesWhatArtifactHubRefuses: each document breaks one rule
// of the schema or of Artifact Hub; the error is EINVALID naming the body
// and the place.
func TestParseRefusesWhatArtifactHubRefuses(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"not a uuid", `{"repositoryID":"my-repo"}`, "/repositoryID"},
		{"bad email", `{"owners":[{"name":"ada","email":"not an email"}]}`, "/owners/0/email"},
		{"unknown field", `{"repositoryId":"2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab"}`, "repositoryId"},
		{"ignore without name", `{"ignore":[{"version":"1.0"}]}`, "/ignore/0"},
		{"duplicate owners", `{"owners":[{"name":"a"},{"name":"a"}]}`, "/owners"},
		{"bad regexp", `{"ignore":[{"name":"web","version":"(["}]}`, "ignore[0].version must be a regular expression"},
		{"empty owner", `{"owners":[{}]}`, "owners[0] has neither"},
		{"not an object", `[1,2]`, "schema"},
	} {
		_, err := artifacthub.Parse([]byte(tc.doc), false)
		var ce *chartctl.Error
		if chartctl.ErrorCode(err) != chartctl.EINVALID {
			t.Errorf("%s: %v, want EINVALID", tc.name, err)
			continue
		}
		if e, ok := err.(*chartctl.Error); ok {
			ce = e
		}
		if ce == nil || !strings.Contains(ce.Message, tc.want) {
			t.Errorf("%s: %v, want a message naming %q", tc.name, err, tc.want)
		}
	}
	if _, err := artifacthub.Parse([]byte("owners: [\n"), true); chartctl.ErrorCode(err) != chartctl.EINVALID {
		t.Errorf("broken YAML: %v", err)
	}
}

// TestWrittenFileMatchesPublishedSchema: the YAML served and the OCI
// layer are artifacthub-repo.yml documents Artifact Hub's published
// schema accepts, and read back to the same metadata.
func TestWrittenFileMatchesPublishedSchema(t *testing.T) {
	sch := mustPublishedSchema(t)
	y, err := artifacthub.YAML(repoWant)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(y), "repositoryID: 2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab\nowners:\n") {
		t.Errorf("the file does not start with repositoryID then owners:\n%s", y)
	}
	js, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("the published schema refuses the file:\n%s\n%v", y, err)
	}
	back, err := artifacthub.Parse(y, true)
	if err != nil || !reflect.DeepEqual(back, repoWant) {
		t.Errorf("read back: %+v, %v", back, err)
	}

	art, err := artifacthub.OCI(repoWant)
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		SchemaVersion int    `json:"schemaVersion"`
		MediaType     string `json:"mediaType"`
		Config        struct {
			MediaType, Digest string
			Size              int64
		}
		Layers []struct {
			MediaType, Digest string
			Size              int64
		}
	}
	if err := json.Unmarshal(art.Manifest, &man); err != nil {
		t.Fatal(err)
	}
	if man.SchemaVersion != 2 || man.MediaType != "application/vnd.oci.image.manifest.v1+json" ||
		man.Config.MediaType != "application/vnd.cncf.artifacthub.config.v1+yaml" || man.Config.Size != 0 || man.Config.Digest != digest.SHA256.FromBytes(nil).String() ||
		len(man.Layers) != 1 || man.Layers[0].MediaType != "application/vnd.cncf.artifacthub.repository-metadata.layer.v1.yaml" ||
		man.Layers[0].Digest != digest.SHA256.FromBytes(art.Layer).String() || man.Layers[0].Size != int64(len(art.Layer)) || !bytes.Equal(art.Layer, y) {
		t.Errorf("manifest %s", art.Manifest)
	}
	if art.ManifestDigest != digest.SHA256.FromBytes(art.Manifest).String() {
		t.Errorf("manifest digest %s", art.ManifestDigest)
	}
}
