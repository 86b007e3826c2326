package serve

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/testkit"
)

// startTLS runs the server in-process with cfg and returns its URL; it
// stops when the test ends.
func startTLS(t *testing.T, cfg Config) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, &Options{Config: cfg, Stderr: io.Discard, Ready: func(u string) { ready <- u }})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case u := <-ready:
		return u
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	}
	return ""
}

func TestServeHTTPSWithCurlAndHelm(t *testing.T) {
	curl := testkit.Tool(t, "CHARTCTL_CURL", "curl")
	helm := testkit.NewHelm(t)
	ca := testkit.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	c1, k1, s1 := ca.Issue(t, "localhost", "127.0.0.1")
	testkit.WriteFileAtomic(t, certFile, c1)
	testkit.WriteFileAtomic(t, keyFile, k1)

	cfg := DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Data = filepath.Join(dir, "data")
	cfg.TLSCert, cfg.TLSKey = certFile, keyFile
	cfg.RateLimitGlobal, cfg.RateLimitUpload, cfg.RateLimitSearch = ratelimit.Limit{}, ratelimit.Limit{}, ratelimit.Limit{}
	base := startTLS(t, cfg)
	if !strings.HasPrefix(base, "https://127.0.0.1:") {
		t.Fatalf("URL = %s, want https", base)
	}
	base = strings.Replace(base, "127.0.0.1", "localhost", 1)

	// curl over HTTP/2, checking the certificate against the test CA.
	out, err := exec.Command(curl, "-sS", "--http2", "--cacert", ca.CertFile, "-o", "/dev/null", "-w", "%{http_version} %{http_code}", base+"/readyz").CombinedOutput()
	if err != nil || string(out) != "2 200" {
		t.Fatalf("curl https /readyz: %v: %q", err, out)
	}
	// The TLS listener speaks nothing but TLS.
	plain := "http://" + strings.TrimPrefix(base, "https://")
	if out, _ := exec.Command(curl, "-sS", "-o", "/dev/null", "-w", "%{http_code}", plain+"/livez").CombinedOutput(); string(out) != "400" {
		t.Fatalf("plain HTTP on the TLS listener answered %q, want 400", out)
	}

	// A chart uploaded over HTTPS, then added and pulled with real Helm.
	key := readAdminKey(t, cfg.Data)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}}}
	post := func(path, ctype string, body []byte) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", ctype)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
		}
	}
	post("/v1/repositories", "application/json", []byte(`{"name":"secure","visibility":"public"}`))
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": testkit.MakeChart(t, testkit.Chart{Name: "tlschart", Version: "1.2.3"})})
	post("/v1/repositories/secure/charts", ctype, body)

	helm.Must("repo", "add", "secure", base+"/helm/secure", "--ca-file", ca.CertFile)
	if out := helm.Must("search", "repo", "secure/"); !strings.Contains(out, "tlschart") {
		t.Fatalf("helm search:\n%s", out)
	}
	helm.Must("pull", "secure/tlschart", "--version", "1.2.3", "--ca-file", ca.CertFile)
	if _, err := os.Stat(filepath.Join(helm.Home, "tlschart-1.2.3.tgz")); err != nil {
		t.Fatalf("helm pull wrote nothing: %v", err)
	}

	// The certificate is replaced on disk: the running server serves the
	// new one without a restart.
	serial := func() int64 {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	if got := serial(); got != s1 {
		t.Fatalf("serial = %d, want %d", got, s1)
	}
	c2, k2, s2 := ca.Issue(t, "localhost", "127.0.0.1")
	testkit.WriteFileAtomic(t, keyFile, k2)
	testkit.WriteFileAtomic(t, certFile, c2)
	if got := serial(); got != s2 {
		t.Fatalf("after renewal serial = %d, want %d", got, s2)
	}
	out, err = exec.Command(curl, "-sS", "--cacert", ca.CertFile, base+"/livez").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"ok"`) {
		t.Fatalf("curl after renewal: %v: %s", err, out)
	}
}

func readAdminKey(t *testing.T, data string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, InitialAdminFile))
	if err != nil {
		t.Fatal(err)
	}
	var a InitialAdmin
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	return a.APIKey
}
