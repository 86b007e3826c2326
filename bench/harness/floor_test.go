package harness

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// TestFloorSendsChartctlHeaders checks that the floor answers with the
// headers chartctl sent besides the body (floorHeader), those it sets
// itself excepted, in process and through a child's spec.
func TestFloorSendsChartctlHeaders(t *testing.T) {
	chartctl := http.Header{
		"Date":                            {"Mon, 30 Nov 2026 10:33:25 GMT"},
		"Content-Length":                  {"999"},
		"Content-Encoding":                {"gzip"},
		"Etag":                            {`"sha256:abc"`},
		"X-Request-Id":                    {"45245d3d2b12bb5c98165d77"},
		"Docker-Content-Digest":           {"sha256:abc"},
		"Docker-Distribution-Api-Version": {"registry/2.0"},
		"Cache-Control":                   {"max-age=31536000"},
	}
	h := floorHeader(chartctl)
	for _, k := range []string{"Date", "Content-Length", "Content-Encoding", "Etag"} {
		if _, ok := h[k]; ok {
			t.Errorf("floorHeader kept %s", k)
		}
	}
	// A child gets the headers through its spec file.
	spec := floorSpec{"/blob": {Body: "b", ETag: `"sha256:abc"`, Header: h}}
	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var back floorSpec
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if got := back["/blob"].Header.Get("X-Request-Id"); got != "45245d3d2b12bb5c98165d77" {
		t.Fatalf("spec round trip lost the headers: %v", back["/blob"].Header)
	}

	f := &floorServer{files: map[string]floorFile{"/blob": {body: []byte("blob bytes"), etag: `"sha256:abc"`, header: back["/blob"].Header}}}
	base, err := f.listen()
	if err != nil {
		t.Fatal(err)
	}
	defer f.stop()
	resp, err := http.Get(base + "/blob")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "blob bytes" || resp.ContentLength != int64(len(body)) {
		t.Fatalf("body %q, length %d", body, resp.ContentLength)
	}
	for _, k := range []string{"X-Request-Id", "Docker-Content-Digest", "Docker-Distribution-Api-Version", "Cache-Control", "Etag"} {
		if resp.Header.Get(k) != chartctl.Get(k) {
			t.Errorf("%s: %q, want chartctl's %q", k, resp.Header.Get(k), chartctl.Get(k))
		}
	}
	if resp.Header.Get("Date") == chartctl.Get("Date") || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("floor copied Date or Content-Encoding: %v", resp.Header)
	}
}
