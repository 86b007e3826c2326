package serve_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TestReplicationOnReplicas runs a replication (issue #31) on two replicas
// of the real binary sharing one PostgreSQL database and one S3 bucket
// (site A) to a second chartctl on its own embedded store (site B), behind
// a reverse proxy that counts the uploads B receives. Ten versions pushed
// alternately through A1 and A2 each arrive at B exactly once and
// byte-identical (one replica delivers each event); with A1 killed, a
// push through A2 still arrives (the survivor delivers); and the status
// through either replica agrees: nothing pending, nothing failed.
func TestReplicationOnReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := mustBinary(t)

	// Site B: its own data dir, an embedded store, a repository "copy".
	bData := t.TempDir()
	b := startServe(t, bin, bData)
	bKey := adminKey(t, bData)
	if r, body, err := do(t, "POST", b.url+"/v1/repositories", bKey, strings.NewReader(`{"name":"copy"}`), "application/json"); err != nil || r.StatusCode != 200 {
		t.Fatalf("create copy on B: %v %s", err, body)
	}

	// The counting proxy in front of B: every ChartMuseum upload, by the
	// file name of its chart part.
	var (
		mu      sync.Mutex
		uploads = map[string]int{}
		others  []string
	)
	bURL, err := url.Parse(b.url)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(bURL) }}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/helm/api/copy/charts" {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			names := partFileNames(body, r.Header.Get("Content-Type"))
			mu.Lock()
			for _, n := range names {
				uploads[n]++
			}
			mu.Unlock()
			// A slow target keeps each task in flight while the other
			// replica looks for due tasks (the count is what is checked,
			// not the time).
			time.Sleep(100 * time.Millisecond)
		} else if r.Method != http.MethodGet && r.Method != http.MethodHead {
			mu.Lock()
			others = append(others, r.Method+" "+r.URL.Path)
			mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	defer front.Close()
	frontHost := strings.TrimPrefix(front.URL, "http://")

	// Site A: two replicas on one database and one bucket.
	rs := startSharedReplicas(t, bin, "--allow-private-upstreams=true", "--plain-http-upstreams", frontHost)
	if r, body, err := do(t, "POST", rs.url(0)+"/v1/repositories", rs.key, strings.NewReader(`{"name":"acme"}`), "application/json"); err != nil || r.StatusCode != 200 {
		t.Fatalf("create acme on A1: %v %s", err, body)
	}
	rep := fmt.Sprintf(`{"name":"dr","source":"acme","target":%q,"username":"admin","password":%q,"on":["push","delete"]}`,
		front.URL+"/helm/copy", bKey)
	if r, body, err := do(t, "POST", rs.url(0)+"/v1/replications", rs.key, strings.NewReader(rep), "application/json"); err != nil || r.StatusCode != 200 {
		t.Fatalf("create replication through A1: %v %s", err, body)
	}

	archives := map[string][]byte{}
	push := func(replica int, version string) {
		body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archives[version]})
		r, rb, err := do(t, "POST", rs.url(replica)+"/v1/repositories/acme/charts", rs.key, bytes.NewReader(body), ctype)
		if err != nil || r.StatusCode != 200 {
			t.Errorf("push web %s through A%d: %v %s", version, replica+1, err, rb)
		}
	}
	// arrived waits until B serves every pushed version byte-identical
	// (bounded far above what the replicator needs: a replica that was not
	// woken polls every 5s).
	arrived := func() {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for version, want := range archives {
			for {
				r, got, err := do(t, "GET", b.url+"/helm/copy/charts/web-"+version+".tgz", bKey, nil, "")
				if err == nil && r.StatusCode == 200 {
					if !bytes.Equal(got, want) {
						t.Fatalf("web %s on B differs from what A holds (%d bytes, want %d)", version, len(got), len(want))
					}
					break
				}
				if time.Now().After(deadline) {
					st, _ := status(t, rs.url(1), rs.key)
					t.Fatalf("web %s never arrived at B (status through A2: %+v); A1:\n%s\nA2:\n%s", version, st, rs.procs[0].stderr, rs.procs[1].stderr)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	// settled waits until the status through every live replica says
	// nothing is pending or failed, and checks they agree.
	settled := func(live []int) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			var sts []replStatus
			done := true
			for _, i := range live {
				st, err := status(t, rs.url(i), rs.key)
				if err != nil {
					t.Fatalf("status through A%d: %v", i+1, err)
				}
				if st.Failed != 0 || st.LastError != nil {
					t.Fatalf("status through A%d: %+v", i+1, st)
				}
				done = done && st.Pending == 0 && st.LastSuccessAt != ""
				sts = append(sts, st)
			}
			if done {
				for _, st := range sts[1:] {
					if st != sts[0] {
						t.Fatalf("the replicas disagree on the status: %+v", sts)
					}
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("replication never settled: %+v", sts)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	exactlyOnce := func() {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		for version := range archives {
			if n := uploads["web-"+version+".tgz"]; n != 1 {
				t.Errorf("B received web %s %d times, want once", version, n)
			}
		}
		if len(uploads) != len(archives) {
			t.Errorf("B received uploads %v, want one per pushed version (%d)", uploads, len(archives))
		}
		if len(others) != 0 {
			t.Errorf("B received other writes: %v", others)
		}
	}

	// Both replicas receive pushes at the same time, so both are woken
	// and look for due tasks at once: each task must still run once.
	for i := range 10 {
		v := fmt.Sprintf("1.0.%d", i)
		archives[v] = testkit.MakeChart(t, testkit.Chart{Name: "web", Version: v})
	}
	var wg sync.WaitGroup
	for replica := range 2 {
		wg.Go(func() {
			for i := replica; i < 10; i += 2 {
				push(replica, fmt.Sprintf("1.0.%d", i))
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	arrived()
	settled([]int{0, 1})
	exactlyOnce()

	// A1 dies; a push through A2 is delivered by A2.
	_ = rs.procs[0].cmd.Process.Kill()
	_, _ = rs.procs[0].cmd.Process.Wait()
	archives["2.0.0"] = testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "2.0.0"})
	push(1, "2.0.0")
	if t.Failed() {
		t.FailNow()
	}
	arrived()
	settled([]int{1})
	exactlyOnce()
}

// replStatus is GET /v1/replications/NAME/status's data.
type replStatus struct {
	Pending       int     `json:"pending"`
	Failed        int     `json:"failed"`
	LastSuccessAt string  `json:"last_success_at"`
	LastError     *string `json:"last_error"`
}

func status(t *testing.T, base, key string) (replStatus, error) {
	var out struct {
		Data replStatus `json:"data"`
	}
	r, b, err := do(t, "GET", base+"/v1/replications/dr/status", key, nil, "")
	if err != nil {
		return out.Data, err
	}
	if r.StatusCode != 200 {
		return out.Data, fmt.Errorf("HTTP %d: %s", r.StatusCode, b)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out.Data, fmt.Errorf("%v: %s", err, b)
	}
	return out.Data, nil
}

// partFileNames returns the file names of a multipart body's file parts.
func partFileNames(body []byte, ctype string) []string {
	_, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return []string{"unparsable: " + err.Error()}
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var names []string
	for {
		p, err := mr.NextPart()
		if err != nil {
			return names
		}
		if p.FileName() != "" && strings.HasSuffix(p.FileName(), ".tgz") {
			names = append(names, p.FileName())
		}
	}
}
