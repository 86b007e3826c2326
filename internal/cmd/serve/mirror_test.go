package serve_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
)

// upstreamRepo is a static Helm repository on 127.0.0.1 whose versions
// the test adds as it goes.
type upstreamRepo struct {
	mu    sync.Mutex
	files map[string][]byte
	index strings.Builder
	srv   *httptest.Server
}

func newUpstreamRepo(t *testing.T) *upstreamRepo {
	u := &upstreamRepo{files: map[string][]byte{}}
	u.index.WriteString("apiVersion: v1\nentries:\n  web:\n")
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		defer u.mu.Unlock()
		if r.URL.Path == "/index.yaml" {
			_, _ = w.Write([]byte(u.index.String()))
			return
		}
		b, ok := u.files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstreamRepo) add(t *testing.T, version string) {
	b := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: version})
	sum := sha256.Sum256(b)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.files["web-"+version+".tgz"] = b
	fmt.Fprintf(&u.index, "  - apiVersion: v2\n    name: web\n    version: %s\n    created: \"2025-03-04T05:06:07Z\"\n    digest: %s\n    urls: [web-%s.tgz]\n",
		version, hex.EncodeToString(sum[:]), version)
}

// getRepo returns the repository as the server shows it.
func getRepo(t *testing.T, base, key, name string) client.Repository {
	t.Helper()
	resp, body, err := do(t, "GET", base+"/v1/repositories/"+name, key, nil, "")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("get %s: %v %s", name, err, body)
	}
	var env struct{ Data client.Repository }
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	return env.Data
}

func createMirror(t *testing.T, base, key, name, upstream string) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"name": name, "mirror": map[string]string{"url": upstream, "interval": "1h"}})
	resp, body, err := do(t, "POST", base+"/v1/repositories", key, strings.NewReader(string(b)), "application/json")
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// waitMirror polls until the mirror's status is ok and its index lists
// version, failing after a bound far beyond what it takes.
func waitMirror(t *testing.T, base, key, name, version string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		m := getRepo(t, base, key, name).Mirror
		_, index, _ := do(t, "GET", base+"/helm/"+name+"/index.yaml", key, nil, "")
		// A new mirror serves a JSON index (the default index format).
		if m != nil && m.Status == "ok" && (strings.Contains(string(index), `"version":"`+version+`"`) || strings.Contains(string(index), "version: "+version)) {
			return
		}
		if m != nil && m.Status == "error" {
			t.Fatalf("the sync failed: %s", m.Error)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mirror did not get %s: %+v", version, m)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestBinaryMirrorsUpstream runs the real binary: with
// allow-private-upstreams set in its configuration file, a mirror created
// over /v1 is synced by serve's scheduler without being asked, and POST
// …/sync copies a version added upstream at once. Another server, without
// the setting, refuses the loopback upstream when it is saved and, given
// a name that resolves to loopback, when its sync connects.
func TestBinaryMirrorsUpstream(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := mustBinary(t)
	up := newUpstreamRepo(t)
	up.add(t, "1.0.0")

	conf := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(conf, []byte("allow-private-upstreams: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	p := startServe(t, bin, data, "--config", conf)
	key := adminKey(t, data)
	if status, body := createMirror(t, p.url, key, "upstream", up.srv.URL); status != 200 {
		t.Fatalf("create the mirror: %d %s", status, body)
	}
	waitMirror(t, p.url, key, "upstream", "1.0.0")

	up.add(t, "1.1.0")
	resp, body, err := do(t, "POST", p.url+"/v1/repositories/upstream/sync", key, nil, "")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("sync: %v %d %s", err, resp.StatusCode, body)
	}
	waitMirror(t, p.url, key, "upstream", "1.1.0")

	// Without the setting.
	data2 := t.TempDir()
	p2 := startServe(t, bin, data2)
	key2 := adminKey(t, data2)
	status, body := createMirror(t, p2.url, key2, "upstream", up.srv.URL)
	if status != 400 || !strings.Contains(string(body), "--allow-private-upstreams") {
		t.Fatalf("a loopback upstream without the setting: %d %s", status, body)
	}
	u, _ := url.Parse(up.srv.URL)
	if status, body := createMirror(t, p2.url, key2, "by-name", "http://localhost:"+u.Port()); status != 200 {
		t.Fatalf("create by name: %d %s", status, body)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		m := getRepo(t, p2.url, key2, "by-name").Mirror
		if m.Status == "error" {
			if !strings.Contains(m.Error, "could not connect to localhost:"+u.Port()+": it is at a private or loopback address") || strings.Contains(m.Error, "127.0.0.1") {
				t.Fatalf("the refusal says %q", m.Error)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sync of a name resolving to loopback did not fail: %+v", m)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
