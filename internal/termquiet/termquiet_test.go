package termquiet

import (
	"os"
	"testing"
)

func TestQuietAndRestore(t *testing.T) {
	Restore() // undo what this test binary's own init did
	t.Setenv("TERM", "xterm-256color")
	quiet([]string{"repo", "list"})
	if got := os.Getenv("TERM"); got != "dumb" {
		t.Fatalf("TERM during initialization = %q, want dumb", got)
	}
	Restore()
	if got := os.Getenv("TERM"); got != "xterm-256color" {
		t.Fatalf("TERM after Restore = %q", got)
	}

	// The tui wants the answer: nothing changes.
	quiet([]string{"--server", "http://x", "tui"})
	if got := os.Getenv("TERM"); got != "xterm-256color" {
		t.Fatalf("TERM for the tui = %q", got)
	}
	Restore()

	// Unset stays unset.
	os.Unsetenv("TERM")
	quiet(nil)
	Restore()
	if _, ok := os.LookupEnv("TERM"); ok {
		t.Fatal("Restore set a TERM the process did not have")
	}
}
