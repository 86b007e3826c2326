package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TestNoTerminalQueryAtStart runs chartctl on a terminal nothing answers
// (script(1)'s, as `docker run -t` in a CI job gives): no command but the
// tui may ask the terminal for its background colour. Bubble Tea's
// package init did, for every command: the query landed in the output
// and each command waited five seconds for an answer.
func TestNoTerminalQueryAtStart(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		if testkit.RequireE2E() {
			t.Fatal("script(1) is required (util-linux)")
		}
		t.Skip("script(1) is not installed")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "chartctl") // TestMain runs Main for this name
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, "-qec", link+" version", "/dev/null")
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "CI=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !bytes.Contains(out, []byte("chartctl ")) {
		t.Fatalf("no version in %q", out)
	}
	if bytes.Contains(out, []byte("\x1b]11;?")) || bytes.Contains(out, []byte("\x1b[6n")) {
		t.Errorf("the terminal was queried: %q", out)
	}
}
