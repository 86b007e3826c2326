package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RequireE2E reports whether CHARTCTL_REQUIRE_E2E=1 asks that end-to-end
// tests run rather than skip (as in CI).
func RequireE2E() bool { return os.Getenv("CHARTCTL_REQUIRE_E2E") == "1" }

// Tool returns the path of an external program an end-to-end test needs:
// the value of env when set, else name looked up on PATH. When it is
// missing the test skips, or fails under CHARTCTL_REQUIRE_E2E=1.
func Tool(tb testing.TB, env, name string) string {
	tb.Helper()
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if name != "" {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if RequireE2E() {
		tb.Fatalf("%s is not installed (set %s); CHARTCTL_REQUIRE_E2E=1 requires it", name, env)
	}
	tb.Skipf("%s is not installed (set %s)", name, env)
	return ""
}

// Helm runs a real Helm client (CHARTCTL_HELM4, else CHARTCTL_HELM3) with
// its own config, cache and data directories.
type Helm struct {
	tb  testing.TB
	Bin string
	// Home is the working directory and holds Helm's state.
	Home string
}

// NewHelm finds a Helm binary (skipping or failing as Tool does).
func NewHelm(tb testing.TB) *Helm {
	tb.Helper()
	bin := os.Getenv("CHARTCTL_HELM4")
	if bin == "" {
		bin = os.Getenv("CHARTCTL_HELM3")
	}
	if bin == "" {
		bin = Tool(tb, "CHARTCTL_HELM4", "helm")
	}
	return &Helm{tb: tb, Bin: bin, Home: tb.TempDir()}
}

// Helms returns a Helm for each real client configured (CHARTCTL_HELM4,
// CHARTCTL_HELM3), by name ("helm4", "helm3"); with none it skips, or
// fails under CHARTCTL_REQUIRE_E2E=1.
func Helms(tb testing.TB) map[string]*Helm {
	tb.Helper()
	out := map[string]*Helm{}
	for name, env := range map[string]string{"helm4": "CHARTCTL_HELM4", "helm3": "CHARTCTL_HELM3"} {
		if p := os.Getenv(env); p != "" {
			if _, err := os.Stat(p); err == nil {
				out[name] = &Helm{tb: tb, Bin: p, Home: tb.TempDir()}
				continue
			}
		}
		if RequireE2E() {
			tb.Fatalf("%s is not set to a helm binary (run make tools); CHARTCTL_REQUIRE_E2E=1 requires both clients", env)
		}
	}
	if len(out) == 0 {
		out["helm"] = NewHelm(tb)
	}
	return out
}

// With returns h reporting failures to tb (a subtest), sharing h's state.
func (h *Helm) With(tb testing.TB) *Helm {
	c := *h
	c.tb = tb
	return &c
}

// Fresh returns a Helm with h's binary and a new, empty home (its own
// repositories and registry logins), reporting failures to tb.
func (h *Helm) Fresh(tb testing.TB) *Helm {
	return &Helm{tb: tb, Bin: h.Bin, Home: tb.TempDir()}
}

// Read returns the content of the file name in h's home.
func (h *Helm) Read(name string) []byte {
	h.tb.Helper()
	b, err := os.ReadFile(filepath.Join(h.Home, name))
	if err != nil {
		h.tb.Fatal(err)
	}
	return b
}

// Write writes b to the file name in h's home and returns its path.
func (h *Helm) Write(name string, b []byte) string {
	h.tb.Helper()
	p := filepath.Join(h.Home, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.tb.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		h.tb.Fatal(err)
	}
	return p
}

// Run runs helm with args and returns its combined output.
func (h *Helm) Run(args ...string) (string, error) {
	out, err := h.command(args...).CombinedOutput()
	return string(out), err
}

// Stdout runs helm with args and returns its standard output (e.g. the
// manifests of helm template, without progress lines), failing the test
// with standard error when helm fails.
func (h *Helm) Stdout(args ...string) string {
	h.tb.Helper()
	cmd := h.command(args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		h.tb.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func (h *Helm) command(args ...string) *exec.Cmd {
	cmd := exec.Command(h.Bin, args...)
	cmd.Dir = h.Home
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(h.Home, ".config"),
		"HELM_CACHE_HOME="+filepath.Join(h.Home, ".cache"),
		"HELM_DATA_HOME="+filepath.Join(h.Home, ".data"),
		"HELM_PLUGINS="+filepath.Join(h.Home, ".plugins"),
		"HELM_REGISTRY_CONFIG="+filepath.Join(h.Home, ".config", "registry.json"),
	)
	return cmd
}

// Must runs helm and fails the test when it fails.
func (h *Helm) Must(args ...string) string {
	h.tb.Helper()
	out, err := h.Run(args...)
	if err != nil {
		h.tb.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}
