package serve_test

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TestServeACMEWithPebble runs the built binary as an operator would, with
// ACME settings in its config file and the ACME server's CA trusted through
// SSL_CERT_FILE, against a real Pebble: the first handshake obtains a
// certificate over TLS-ALPN-01 on --addr, cached in DATA/acme.
func TestServeACMEWithPebble(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary and Pebble")
	}
	const name = "charts.chartctl.test"
	port := testkit.FreePort(t)
	p := testkit.StartPebble(t, port, testkit.FreePort(t))
	bin := mustBinary(t)
	data := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	content := fmt.Sprintf("addr: 127.0.0.1:%d\ndata: %s\nacme-domain: [%s]\nacme-email: ops@example.com\nacme-directory: %s\nlog-format: json\n", port, data, name, p.Directory)
	if err := os.WriteFile(cfg, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+p.ListenerCA)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	defer func() {
		if !done {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	var logs strings.Builder
	sc := bufio.NewScanner(stderr)
	var serving map[string]any
	for sc.Scan() {
		logs.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "chartctl serving") {
			_ = json.Unmarshal(sc.Bytes(), &serving)
			break
		}
	}
	if serving == nil {
		t.Fatalf("server did not start:\n%s", logs.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	if serving["url"] != fmt.Sprintf("https://127.0.0.1:%d", port) || serving["config"] != cfg {
		t.Errorf("serving line = %v", serving)
	}

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.Roots(t), ServerName: name}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(fmt.Sprintf("https://127.0.0.1:%d/readyz", port))
	if err != nil {
		t.Fatalf("HTTPS with an ACME certificate: %v\n%s", err, logs.String())
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 2 || resp.TLS.PeerCertificates[0].DNSNames[0] != name {
		t.Errorf("readyz = %d %s %s, certificate for %v", resp.StatusCode, resp.Proto, body, resp.TLS.PeerCertificates[0].DNSNames)
	}
	entries, err := os.ReadDir(filepath.Join(data, "acme"))
	if err != nil || len(entries) < 2 {
		t.Errorf("DATA/acme = %v (%v), want the account key and the certificate", entries, err)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
	done = true
}
