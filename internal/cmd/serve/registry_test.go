package serve_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TestBinaryServesOCI: the built binary mounts the registry on the same
// listener and store, so a chart uploaded over /v1 is pullable over OCI
// (manifest, then the layer, byte-identical to the upload).
func TestBinaryServesOCI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := mustBinary(t)
	data := t.TempDir()
	p := startServe(t, bin, data)
	key := adminKey(t, data)
	resp, _, err := do(t, "POST", p.url+"/v1/repositories", key, strings.NewReader(`{"name":"stable","visibility":"public"}`), "application/json")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("create repository: %v %v", err, resp)
	}
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.2.3"})
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive})
	if resp, b, err := do(t, "POST", p.url+"/v1/repositories/stable/charts", key, bytes.NewReader(body), ctype); err != nil || resp.StatusCode != 200 {
		t.Fatalf("upload: %v %v %s", err, resp, b)
	}

	// Anonymous OCI pull of a public repository.
	req, _ := http.NewRequest("GET", p.url+"/v2/stable/web/manifests/1.2.3", nil)
	req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
	mresp, err := http.DefaultClient.Do(req)
	if err != nil || mresp.StatusCode != 200 {
		t.Fatalf("manifest: %v %v", err, mresp)
	}
	var man struct {
		Config struct{ MediaType string } `json:"config"`
		Layers []struct {
			MediaType, Digest string
		} `json:"layers"`
	}
	if err := json.NewDecoder(mresp.Body).Decode(&man); err != nil {
		t.Fatal(err)
	}
	mresp.Body.Close()
	if man.Config.MediaType != "application/vnd.cncf.helm.config.v1+json" || len(man.Layers) == 0 {
		t.Fatalf("manifest is not a Helm chart's: %+v", man)
	}
	lresp, err := http.Get(p.url + "/v2/stable/web/blobs/" + man.Layers[0].Digest)
	if err != nil || lresp.StatusCode != 200 {
		t.Fatalf("layer: %v %v", err, lresp)
	}
	defer lresp.Body.Close()
	var got bytes.Buffer
	_, _ = got.ReadFrom(lresp.Body)
	if !bytes.Equal(got.Bytes(), archive) {
		t.Fatal("the OCI layer differs from the uploaded archive")
	}
}
