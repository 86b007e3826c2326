package netguard

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// TestUpstreamHonoursTheProxyAfterCheckingTheTarget: with HTTPS_PROXY /
// HTTP_PROXY set, an upstream fetch goes through the proxy (whose own
// address is private: the operator configured it), but only after the
// target itself passed the guard; NO_PROXY targets are dialled directly,
// through the guard (decision 5).
func TestUpstreamHonoursTheProxyAfterCheckingTheTarget(t *testing.T) {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A forward proxy receives the absolute URL of the target.
		io.WriteString(w, "via proxy: "+r.URL.String())
	}))
	defer proxy.Close()
	env := &httpproxy.Config{HTTPProxy: proxy.URL, HTTPSProxy: proxy.URL, NoProxy: "203.0.113.9"}
	get := func(t *testing.T, allowPrivate bool, target string) (string, error) {
		t.Helper()
		c := &http.Client{Transport: upstream(5*time.Second, Allowance{All: allowPrivate}, "--allow-private-upstreams", env, net.DefaultResolver)}
		resp, err := c.Get(target)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}

	// A public target goes through the (loopback) proxy.
	body, err := get(t, false, "http://93.184.216.34/index.yaml")
	if err != nil || body != "via proxy: http://93.184.216.34/index.yaml" {
		t.Fatalf("public target: %q, %v; want it fetched through the proxy", body, err)
	}
	// A private target is refused before the proxy is asked.
	if _, err := get(t, false, "http://10.0.0.1/index.yaml"); !errors.Is(err, ErrPrivateTarget) || !strings.Contains(err.Error(), "--allow-private-upstreams") {
		t.Fatalf("private target through the proxy: %v; want ErrPrivateTarget naming the flag", err)
	}
	// Allowed private targets go through the proxy too.
	if body, err := get(t, true, "http://10.0.0.1/index.yaml"); err != nil || !strings.HasPrefix(body, "via proxy: ") {
		t.Fatalf("allowed private target: %q, %v", body, err)
	}
	// A loopback target is never proxied (NO_PROXY's rule for loopback),
	// so the guarded dialer refuses it; the proxy's own address as a
	// target, which the dialer would let through, is refused before.
	for _, target := range []string{"http://127.0.0.1:1/index.yaml", proxy.URL + "/index.yaml"} {
		if _, err := get(t, false, target); !errors.Is(err, ErrPrivateTarget) {
			t.Fatalf("loopback target %s: %v; want ErrPrivateTarget", target, err)
		}
	}
}

func TestHostPort(t *testing.T) {
	for raw, want := range map[string]string{
		"http://proxy.corp":    "proxy.corp:80",
		"https://proxy.corp":   "proxy.corp:443",
		"http://10.0.0.5:3128": "10.0.0.5:3128",
		"socks5://[fd00::1]":   "[fd00::1]:1080",
	} {
		u, _ := url.Parse(raw)
		if got := hostPort(u); got != want {
			t.Errorf("hostPort(%s) = %s, want %s", raw, got, want)
		}
	}
}
