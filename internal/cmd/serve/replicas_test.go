package serve_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/testkit/s3test"
)

// replicaSet is three `chartctl serve` processes on one PostgreSQL
// database and one S3 bucket.
type replicaSet struct {
	procs []*proc
	key   string
	dbURL string
}

// startSharedReplicas starts two replicas of bin on one new PostgreSQL
// database and one new S3 bucket, sharing a secrets key, each with args
// besides; the set's key is the admin key whichever of them wrote.
func startSharedReplicas(t *testing.T, bin string, args ...string) *replicaSet {
	t.Helper()
	pg, s3 := pgtest.Start(t), s3test.Start(t)
	rs := &replicaSet{dbURL: pg.NewDatabase(t)}
	blobURL := s3.NewBucket(t)
	keyFile := filepath.Join(t.TempDir(), "secrets.key")
	if err := os.WriteFile(keyFile, bytes.Repeat([]byte("k"), 32), 0o600); err != nil {
		t.Fatal(err)
	}
	datas := []string{t.TempDir(), t.TempDir()}
	for _, d := range datas {
		rs.procs = append(rs.procs, startServe(t, bin, d, append([]string{"--database", rs.dbURL, "--blob-store", blobURL, "--secrets-key-file", keyFile}, args...)...))
	}
	for _, d := range datas {
		if _, err := os.Stat(filepath.Join(d, "initial-admin.json")); err == nil {
			rs.key = adminKey(t, d)
		}
	}
	return rs
}

// url returns replica i's URL (i taken modulo the replicas), as a load
// balancer spreading requests would.
func (rs *replicaSet) url(i int) string { return rs.procs[i%len(rs.procs)].url }

// converge waits until every live replica's index.yaml of repo satisfies
// ok, and returns how long that took. It fails after a bound far above
// the one-second promise (timed assertions are not made in tests; the
// latency is logged, and docs/performance.md reports it).
func (rs *replicaSet) converge(t *testing.T, repo string, live []int, ok func(index string) bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		done := true
		for _, i := range live {
			r, b, err := do(t, "GET", rs.procs[i].url+"/helm/"+repo+"/index.yaml", rs.key, nil, "")
			if err != nil || r.StatusCode != http.StatusOK || !ok(string(b)) {
				done = false
				break
			}
		}
		if done {
			return time.Since(start)
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("the replicas' indexes of %s did not converge", repo)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func upload(t *testing.T, url, key, repo string, c testkit.Chart) (int, []byte) {
	t.Helper()
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": testkit.MakeChart(t, c)})
	r, b, err := do(t, "POST", url+"/v1/repositories/"+repo+"/charts", key, bytes.NewReader(body), ctype)
	if err != nil {
		return 0, []byte(err.Error())
	}
	return r.StatusCode, b
}

// TestReplicas runs three replicas of the real binary on one PostgreSQL
// database and one versitygw bucket and checks the rules of scale-out
// (CONTRACT §12): the first-start admin created once, writes on one
// replica read on the others, the Helm index current everywhere (through
// notifications, and through the generation check when the listening
// connection is killed or the database restarts), rate limits and quotas
// exact over the replicas, one winner of racing pushes, each webhook event
// delivered once by the three dispatchers, download counts added up, a
// revoked key and a disabled or rotated robot refused by every replica, the
// OCI conformance suite passing behind a round-robin load balancer, and
// no acknowledged upload lost when a replica is killed.
func TestReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	pg := pgtest.Start(t)
	s3 := s3test.Start(t)
	bin := mustBinary(t)
	rs := &replicaSet{dbURL: pg.NewDatabase(t)}
	blobURL := s3.NewBucket(t)
	datas := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	// Every replica opens the webhook secrets any of them sealed.
	keyFile := filepath.Join(t.TempDir(), "secrets.key")
	if err := os.WriteFile(keyFile, bytes.Repeat([]byte("k"), 32), 0o600); err != nil {
		t.Fatal(err)
	}

	// Three replicas starting at once on an empty database: one creates
	// the admin, none fails.
	rs.procs = make([]*proc, 3)
	var wg sync.WaitGroup
	for i := range rs.procs {
		wg.Go(func() {
			rs.procs[i] = startServe(t, bin, datas[i], "--database", rs.dbURL, "--blob-store", blobURL,
				"--rate-limit-search", "30/1h", "--secrets-key-file", keyFile, "--allow-private-webhooks")
		})
	}
	wg.Wait()
	admins := 0
	for _, d := range datas {
		if _, err := os.Stat(filepath.Join(d, "initial-admin.json")); err == nil {
			admins++
			rs.key = adminKey(t, d)
		}
	}
	if admins != 1 {
		t.Fatalf("%d replicas wrote initial-admin.json, want 1", admins)
	}

	if r, b, err := do(t, "POST", rs.url(0)+"/v1/repositories", rs.key, strings.NewReader(`{"name":"shared","visibility":"public"}`), "application/json"); err != nil || r.StatusCode != 200 {
		t.Fatalf("create repo: %v %s", err, b)
	}
	// Every replica loads the (empty) index into memory.
	rs.converge(t, "shared", []int{0, 1, 2}, func(string) bool { return true })

	t.Run("WriteOnOneReadOnOthers", func(t *testing.T) {
		if code, b := upload(t, rs.url(0), rs.key, "shared", testkit.Chart{Name: "web", Version: "1.0.0"}); code != 200 {
			t.Fatalf("upload: %d %s", code, b)
		}
		took := rs.converge(t, "shared", []int{0, 1, 2}, func(ix string) bool { return hasVersion(ix, "1.0.0") })
		t.Logf("index.yaml current on every replica %v after the upload's answer", took)
		// The same versions render the same bytes everywhere: one ETag, so
		// a conditional request holds whichever replica answers it. So do
		// the JSON index (new repositories' format), the per-chart index
		// and the newest-N index.
		for _, p := range []string{"/helm/shared/index.yaml", "/helm/shared/charts/web/index.yaml", "/helm/shared/latest/3/index.yaml"} {
			etags, bodies, lastMod := map[string]bool{}, map[string]bool{}, map[string]bool{}
			for i := range rs.procs {
				r, b, err := do(t, "GET", rs.url(i)+p, rs.key, nil, "")
				if err != nil || r.StatusCode != 200 {
					t.Fatalf("%s from replica %d: %v", p, i, err)
				}
				if !json.Valid(b) {
					t.Errorf("%s from replica %d is not the JSON index:\n%s", p, i, b)
				}
				etags[r.Header.Get("ETag")], bodies[string(b)], lastMod[r.Header.Get("Last-Modified")] = true, true, true
			}
			if len(etags) != 1 || len(bodies) != 1 || len(lastMod) != 1 {
				t.Errorf("the replicas' %s differ: ETags %v, %d bodies, Last-Modified %v", p, etags, len(bodies), lastMod)
			}
		}
		for i := 1; i < 3; i++ {
			r, b, err := do(t, "GET", rs.url(i)+"/v1/repositories/shared/charts/web/1.0.0/archive", rs.key, nil, "")
			if err != nil || r.StatusCode != 200 || len(b) == 0 {
				t.Fatalf("download from replica %d: %v %d", i, err, r.StatusCode)
			}
		}
		// A delete on another replica disappears everywhere too.
		if r, b, err := do(t, "DELETE", rs.url(2)+"/v1/repositories/shared/charts/web/1.0.0", rs.key, nil, ""); err != nil || r.StatusCode != 200 {
			t.Fatalf("delete: %v %s", err, b)
		}
		rs.converge(t, "shared", []int{0, 1, 2}, func(ix string) bool { return !hasVersion(ix, "1.0.0") })
	})

	t.Run("RacingPushesOneWinner", func(t *testing.T) {
		codes := make([]int, 20)
		var wg sync.WaitGroup
		for i := range codes {
			wg.Go(func() {
				codes[i], _ = upload(t, rs.url(i), rs.key, "shared", testkit.Chart{Name: "race", Version: "1.0.0", Description: fmt.Sprintf("racer %d", i)})
			})
		}
		wg.Wait()
		count := map[int]int{}
		for _, c := range codes {
			count[c]++
		}
		if count[200] != 1 || count[409] != 19 {
			t.Fatalf("racing pushes answered %v, want one 200 and 19 409", count)
		}
	})

	t.Run("RateLimitExactAcrossReplicas", func(t *testing.T) {
		codes := make([]int, 60)
		var wg sync.WaitGroup
		for i := range codes {
			wg.Go(func() {
				r, _, err := do(t, "GET", rs.url(i)+"/v1/search?q=web", rs.key, nil, "")
				if err == nil {
					codes[i] = r.StatusCode
				}
			})
		}
		wg.Wait()
		count := map[int]int{}
		for _, c := range codes {
			count[c]++
		}
		if count[200] != 30 || count[429] != 30 {
			t.Fatalf("60 searches against 30/1h over three replicas answered %v, want 30 200 and 30 429", count)
		}
	})

	t.Run("QuotaExactAcrossReplicas", func(t *testing.T) {
		if r, b, err := do(t, "POST", rs.url(1)+"/v1/repositories", rs.key, strings.NewReader(`{"name":"capped"}`), "application/json"); err != nil || r.StatusCode != 200 {
			t.Fatalf("create repo: %v %s", err, b)
		}
		if r, b, err := do(t, "PUT", rs.url(2)+"/v1/repositories/capped/quota", rs.key, strings.NewReader(`{"max_versions":3}`), "application/json"); err != nil || r.StatusCode != 200 {
			t.Fatalf("set quota: %v %s", err, b)
		}
		codes := make([]int, 12)
		var wg sync.WaitGroup
		for i := range codes {
			wg.Go(func() {
				codes[i], _ = upload(t, rs.url(i), rs.key, "capped", testkit.Chart{Name: "web", Version: fmt.Sprintf("1.0.%d", i)})
			})
		}
		wg.Wait()
		count := map[int]int{}
		for _, c := range codes {
			count[c]++
		}
		if count[200] != 3 || count[507] != 9 {
			t.Fatalf("12 uploads against a quota of 3 versions over three replicas answered %v, want 3 200 and 9 507", count)
		}
	})

	t.Run("WebhookDeliveredOnceByTheReplicas", func(t *testing.T) {
		var (
			mu   sync.Mutex
			seen = map[string]int{}
		)
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[r.Header.Get("webhook-id")]++
			mu.Unlock()
		}))
		defer hook.Close()
		r, b, err := do(t, "POST", rs.url(0)+"/v1/repositories/shared/webhooks", rs.key,
			strings.NewReader(`{"url":"`+hook.URL+`","events":["chart.pushed"]}`), "application/json")
		if err != nil || r.StatusCode != 200 {
			t.Fatalf("create webhook: %v %s", err, b)
		}
		const pushes = 6
		for i := range pushes {
			if code, b := upload(t, rs.url(i), rs.key, "shared", testkit.Chart{Name: "hooked", Version: fmt.Sprintf("1.0.%d", i)}); code != 200 {
				t.Fatalf("upload: %d %s", code, b)
			}
		}
		// Every replica's dispatcher polls the one queue; each event
		// arrives, signed with the key every replica shares, once.
		deadline := time.Now().Add(time.Minute)
		for {
			mu.Lock()
			n := len(seen)
			mu.Unlock()
			if n >= pushes {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the webhook received %d of %d events", n, pushes)
			}
			time.Sleep(50 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		for id, n := range seen {
			if id == "" || n != 1 {
				t.Fatalf("event %q delivered %d times", id, n)
			}
		}
	})

	t.Run("DownloadsAddUpAcrossReplicas", func(t *testing.T) {
		// Each replica counts its own downloads and adds them to the one
		// counter when it flushes (every 5 s).
		for i := range 6 {
			r, _, err := do(t, "GET", rs.url(i)+"/v1/repositories/shared/charts/hooked/1.0.0/archive", rs.key, nil, "")
			if err != nil || r.StatusCode != 200 {
				t.Fatalf("download from replica %d: %v", i, err)
			}
		}
		deadline := time.Now().Add(time.Minute)
		for {
			r, b, err := do(t, "GET", rs.url(0)+"/v1/repositories/shared/charts/hooked/1.0.0", rs.key, nil, "")
			var got struct {
				Data struct {
					Downloads int64 `json:"downloads"`
				} `json:"data"`
			}
			if err != nil || r.StatusCode != 200 || json.Unmarshal(b, &got) != nil {
				t.Fatalf("get version: %v %s", err, b)
			}
			if got.Data.Downloads == 6 {
				break
			}
			if got.Data.Downloads > 6 || time.Now().After(deadline) {
				t.Fatalf("downloads = %d, want 6", got.Data.Downloads)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})

	t.Run("KeyRevokedOnEveryReplica", func(t *testing.T) {
		r, b, err := do(t, "POST", rs.url(0)+"/v1/user/api-keys", rs.key, strings.NewReader(`{"name":"ci","scopes":["repo:read"]}`), "application/json")
		var created struct {
			Data struct {
				ID  string `json:"id"`
				Key string `json:"key"`
			} `json:"data"`
		}
		if err != nil || r.StatusCode != 200 || json.Unmarshal(b, &created) != nil || created.Data.Key == "" {
			t.Fatalf("create key: %v %s", err, b)
		}
		// Every replica accepts it (and caches it).
		for i := range 3 {
			if r, b, err := do(t, "GET", rs.url(i)+"/v1/repositories", created.Data.Key, nil, ""); err != nil || r.StatusCode != 200 {
				t.Fatalf("replica %d refused the new key: %v %s", i, err, b)
			}
		}
		if r, b, err := do(t, "DELETE", rs.url(0)+"/v1/user/api-keys/"+created.Data.ID, rs.key, nil, ""); err != nil || r.StatusCode >= 300 {
			t.Fatalf("delete key: %v %s", err, b)
		}
		// The others drop it from their caches on the notification, long
		// before the cache's own expiry (30 s).
		start := time.Now()
		for i := 1; i < 3; i++ {
			for {
				r, _, err := do(t, "GET", rs.url(i)+"/v1/repositories", created.Data.Key, nil, "")
				if err == nil && r.StatusCode == http.StatusUnauthorized {
					break
				}
				if time.Since(start) > 20*time.Second {
					t.Fatalf("replica %d still accepts a revoked key", i)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		t.Logf("a revoked key was refused by every replica %v after the revocation", time.Since(start))
	})

	t.Run("RobotStoppedOnEveryReplica", func(t *testing.T) {
		// A robot account on PostgreSQL: its secret works on every
		// replica; disabled, or rotated without grace, on one replica, the
		// others refuse the secret when told, long before the cache's own
		// expiry (30 s).
		for _, req := range []struct{ path, body string }{
			{"/v1/organizations", `{"name":"robo"}`},
			{"/v1/repositories", `{"name":"robo-charts","organization":"robo"}`},
		} {
			if r, b, err := do(t, "POST", rs.url(0)+req.path, rs.key, strings.NewReader(req.body), "application/json"); err != nil || r.StatusCode != 200 {
				t.Fatalf("POST %s: %v %s", req.path, err, b)
			}
		}
		var created struct {
			Data struct {
				Secret string `json:"secret"`
			} `json:"data"`
		}
		r, b, err := do(t, "POST", rs.url(1)+"/v1/organizations/robo/robots", rs.key,
			strings.NewReader(`{"name":"ci","repositories":["robo-*"],"permissions":["push"]}`), "application/json")
		if err != nil || r.StatusCode != 200 || json.Unmarshal(b, &created) != nil || created.Data.Secret == "" {
			t.Fatalf("create robot: %v %s", err, b)
		}
		secret := created.Data.Secret
		pushes := 0
		acceptedEverywhere := func(secret string) {
			t.Helper()
			for i := range 3 {
				pushes++
				if code, b := upload(t, rs.url(i), secret, "robo-charts", testkit.Chart{Name: "ci", Version: fmt.Sprintf("1.0.%d", pushes)}); code != 200 {
					t.Fatalf("replica %d refused the robot's push: %d %s", i, code, b)
				}
			}
		}
		refusedByOthers := func(secret, what string) {
			t.Helper()
			start := time.Now()
			for i := 1; i < 3; i++ {
				for {
					r, _, err := do(t, "GET", rs.url(i)+"/v1/user", secret, nil, "")
					if err == nil && r.StatusCode == http.StatusUnauthorized {
						break
					}
					if time.Since(start) > 20*time.Second {
						t.Fatalf("replica %d still accepts a robot %s on another", i, what)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			t.Logf("a robot %s on one replica was refused by the others %v later", what, time.Since(start))
		}
		acceptedEverywhere(secret)
		if r, b, err := do(t, "PATCH", rs.url(0)+"/v1/organizations/robo/robots/ci", rs.key, strings.NewReader(`{"disabled":true}`), "application/json"); err != nil || r.StatusCode != 200 {
			t.Fatalf("disable: %v %s", err, b)
		}
		refusedByOthers(secret, "disabled")
		if r, b, err := do(t, "PATCH", rs.url(0)+"/v1/organizations/robo/robots/ci", rs.key, strings.NewReader(`{"disabled":false}`), "application/json"); err != nil || r.StatusCode != 200 {
			t.Fatalf("enable: %v %s", err, b)
		}
		acceptedEverywhere(secret)
		if r, b, err := do(t, "POST", rs.url(0)+"/v1/organizations/robo/robots/ci/rotate", rs.key, nil, ""); err != nil || r.StatusCode != 200 || json.Unmarshal(b, &created) != nil {
			t.Fatalf("rotate: %v %s", err, b)
		}
		refusedByOthers(secret, "rotated without grace")
		acceptedEverywhere(created.Data.Secret)
	})

	t.Run("ChunkedOCIUploadAcrossReplicas", func(t *testing.T) {
		// An OCI client's chunked blob upload whose requests a load
		// balancer spreads over the replicas: the session starts on one,
		// each chunk and the completion go to another, and the blob is
		// served by the third. The chunks live in the bucket.
		send := func(method, url string, body []byte, header ...string) *http.Response {
			t.Helper()
			req, err := http.NewRequest(method, url, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.SetBasicAuth("ci", rs.key)
			for i := 0; i+1 < len(header); i += 2 {
				req.Header.Set(header[i], header[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		r := send("POST", rs.url(0)+"/v2/shared/layers/blobs/uploads/", nil)
		loc := r.Header.Get("Location")
		if r.StatusCode != http.StatusAccepted || loc == "" {
			t.Fatalf("start upload: %d", r.StatusCode)
		}
		data := bytes.Repeat([]byte("chunked across replicas "), 1000)
		chunks := [][]byte{data[:7000], data[7000:15000], data[15000:]}
		off := 0
		for i, c := range chunks[:2] {
			r := send("PATCH", rs.url(i+1)+loc, c, "Content-Type", "application/octet-stream",
				"Content-Range", fmt.Sprintf("%d-%d", off, off+len(c)-1))
			if r.StatusCode != http.StatusAccepted {
				t.Fatalf("chunk %d on replica %d: %d", i, i+1, r.StatusCode)
			}
			off += len(c)
			loc = r.Header.Get("Location")
		}
		sum := sha256.Sum256(data)
		dg := "sha256:" + hex.EncodeToString(sum[:])
		sep := "?"
		if strings.Contains(loc, "?") {
			sep = "&"
		}
		r = send("PUT", rs.url(0)+loc+sep+"digest="+dg, chunks[2], "Content-Type", "application/octet-stream",
			"Content-Range", fmt.Sprintf("%d-%d", off, len(data)-1))
		if r.StatusCode != http.StatusCreated {
			t.Fatalf("complete on replica 0: %d", r.StatusCode)
		}
		req, _ := http.NewRequest("GET", rs.url(2)+"/v2/shared/layers/blobs/"+dg, nil)
		req.SetBasicAuth("ci", rs.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Equal(got, data) {
			t.Fatalf("blob from replica 2: %d, %d bytes", resp.StatusCode, len(got))
		}
	})

	t.Run("OCIConformanceBehindLoadBalancer", func(t *testing.T) {
		// The OCI conformance suite against the three replicas behind a
		// round-robin balancer: every request of a push, a pull, a
		// referrers query or a delete may land on another replica than
		// the one before, so each must see what the others just stored.
		// Each replica answers its hottest reads from memory, under the
		// epoch the replicas share (internal/postgres/sharedepoch.go):
		// the suite checks that no answer outlives a write elsewhere.
		for i := range rs.procs {
			for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
				_, b, err := do(t, "GET", rs.url(i)+"/metrics", rs.key, nil, "")
				if err == nil && strings.Contains(string(b), "\nchartctl_registry_memos 1\n") {
					break
				}
				if time.Since(start) > 20*time.Second {
					t.Fatalf("replica %d does not answer from its memos: %v\n%s", i, err, b)
				}
			}
		}
		lb, requests := rs.balancer(t)
		if r, b, err := do(t, "POST", lb.URL+"/v1/repositories", rs.key, strings.NewReader(`{"name":"conformance","visibility":"private"}`), "application/json"); err != nil || r.StatusCode != 200 {
			t.Fatalf("create repo: %v %s", err, b)
		}
		testkit.RunOCIConformance(t, testkit.OCIConformance{
			Registry: strings.TrimPrefix(lb.URL, "http://"),
			Repo1:    "conformance/repo1", Repo2: "conformance/repo2",
			Username: "conformance", Password: rs.key,
		})
		t.Logf("%d requests spread over %d replicas", requests(), len(rs.procs))
	})

	t.Run("HelmOCIBehindLoadBalancer", func(t *testing.T) {
		// Helm's own push and pull through the balancer: the blobs, the
		// manifest and the token exchange of one `helm push` land on
		// different replicas, and the chart is a chart version on all.
		h := testkit.NewHelm(t).Fresh(t)
		lb, _ := rs.balancer(t)
		host := strings.TrimPrefix(lb.URL, "http://")
		pushed := testkit.MakeChart(t, testkit.Chart{Name: "lbweb", Version: "1.0.0"})
		h.Must("registry", "login", host, "--username", "ci", "--password", rs.key, "--plain-http")
		h.Must("push", h.Write("lbweb-1.0.0.tgz", pushed), "oci://"+host+"/shared", "--plain-http")
		rs.converge(t, "shared", []int{0, 1, 2}, func(ix string) bool { return strings.Contains(ix, "lbweb-1.0.0.tgz") })
		for i := range rs.procs {
			r, b, err := do(t, "GET", rs.url(i)+"/helm/shared/charts/lbweb-1.0.0.tgz", rs.key, nil, "")
			if err != nil || r.StatusCode != 200 || !bytes.Equal(b, pushed) {
				t.Fatalf("classic download of the OCI push from replica %d: %v %d", i, err, r.StatusCode)
			}
		}
		uploaded := testkit.MakeChart(t, testkit.Chart{Name: "lbweb", Version: "1.1.0"})
		body, ctype := testkit.Multipart(t, map[string][]byte{"chart": uploaded})
		if r, b, err := do(t, "POST", rs.url(1)+"/v1/repositories/shared/charts", rs.key, bytes.NewReader(body), ctype); err != nil || r.StatusCode != 200 {
			t.Fatalf("upload: %v %s", err, b)
		}
		for version, want := range map[string][]byte{"1.0.0": pushed, "1.1.0": uploaded} {
			dir := t.TempDir()
			h.Must("pull", "oci://"+host+"/shared/lbweb", "--version", version, "--plain-http", "-d", dir)
			got, err := os.ReadFile(filepath.Join(dir, "lbweb-"+version+".tgz"))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("helm pull oci:// %s through the balancer: %v (%d bytes, want %d)", version, err, len(got), len(want))
			}
		}
	})

	t.Run("ListenerKilled", func(t *testing.T) {
		conn, err := pgx.Connect(context.Background(), rs.dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var killed int
		if err := conn.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE application_name = 'chartctl-index-listener'`).Scan(&killed); err != nil || killed != 3 {
			t.Fatalf("terminated %d listening connections (%v), want 3", killed, err)
		}
		// Changes made while they are down reach every index anyway.
		if code, b := upload(t, rs.url(0), rs.key, "shared", testkit.Chart{Name: "web", Version: "2.0.0"}); code != 200 {
			t.Fatalf("upload: %d %s", code, b)
		}
		took := rs.converge(t, "shared", []int{0, 1, 2}, func(ix string) bool { return hasVersion(ix, "2.0.0") })
		t.Logf("index.yaml current on every replica %v after the upload, with the listeners killed", took)
	})

	t.Run("DatabaseRestartedUnderLoad", func(t *testing.T) {
		stop := make(chan struct{})
		var loaded sync.WaitGroup
		for w := range 3 {
			loaded.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					upload(t, rs.url(w), rs.key, "shared", testkit.Chart{Name: fmt.Sprintf("load%d", w), Version: fmt.Sprintf("1.0.%d", n)})
				}
			})
		}
		time.Sleep(300 * time.Millisecond)
		pg.Stop(t)
		time.Sleep(300 * time.Millisecond)
		pg.Restart(t)
		close(stop)
		loaded.Wait()
		// Every replica serves again by itself, and their indexes agree
		// with the database.
		if code, b := upload(t, rs.url(1), rs.key, "shared", testkit.Chart{Name: "web", Version: "3.0.0"}); code != 200 {
			t.Fatalf("upload after the restart: %d %s", code, b)
		}
		r, list, err := do(t, "GET", rs.url(2)+"/v1/repositories/shared/charts?limit=1", rs.key, nil, "")
		var page struct {
			Meta struct {
				Total int `json:"total"`
			} `json:"meta"`
		}
		if err != nil || r.StatusCode != 200 || json.Unmarshal(list, &page) != nil || page.Meta.Total == 0 {
			t.Fatalf("list: %v %s", err, list)
		}
		want := page.Meta.Total
		took := rs.converge(t, "shared", []int{0, 1, 2}, func(ix string) bool {
			return hasVersion(ix, "3.0.0") && countVersions(ix) == want
		})
		t.Logf("indexes converged %v after the first upload following the database's return", took)
	})

	t.Run("Kill9DuringConcurrentPushers", func(t *testing.T) {
		type ack struct{ name, version string }
		var mu sync.Mutex
		var acked []ack
		var wg sync.WaitGroup
		for w := range 16 {
			wg.Go(func() {
				for n := range 8 {
					c := testkit.Chart{Name: fmt.Sprintf("push%d", w), Version: fmt.Sprintf("1.%d.0", n)}
					if code, _ := upload(t, rs.url(w+n), rs.key, "shared", c); code == 200 {
						mu.Lock()
						acked = append(acked, ack{c.Name, c.Version})
						mu.Unlock()
					}
				}
			})
		}
		time.Sleep(200 * time.Millisecond)
		if err := rs.procs[2].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if len(acked) == 0 {
			t.Fatal("no upload was acknowledged")
		}
		for _, a := range acked {
			for i := range 2 {
				r, b, err := do(t, "GET", rs.url(i)+"/v1/repositories/shared/charts/"+a.name+"/"+a.version+"/archive", rs.key, nil, "")
				if err != nil || r.StatusCode != 200 || len(b) == 0 {
					t.Fatalf("acknowledged %s %s from replica %d: %v %d", a.name, a.version, i, err, r.StatusCode)
				}
			}
		}
		t.Logf("%d acknowledged uploads, all present on the surviving replicas", len(acked))
	})
}

// balancer starts a round-robin load balancer in front of the replicas
// and returns it with a count of the requests it has passed on.
func (rs *replicaSet) balancer(t *testing.T) (*httptest.Server, func() uint64) {
	t.Helper()
	var next atomic.Uint64
	targets := make([]*url.URL, len(rs.procs))
	for i, p := range rs.procs {
		u, err := url.Parse(p.url)
		if err != nil {
			t.Fatal(err)
		}
		targets[i] = u
	}
	lb := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(targets[next.Add(1)%uint64(len(targets))])
		r.Out.Host = r.In.Host
	}})
	t.Cleanup(lb.Close)
	return lb, next.Load
}

// hasVersion reports whether an index.yaml, YAML or JSON, lists version.
func hasVersion(index, version string) bool {
	var ix struct {
		Entries map[string][]struct {
			Version string `json:"version"`
		} `json:"entries"`
	}
	if yaml.Unmarshal([]byte(index), &ix) != nil {
		return false
	}
	for _, vs := range ix.Entries {
		for _, v := range vs {
			if v.Version == version {
				return true
			}
		}
	}
	return false
}

// countVersions counts the version entries of an index.yaml, YAML or
// JSON; -1 if it does not parse.
func countVersions(index string) int {
	var ix struct {
		Entries map[string][]struct{} `json:"entries"`
	}
	if yaml.Unmarshal([]byte(index), &ix) != nil {
		return -1
	}
	n := 0
	for _, vs := range ix.Entries {
		n += len(vs)
	}
	return n
}
