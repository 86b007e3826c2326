package harness

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestTLSServers: with a run's certificate every server is configured
// for HTTPS (nginx, Distribution, zot, chartctl's arguments), the floor
// answers over TLS to a client that trusts the CA and refuses one that
// does not, and the targets' table halves each target.
func TestTLSServers(t *testing.T) {
	tl, err := NewTLS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var nilTLS *TLS
	if nilTLS.URL("127.0.0.1:1") != "http://127.0.0.1:1" || tl.URL("127.0.0.1:1") != "https://127.0.0.1:1" {
		t.Fatal("URL does not follow the scheme")
	}

	conf := (&Nginx{Dir: "/tmp/x", Root: "/tmp/x/www", Addr: "127.0.0.1:9999", TLS: tl}).Config()
	for _, want := range []string{"listen 127.0.0.1:9999 ssl;", "ssl_certificate " + tl.CertFile + ";", "ssl_certificate_key " + tl.KeyFile + ";"} {
		if !strings.Contains(conf, want) {
			t.Errorf("nginx config lacks %q:\n%s", want, conf)
		}
	}
	if plain := (&Nginx{Dir: "/tmp/x", Root: "/tmp/x/www", Addr: "127.0.0.1:9999"}).Config(); strings.Contains(plain, "ssl") {
		t.Errorf("plain nginx config mentions ssl:\n%s", plain)
	}
	dist, err := distributionPeer.config("/root", "127.0.0.1:5000", tl)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dist), "  tls:\n    certificate: "+tl.CertFile+"\n    key: "+tl.KeyFile+"\n") {
		t.Errorf("Distribution config without its tls block:\n%s", dist)
	}
	zb, err := zotPeer.config("/root", "127.0.0.1:5000", tl)
	if err != nil {
		t.Fatal(err)
	}
	var zc struct {
		HTTP struct {
			TLS struct{ Cert, Key string }
		}
	}
	if err := json.Unmarshal(zb, &zc); err != nil || zc.HTTP.TLS.Cert != tl.CertFile || zc.HTTP.TLS.Key != tl.KeyFile {
		t.Errorf("zot config without its tls block (%v):\n%s", err, zb)
	}
	args := strings.Join((&Process{Addr: "127.0.0.1:1", DataDir: "/d", TLS: tl}).Args(), " ")
	if !strings.Contains(args, "--tls-cert "+tl.CertFile+" --tls-key "+tl.KeyFile) {
		t.Errorf("chartctl's arguments: %s", args)
	}

	f := &floorServer{files: map[string]floorFile{"/blob": {body: []byte("bytes"), etag: `"e"`}}, tls: tl}
	u, err := f.listen()
	if err != nil {
		t.Fatal(err)
	}
	defer f.stop()
	if !strings.HasPrefix(u, "https://") {
		t.Fatalf("floor URL %s", u)
	}
	resp, err := tl.Trust(NewClient(1, 0)).Get(u + "/blob")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "bytes" || resp.Proto != "HTTP/1.1" {
		t.Fatalf("floor over TLS: %s %q", resp.Proto, body)
	}
	if _, err := NewClient(1, 0).Get(u + "/blob"); err == nil {
		t.Fatal("a client without the CA was answered")
	}

	rows := []*OCIRow{{Key: "raw-push", Label: "raw push", Rates: map[string][]float64{"chartctl": {30}, "distribution": {20}}}}
	md := (&OCIResults{Config: OCIConfig{Distribution: "registry", TLS: true}, Rows: rows}).Markdown()
	for _, want := range []string{"every server over TLS", "| raw push ≥ 2× Distribution, over TLS within 2× | Distribution | 20.0 | 1.50 | ≥ 1.0: met |"} {
		if !strings.Contains(md, want) {
			t.Errorf("TLS report lacks %q:\n%s", want, md)
		}
	}
}
