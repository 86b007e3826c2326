package harness

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseWrk(t *testing.T) {
	out := `Running 3s test @ http://127.0.0.1:8080/helm/bench/index.yaml
  2 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.12ms  512.00us   9.00ms   80.00%
    Req/Sec     7.20k   300.00    8.00k    70.00%
  43210 requests in 3.00s, 5.00GB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 4
Requests/sec:  14403.33
Transfer/sec:      1.67GB
`
	r, err := ParseWrk(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 43210 || r.RPS != 14403.33 || r.Errors != 7 {
		t.Fatalf("%+v", r)
	}
	if _, err := ParseWrk("unable to connect to 127.0.0.1:1 Connection refused\n"); err == nil {
		t.Fatal("output without a rate parsed")
	}
}

func TestNginxConfigHasTheIssueSettings(t *testing.T) {
	n := &Nginx{Dir: "/tmp/x", Root: "/tmp/x/www", Addr: "127.0.0.1:9999"}
	conf := n.Config()
	for _, want := range []string{"worker_processes auto;", "sendfile on;", "tcp_nopush on;", "access_log off;", "gzip_static on;", "listen 127.0.0.1:9999;", "root /tmp/x/www;", "daemon off;"} {
		if !strings.Contains(conf, want) {
			t.Errorf("config lacks %q", want)
		}
	}
	if err := (&Nginx{Dir: t.TempDir(), Root: t.TempDir(), Addr: "192.0.2.1:80"}).Start(context.Background()); err == nil {
		t.Fatal("nginx started on a non-loopback address")
	}
}

// With nginx installed, the harness's nginx serves a file and its .gz
// twin (gzip_static) the way the side-by-side relies on.
func TestNginxServesGzipStatic(t *testing.T) {
	if _, err := exec.LookPath("nginx"); err != nil {
		t.Skip("nginx not installed: " + NginxInstallHint)
	}
	// nginx's workers (nobody, when started by root) must reach the
	// root: a directory of its own in the temp dir, as the harness makes.
	dir, err := os.MkdirTemp("", "nginx-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	www := filepath.Join(dir, "www")
	os.MkdirAll(filepath.Join(www, "r"), 0o755)
	os.WriteFile(filepath.Join(www, "r", "index.yaml"), []byte("plain"), 0o644)
	os.WriteFile(filepath.Join(www, "r", "index.yaml.gz"), []byte("zipped"), 0o644)
	addr, err := FreeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	n := &Nginx{Dir: filepath.Join(dir, "nginx"), Root: www, Addr: addr}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	for enc, want := range map[string]string{"identity": "plain", "gzip": "zipped"} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/r/index.yaml", nil)
		req.Header.Set("Accept-Encoding", enc)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != want {
			t.Errorf("Accept-Encoding %s: %q, want %q", enc, b, want)
		}
	}
}
