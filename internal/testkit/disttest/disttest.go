// Package disttest runs a real CNCF Distribution registry (the `registry`
// binary of github.com/distribution/distribution/v3) for a test: a
// generated config with filesystem storage in a temp dir, deletes
// enabled, on a 127.0.0.1 port, anonymous or behind htpasswd Basic auth.
// The binary comes from CHARTCTL_DISTRIBUTION, else `registry` on PATH;
// without it a test skips, or fails under CHARTCTL_REQUIRE_E2E=1.
package disttest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/proc"
)

// Options choose how the registry is started.
type Options struct {
	// Username and Password, when set, put the registry behind htpasswd
	// Basic auth with that one account.
	Username, Password string
}

// Registry is a running Distribution registry.
type Registry struct {
	// Host is 127.0.0.1:PORT; URL is http://Host.
	Host, URL string

	tb      testing.TB
	bin     string
	conf    string
	logPath string
	proc    proc.Process
}

// Start starts a registry; tb's cleanup stops it.
func Start(tb testing.TB, o Options) *Registry {
	tb.Helper()
	bin := testkit.Tool(tb, "CHARTCTL_DISTRIBUTION", "registry")
	dir := tb.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	host := ln.Addr().String()
	_ = ln.Close()
	conf := fmt.Sprintf("version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n",
		filepath.Join(dir, "data"), host)
	if o.Username != "" {
		h, err := bcrypt.GenerateFromPassword([]byte(o.Password), bcrypt.MinCost)
		if err != nil {
			tb.Fatal(err)
		}
		pw := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(pw, []byte(o.Username+":"+string(h)+"\n"), 0o600); err != nil {
			tb.Fatal(err)
		}
		conf += fmt.Sprintf("auth:\n  htpasswd:\n    realm: disttest\n    path: %s\n", pw)
	}
	confPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		tb.Fatal(err)
	}
	r := &Registry{Host: host, URL: "http://" + host, tb: tb, bin: bin, conf: confPath, logPath: filepath.Join(dir, "registry.log")}
	r.Start()
	tb.Cleanup(r.Stop)
	return r
}

// Start (re)starts a stopped registry on the same address and storage.
func (r *Registry) Start() {
	r.tb.Helper()
	ready := func() error {
		resp, err := http.Get(r.URL + "/v2/")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	if err := r.proc.Start(exec.Command(r.bin, "serve", r.conf), r.logPath, 30*time.Second, ready, syscall.SIGTERM); err != nil {
		r.tb.Fatal(err)
	}
}

// Stop stops the registry (it may be started again).
func (r *Registry) Stop() { r.proc.Stop(syscall.SIGTERM, 10*time.Second) }
