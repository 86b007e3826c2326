package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartdiff/helmrender"
	completioncmd "github.com/chartctl/chartctl/internal/cmd/completion"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/mirror"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/proxy"
	"github.com/chartctl/chartctl/internal/replication"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/oidcissuer"
	"github.com/chartctl/chartctl/server"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"chartctl": func() { os.Exit(Main()) },
	})
}

type serverKey struct{}
type tbKey struct{}
type issuerKey struct{}
type upstreamKey struct{}

// upstreamListener is the listener of a script's `serve` upstream.
type upstreamListener struct {
	ln   net.Listener
	used bool
}

// TestScripts runs testdata/script/*.txtar: each script gets its own real
// server (bbolt in a temp dir) and runs the real chartctl against it, with
// CHARTCTL_SERVER and CHARTCTL_TOKEN (the admin's key) set as in CI.
// fixtureDir holds the fixture charts fixturechart archives.
var fixtureDir, _ = filepath.Abs("../chartdiff/testdata")

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: false,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			tb := env.T().(testing.TB)
			// A test OIDC issuer the server trusts, as the operator's
			// --oidc-trust-insecure-issuers does (it listens on
			// 127.0.0.1), for the trusted-publishing scripts.
			iss := oidcissuer.New(tb)
			// Replications may target a repository of this same server
			// over plain http, as `chartctl serve` runs them with
			// --plain-http-upstreams naming it.
			ln := testkit.Listen(tb)
			self := ln.Addr().String()
			// The listener of the script's `serve` upstream, opened now:
			// proxies may reach it over plain http, as an operator's
			// --plain-http-upstreams would allow, and that list is fixed
			// when the server starts.
			upstream := testkit.Listen(tb)
			env.Defer(func() { _ = upstream.Close() })
			var syncer *mirror.Syncer
			var replicator *replication.Replicator
			srv := testkit.StartServerOn(tb, ln, func(s *server.Server) {
				// Charts render in the test's process (the bounded
				// child is tested in helmrender and internal/cmd/serve).
				s.Render = helmrender.InProcess(chart.DefaultLimits())
				s.Config.AllowPrivateUpstreams = true
				s.Config.OIDCRootCAs = iss.Pool
				s.Config.OIDCTrustInsecureIssuers = []string{iss.URL}
				s.Config.PlainHTTPUpstreams = []string{self, upstream.Addr().String()}
				// Wired before the start, as `chartctl serve` wires them:
				// mirrors may follow upstreams the scripts serve on
				// 127.0.0.1, and proxy repositories fetch from them (the
				// serve command below lists each in --plain-http-upstreams).
				a := s.App()
				syncer = mirror.New(a, s.Secrets, mirror.Options{Allow: netguard.Allowance{All: true}})
				a.WakeMirror = syncer.Request
				a.Proxies = proxy.New(a, s.Secrets, proxy.Options{Allow: netguard.Allowance{All: true}})
				replicator = replication.New(a, s.Secrets, nil, replication.Options{Allow: netguard.Allowance{All: true}, PlainHTTP: []string{self},
					Poll: 50 * time.Millisecond})
				a.WakeReplication = replicator.Wake
			})
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan struct{}, 2)
			go func() { defer func() { done <- struct{}{} }(); syncer.Run(ctx) }()
			go func() { defer func() { done <- struct{}{} }(); replicator.Run(ctx) }()
			env.Defer(func() { stop(); <-done; <-done })
			env.Values[serverKey{}] = srv
			env.Values[upstreamKey{}] = &upstreamListener{ln: upstream}
			env.Values[tbKey{}] = tb
			env.Values[issuerKey{}] = iss
			env.Setenv("OIDC_ISSUER", iss.URL)
			env.Setenv("CHARTCTL_SERVER", srv.URL)
			env.Setenv("CHARTCTL_TOKEN", srv.AdminKey)
			env.Setenv("CHARTCTL_CONFIG_DIR", filepath.Join(env.WorkDir, ".config"))
			env.Setenv(cmdutil.EnvNoKeyring, "1")
			env.Setenv("NO_COLOR", "1")
			env.Setenv("SERVER", srv.URL)
			env.Setenv("SERVER_ADDR", strings.TrimPrefix(srv.URL, "http://"))
			env.Setenv("ADMIN_KEY", srv.AdminKey)
			return os.WriteFile(filepath.Join(env.WorkDir, "key.txt"), []byte(srv.AdminKey+"\n"), 0o600)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// mkchart NAME VERSION FILE [DESCRIPTION]: write a chart archive.
			"mkchart": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 3 {
					ts.Fatalf("usage: mkchart NAME VERSION FILE [DESCRIPTION]")
				}
				tb := ts.Value(tbKey{}).(testing.TB)
				c := testkit.Chart{Name: args[0], Version: args[1]}
				if len(args) > 3 {
					c.Description = args[3]
				}
				ts.Check(os.WriteFile(ts.MkAbs(args[2]), testkit.MakeChart(tb, c), 0o644))
			},
			// waitimages: find the images of every pushed version now,
			// as the server's background job does after a push.
			"waitimages": func(ts *testscript.TestScript, neg bool, args []string) {
				srv := ts.Value(serverKey{}).(*testkit.Server)
				ts.Check(srv.App().ProcessImages(context.Background()))
			},
			// fixturechart DIR FILE: write the archive of the fixture
			// chart internal/chartdiff/testdata/DIR (a real-world-shaped
			// chart, in two versions) to FILE.
			"fixturechart": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: fixturechart DIR FILE")
				}
				tb := ts.Value(tbKey{}).(testing.TB)
				ts.Check(os.WriteFile(ts.MkAbs(args[1]), testkit.ArchiveDir(tb, filepath.Join(fixtureDir, args[0])), 0o644))
			},
			// mkindex DIR: write DIR/index.yaml listing every NAME-VERSION.tgz
			// in DIR, as `helm repo index` does (relative URLs).
			"mkindex": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: mkindex DIR")
				}
				ts.Check(writeIndex(ts.MkAbs(args[0])))
			},
			// serve DIR VAR: serve DIR over HTTP on 127.0.0.1 until the
			// script ends, its URL in $VAR; once per script, on the
			// listener the server lists in --plain-http-upstreams.
			"serve": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: serve DIR VAR")
				}
				up := ts.Value(upstreamKey{}).(*upstreamListener)
				if up.used {
					ts.Fatalf("serve: once per script")
				}
				up.used = true
				hs := httptest.NewUnstartedServer(http.FileServer(http.Dir(ts.MkAbs(args[0]))))
				_ = hs.Listener.Close()
				hs.Listener = up.ln
				hs.Start()
				ts.Defer(hs.Close)
				ts.Setenv(args[1], hs.URL)
			},
			// waitrecheck: wait for the server's background policy
			// re-check (after a policy change) to finish; the test's
			// deadline bounds the wait.
			"waitrecheck": func(ts *testscript.TestScript, neg bool, args []string) {
				srv := ts.Value(serverKey{}).(*testkit.Server)
				for {
					if running, _, _, _ := srv.App().RecheckProgress(); !running {
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			},
			// exitcode N CMD ARGS...: run CMD and require exit code N.
			"exitcode": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 2 {
					ts.Fatalf("usage: exitcode N CMD ARGS...")
				}
				want, err := strconv.Atoi(args[0])
				ts.Check(err)
				err = ts.Exec(args[1], args[2:]...)
				got := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					got = ee.ExitCode()
				} else if err != nil {
					ts.Fatalf("%s: %v", args[1], err)
				}
				if got != want {
					ts.Fatalf("%s exited %d, want %d", args[1], got, want)
				}
			},
			// perm FILE MODE: require FILE's permission bits to be MODE (octal).
			"perm": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: perm FILE MODE")
				}
				fi, err := os.Stat(ts.MkAbs(args[0]))
				ts.Check(err)
				want, err := strconv.ParseUint(args[1], 8, 32)
				ts.Check(err)
				if fi.Mode().Perm() != os.FileMode(want) {
					ts.Fatalf("%s has mode %#o, want %#o", args[0], fi.Mode().Perm(), want)
				}
			},
			// oidctoken FILE REPOSITORY: write a GitHub Actions ID token of
			// the test issuer for a push to main of REPOSITORY, audience
			// $SERVER, into FILE.
			"oidctoken": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: oidctoken FILE REPOSITORY")
				}
				tb := ts.Value(tbKey{}).(testing.TB)
				iss := ts.Value(issuerKey{}).(*oidcissuer.Issuer)
				tok := iss.Token(tb, iss.GitHub(args[1], ts.Getenv("SERVER")))
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(tok+"\n"), 0o600))
			},
			// envfile VAR FILE: set $VAR to FILE's content, trimmed, as a CI
			// system hands a job its token.
			"envfile": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: envfile VAR FILE")
				}
				ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile(args[1])))
			},
			// actionsenv REPOSITORY: make the environment a GitHub Actions
			// job of REPOSITORY with id-token: write (the test issuer's
			// token request endpoint, its CA in SSL_CERT_FILE).
			"actionsenv": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: actionsenv REPOSITORY")
				}
				tb := ts.Value(tbKey{}).(testing.TB)
				iss := ts.Value(issuerKey{}).(*oidcissuer.Issuer)
				iss.ServeActionsTokens(iss.GitHub(args[0], ""))
				ts.Setenv("ACTIONS_ID_TOKEN_REQUEST_URL", iss.ActionsRequestURL())
				ts.Setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", iss.ActionsRequestToken)
				ts.Setenv("SSL_CERT_FILE", iss.WriteCertFile(tb, ts.MkAbs(".")))
			},
			// mkuser EMAIL VAR: create a user with a repo:read key in $VAR.
			"mkuser": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: mkuser EMAIL VAR")
				}
				tb := ts.Value(tbKey{}).(testing.TB)
				srv := ts.Value(serverKey{}).(*testkit.Server)
				u := srv.MustUser(tb, args[0], false)
				ts.Setenv(args[1], srv.MustKey(tb, u, chartctl.ScopeRepoRead))
			},
		},
	})
}

// writeIndex writes dir/index.yaml for the chart archives in dir.
func writeIndex(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.tgz"))
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("apiVersion: v1\nentries:\n")
	byName := map[string][]string{}
	var names []string
	for _, f := range files {
		name, version, ok := chart.ParseArchiveFileName(filepath.Base(f))
		if !ok {
			return fmt.Errorf("%s is not NAME-VERSION.tgz", f)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		if _, ok := byName[name]; !ok {
			names = append(names, name)
		}
		byName[name] = append(byName[name], fmt.Sprintf("  - apiVersion: v2\n    name: %s\n    version: %s\n    created: \"2026-01-02T03:04:05Z\"\n    digest: %s\n    urls:\n    - %s\n",
			name, version, hex.EncodeToString(sum[:]), filepath.Base(f)))
	}
	if len(names) == 0 {
		b.Reset()
		b.WriteString("apiVersion: v1\nentries: {}\n")
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString("  " + n + ":\n" + strings.Join(byName[n], ""))
	}
	return os.WriteFile(filepath.Join(dir, "index.yaml"), []byte(b.String()), 0o644)
}

// TestCompletionsCurrent fails when completions/ no longer matches what
// `chartctl completion` generates: run `make completions`.
func TestCompletionsCurrent(t *testing.T) {
	files := map[string]string{
		"bash":       "chartctl.bash",
		"zsh":        "_chartctl",
		"fish":       "chartctl.fish",
		"powershell": "chartctl.ps1",
	}
	for _, shell := range completioncmd.Shells {
		ios, _, _, _ := iostreams.Test()
		f := cmdutil.New(ios, func(string) string { return "" })
		root := NewRootCmd(f, wiring())
		var buf bytes.Buffer
		if err := completioncmd.Generate(root, shell, &buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "..", "completions", files[shell])
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run `make completions`)", err)
		}
		if !bytes.Equal(got, buf.Bytes()) {
			t.Errorf("%s is stale: run `make completions`", path)
		}
	}
}

// TestHelpHasExamples fails when a command's --help shows no example: a
// new user learns a command from its examples first.
func TestHelpHasExamples(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	root := NewRootCmd(cmdutil.New(ios, func(string) string { return "" }), wiring())
	// serve documents its flags at length; completion shows per-shell
	// usage in its long text; tui belongs to the terminal browser.
	skip := map[string]bool{"chartctl serve": true, "chartctl completion": true, "chartctl tui": true, "chartctl help": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Hidden || skip[c.CommandPath()] || c == root {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no Example", c.CommandPath())
		}
	}
	walk(root)
}
