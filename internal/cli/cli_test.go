package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/chartctl"
	completioncmd "github.com/chartctl/chartctl/internal/cmd/completion"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/testkit"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"chartctl": func() { os.Exit(Main()) },
	})
}

type serverKey struct{}
type tbKey struct{}

// TestScripts runs testdata/script/*.txtar: each script gets its own real
// server (bbolt in a temp dir) and runs the real chartctl against it, with
// CHARTCTL_SERVER and CHARTCTL_TOKEN (the admin's key) set as in CI.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: false,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			tb := env.T().(testing.TB)
			srv := testkit.StartServer(tb)
			env.Values[serverKey{}] = srv
			env.Values[tbKey{}] = tb
			env.Setenv("CHARTCTL_SERVER", srv.URL)
			env.Setenv("CHARTCTL_TOKEN", srv.AdminKey)
			env.Setenv("CHARTCTL_CONFIG_DIR", filepath.Join(env.WorkDir, ".config"))
			env.Setenv(cmdutil.EnvNoKeyring, "1")
			env.Setenv("NO_COLOR", "1")
			env.Setenv("SERVER", srv.URL)
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
