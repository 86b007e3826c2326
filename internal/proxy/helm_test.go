package proxy_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/chartctl/chartctl/bench/harness"
	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
)

// freeAddr returns a loopback host:port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestProxyHelmClientNginx: nginx serves a static directory indexed by
// `helm repo index` (the plain upstream); each real Helm client adds the
// proxy repository and pulls a chart never fetched before, getting the
// upstream's bytes; with nginx stopped, `helm repo update` still works
// (the cached index, marked stale) and the cached chart still pulls.
func TestProxyHelmClientNginx(t *testing.T) {
	nginxBin := testkit.Tool(t, "CHARTCTL_NGINX", "nginx")
	helms := testkit.Helms(t)
	root := t.TempDir()
	// nginx's workers run as nobody: the path down to root must be open.
	for d := root; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	archives := map[string][]byte{}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		a := testkit.MakeChart(t, testkit.Chart{Name: "ingress", Version: v})
		archives[v] = a
		if err := os.WriteFile(filepath.Join(root, "ingress-"+v+".tgz"), a, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range helms {
		h.Must("repo", "index", root)
		break
	}
	ng := &harness.Nginx{Binary: nginxBin, Dir: t.TempDir(), Root: root, Addr: freeAddr(t)}
	if err := ng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer ng.Stop()

	e := setup(t, allowAll, ng.Addr)
	e.mustProxy(t, "ingress-nginx", client.ProxyRequest{URL: str("http://" + ng.Addr + "/")})
	for name, h := range helms {
		t.Run(name, func(t *testing.T) {
			h := h.With(t)
			h.Must("repo", "add", "px", e.URL+"/helm/ingress-nginx")
			dest := t.TempDir()
			h.Must("pull", "px/ingress", "--version", "1.1.0", "--destination", dest)
			got, err := os.ReadFile(filepath.Join(dest, "ingress-1.1.0.tgz"))
			if err != nil || !bytes.Equal(got, archives["1.1.0"]) {
				t.Fatalf("pulled %d bytes (%v), want the upstream's %d", len(got), err, len(archives["1.1.0"]))
			}
			// The template renders from the proxied chart.
			if out := h.Must("template", "r", "px/ingress", "--version", "1.1.0"); !bytes.Contains([]byte(out), []byte("kind: Deployment")) {
				t.Errorf("helm template: %s", out)
			}
		})
	}

	ng.Stop()
	e.Clock.Add(11 * 60e9) // past the default ttl of 10m
	for name, h := range helms {
		t.Run(name+"/upstream-down", func(t *testing.T) {
			h := h.With(t)
			h.Must("repo", "update", "px")
			dest := t.TempDir()
			h.Must("pull", "px/ingress", "--version", "1.1.0", "--destination", dest)
			if out, err := h.Run("pull", "px/ingress", "--version", "1.0.0", "--destination", dest); err == nil || !bytes.Contains([]byte(out), []byte("502")) {
				t.Errorf("uncached pull with nginx stopped: %v %s", err, out)
			}
		})
	}
}
