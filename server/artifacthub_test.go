package server_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/opencontainers/go-digest"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// mustArtifactHubSchema compiles Artifact Hub's published schema of
// artifacthub-repo.yml (SchemaStore's artifacthub-repo.json, kept as test
// data), formats asserted.
func mustArtifactHubSchema(tb testing.TB) *jsonschema.Schema {
	tb.Helper()
	b, err := os.ReadFile("../internal/artifacthub/testdata/artifacthub-repo.schema.json")
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

// validYAML fails unless file is YAML that Artifact Hub's schema accepts.
func validYAML(tb testing.TB, sch *jsonschema.Schema, what string, file []byte) {
	tb.Helper()
	js, err := yaml.YAMLToJSON(file)
	if err != nil {
		tb.Fatalf("%s is not YAML: %v\n%s", what, err, file)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		tb.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		tb.Errorf("%s does not match Artifact Hub's schema: %v\n%s", what, err, file)
	}
}

// startWithRegistry starts a server with the OCI registry under /v2.
func startWithRegistry(t *testing.T) *testkit.Server {
	t.Helper()
	return testkit.StartServer(t, func(s *server.Server) {
		s.Extra = func(e *echo.Echo) {
			blobs := s.Blobs.(*blob.Store)
			reg := registry.New(s.App(), s.Store.(*bolt.DB), blobs, filepath.Join(filepath.Dir(blobs.Root()), "uploads"))
			reg.Auth, reg.Limits, reg.Uploads = s, s, s
			reg.SessionKey = []byte("artifacthub test: upload session key")
			reg.Register(e)
		}
	})
}

const ahJSON = `{"repositoryID":"2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab","owners":[{"name":"ada","email":"ada@example.com"}],"ignore":[{"name":"internal-tool"},{"name":"web","version":"^0\\."}]}`

// TestArtifactHubRepoServedByBothRoutes: a repository admin sets the
// metadata (JSON, then the YAML file); Artifact Hub reads it anonymously
// from a public repository beside index.yaml and as the artifacthub.io
// tag of a chart's OCI repository, both valid against Artifact Hub's
// published schema; a private repository's stays private; removing it
// removes both.
func TestArtifactHubRepoServedByBothRoutes(t *testing.T) {
	s := startWithRegistry(t)
	sch := mustArtifactHubSchema(t)
	s.MustRepo(t, "pub", "public")
	s.MustRepo(t, "priv", "")
	for _, repo := range []string{"pub", "priv"} {
		if r := s.Upload(t, repo, s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"}), ""); r.StatusCode != 200 {
			t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
		}
	}
	// Nothing set: {} on /v1, 404 beside the index and under the tag.
	var got struct{ Data client.ArtifactHubRepo }
	if r := s.Do(t, "GET", "/v1/repositories/pub/artifacthub", s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("get unset: %d %s", r.StatusCode, r.Body)
	} else if r.JSON(t, &got); !reflect.DeepEqual(got.Data, client.ArtifactHubRepo{}) {
		t.Fatalf("unset = %+v", got.Data)
	}
	if r := s.Do(t, "GET", "/helm/pub/artifacthub-repo.yml", "", nil); r.StatusCode != 404 || !strings.Contains(string(r.Body), "chartctl repo artifacthub set") {
		t.Fatalf("unset file: %d %s", r.StatusCode, r.Body)
	}

	for _, repo := range []string{"pub", "priv"} {
		if r := s.Do(t, "PUT", "/v1/repositories/"+repo+"/artifacthub", s.AdminKey, strings.NewReader(ahJSON), "Content-Type", "application/json"); r.StatusCode != 200 {
			t.Fatalf("put %s: %d %s", repo, r.StatusCode, r.Body)
		}
	}
	want := client.ArtifactHubRepo{RepositoryID: "2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab", Owners: []client.ArtifactHubOwner{{Name: "ada", Email: "ada@example.com"}},
		Ignore: []client.ArtifactHubIgnore{{Name: "internal-tool"}, {Name: "web", Version: `^0\.`}}}
	s.Do(t, "GET", "/v1/repositories/pub/artifacthub", s.AdminKey, nil).JSON(t, &got)
	if !reflect.DeepEqual(got.Data, want) {
		t.Fatalf("get = %+v, want %+v", got.Data, want)
	}

	// Beside index.yaml, anonymously.
	r := s.Do(t, "GET", "/helm/pub/artifacthub-repo.yml", "", nil)
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("file: %d %s %s", r.StatusCode, r.Header.Get("Content-Type"), r.Body)
	}
	file := r.Body
	validYAML(t, sch, "/helm/pub/artifacthub-repo.yml", file)
	if !strings.Contains(string(file), "repositoryID: 2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab\n") || !strings.Contains(string(file), "version: ^0\\.") {
		t.Errorf("file:\n%s", file)
	}
	if r := s.Do(t, "GET", "/v1/repositories/pub/artifacthub", s.AdminKey, nil, "Accept", "application/yaml"); r.StatusCode != 200 || !bytes.Equal(r.Body, file) {
		t.Errorf("/v1 as YAML: %d\n%s", r.StatusCode, r.Body)
	}

	// The artifacthub.io tag, as Artifact Hub (oras) reads it.
	r = s.Do(t, "GET", "/v2/pub/web/manifests/artifacthub.io", "", nil, "Accept", "application/vnd.oci.image.manifest.v1+json")
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/vnd.oci.image.manifest.v1+json" {
		t.Fatalf("manifest: %d %s %s", r.StatusCode, r.Header.Get("Content-Type"), r.Body)
	}
	var man struct {
		Config struct{ MediaType, Digest string }
		Layers []struct{ MediaType, Digest string }
	}
	if err := json.Unmarshal(r.Body, &man); err != nil {
		t.Fatal(err)
	}
	mdg := r.Header.Get("Docker-Content-Digest")
	if mdg != digest.SHA256.FromBytes(r.Body).String() || man.Config.MediaType != "application/vnd.cncf.artifacthub.config.v1+yaml" ||
		len(man.Layers) != 1 || man.Layers[0].MediaType != "application/vnd.cncf.artifacthub.repository-metadata.layer.v1.yaml" {
		t.Fatalf("manifest %s (digest %s)", r.Body, mdg)
	}
	if r := s.Do(t, "GET", "/v2/pub/web/manifests/"+mdg, "", nil); r.StatusCode != 200 {
		t.Errorf("manifest by digest: %d %s", r.StatusCode, r.Body)
	}
	layer := s.Do(t, "GET", "/v2/pub/web/blobs/"+man.Layers[0].Digest, "", nil)
	if layer.StatusCode != 200 || !bytes.Equal(layer.Body, file) {
		t.Fatalf("layer: %d\n%s", layer.StatusCode, layer.Body)
	}
	validYAML(t, sch, "the artifacthub.io layer", layer.Body)
	if cfg := s.Do(t, "GET", "/v2/pub/web/blobs/"+man.Config.Digest, "", nil); cfg.StatusCode != 200 || len(cfg.Body) != 0 {
		t.Errorf("config: %d %q", cfg.StatusCode, cfg.Body)
	}
	// Only under a chart of the repository.
	if r := s.Do(t, "GET", "/v2/pub/nochart/manifests/artifacthub.io", "", nil); r.StatusCode != 404 {
		t.Errorf("a chart the repository lacks: %d %s", r.StatusCode, r.Body)
	}

	// A private repository's file is for its readers only.
	if r := s.Do(t, "GET", "/helm/priv/artifacthub-repo.yml", "", nil); r.StatusCode != 401 {
		t.Errorf("private file anonymously: %d", r.StatusCode)
	}
	if r := s.Do(t, "GET", "/v2/priv/web/manifests/artifacthub.io", "", nil); r.StatusCode != 401 {
		t.Errorf("private tag anonymously: %d", r.StatusCode)
	}
	if r := s.Do(t, "GET", "/helm/priv/artifacthub-repo.yml", s.AdminKey, nil); r.StatusCode != 200 {
		t.Errorf("private file for its admin: %d", r.StatusCode)
	}

	// The YAML file as it is replaces the metadata.
	yml := "owners:\n  - name: bob\n    email: bob@example.com\n"
	if r := s.Do(t, "PUT", "/v1/repositories/pub/artifacthub", s.AdminKey, strings.NewReader(yml), "Content-Type", "application/yaml"); r.StatusCode != 200 {
		t.Fatalf("put YAML: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, "GET", "/helm/pub/artifacthub-repo.yml", "", nil); string(r.Body) != yml {
		t.Errorf("after the YAML put:\n%s", r.Body)
	}
	if r := s.Do(t, "GET", "/v2/pub/web/manifests/"+mdg, "", nil); r.StatusCode != 404 {
		t.Errorf("the old manifest's digest still answers: %d", r.StatusCode)
	}

	// An empty document removes it from both routes.
	if r := s.DoJSON(t, "PUT", "/v1/repositories/pub/artifacthub", s.AdminKey, map[string]any{}); r.StatusCode != 200 {
		t.Fatalf("clear: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, "GET", "/helm/pub/artifacthub-repo.yml", "", nil); r.StatusCode != 404 {
		t.Errorf("cleared file: %d", r.StatusCode)
	}
	if r := s.Do(t, "GET", "/v2/pub/web/manifests/artifacthub.io", "", nil); r.StatusCode != 404 {
		t.Errorf("cleared tag: %d", r.StatusCode)
	}

	entries, _, err := s.Store.AuditLog(t.Context(), chartctl.AuditFilter{Action: "repository.artifacthub", Limit: 100})
	if err != nil || len(entries) != 4 {
		t.Errorf("audit entries %d, %v; want 4", len(entries), err)
	}
}

// TestArtifactHubRepoRefusals: documents Artifact Hub's schema refuses
// are 400 naming the place; other media types 415; only the repository's
// admins may set it.
func TestArtifactHubRepoRefusals(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "pub", "public")
	for _, tc := range []struct{ body, ctype, want string }{
		{`{"repositoryID":"not-a-uuid"}`, "application/json", "/repositoryID"},
		{`{"owners":[{"email":"nope"}]}`, "application/json", "/owners/0/email"},
		{`{"repositoryId":"2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab"}`, "application/json", "repositoryId"},
		{"ignore:\n  - version: '1.0'\n", "application/yaml", "/ignore/0"},
		{"ignore:\n  - name: web\n    version: '(['\n", "application/yaml", "regular expression"},
		{"owners: [", "application/yaml", "not valid YAML"},
	} {
		r := s.Do(t, "PUT", "/v1/repositories/pub/artifacthub", s.AdminKey, strings.NewReader(tc.body), "Content-Type", tc.ctype)
		if r.StatusCode != 400 || r.ErrorCode() != "invalid_parameter" || !strings.Contains(string(r.Body), tc.want) {
			t.Errorf("%s: %d %s, want 400 naming %q", tc.body, r.StatusCode, r.Body, tc.want)
		}
	}
	if r := s.Do(t, "PUT", "/v1/repositories/pub/artifacthub", s.AdminKey, strings.NewReader("owners: []"), "Content-Type", "text/plain"); r.StatusCode != 415 || !strings.Contains(string(r.Body), "application/yaml") {
		t.Errorf("text/plain: %d %s", r.StatusCode, r.Body)
	}
	writer := s.MustUser(t, "wanda@example.com", false)
	wkey := s.MustKey(t, writer, chartctl.AllScopes...)
	if r := s.DoJSON(t, "POST", "/v1/repositories/pub/access", s.AdminKey, map[string]string{"user": "wanda@example.com", "role": "maintain"}); r.StatusCode != 201 {
		t.Fatalf("grant: %d %s", r.StatusCode, r.Body)
	}
	if r := s.DoJSON(t, "PUT", "/v1/repositories/pub/artifacthub", wkey, map[string]any{}); r.StatusCode != 403 || !strings.Contains(string(r.Body), "admin") {
		t.Errorf("a maintainer sets it: %d %s", r.StatusCode, r.Body)
	}
	if r := s.DoJSON(t, "PUT", "/v1/repositories/pub/artifacthub", "", map[string]any{}); r.StatusCode != 401 {
		t.Errorf("anonymous: %d %s", r.StatusCode, r.Body)
	}
	if r := s.DoJSON(t, "POST", "/v1/repositories/pub/access", s.AdminKey, map[string]string{"user": "wanda@example.com", "role": "admin"}); r.StatusCode != 200 {
		t.Fatalf("grant admin: %d %s", r.StatusCode, r.Body)
	}
	if r := s.DoJSON(t, "PUT", "/v1/repositories/pub/artifacthub", wkey, map[string]any{"owners": []map[string]string{{"name": "wanda"}}}); r.StatusCode != 200 {
		t.Errorf("a repository admin sets it: %d %s", r.StatusCode, r.Body)
	}
}
