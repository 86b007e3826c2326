package tui

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/testkit"
)

// syncBuffer is the terminal's output, written by the program's goroutine
// and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startTUI runs `chartctl tui` on pipes that claim to be a terminal, with
// env as the environment, and returns its output, a writer for keys and
// the channel of its result.
func startTUI(t *testing.T, env map[string]string) (*syncBuffer, io.Writer, <-chan error) {
	t.Helper()
	t.Setenv("NO_COLOR", "1")
	ios, _, _, _ := iostreams.Test()
	in, keys := io.Pipe()
	t.Cleanup(func() { _ = keys.Close() })
	out := &syncBuffer{}
	ios.In, ios.Out = in, out
	ios.SetStdinTTY(true)
	ios.SetStdoutTTY(true)
	f := cmdutil.New(ios, func(k string) string { return env[k] })
	cmd := NewCmdTUI(f, nil)
	cmd.SetArgs([]string{})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(context.Background()) }()
	return out, keys, done
}

// waitOutput waits until the program has written text.
func waitOutput(t *testing.T, out *syncBuffer, done <-chan error, text string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(out.String(), text) {
		select {
		case err := <-done:
			t.Fatalf("tui ended (%v) before showing %q:\n%q", err, text, out.String())
		case <-deadline:
			t.Fatalf("tui never showed %q:\n%q", text, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestRefusedTokenNamesItsSource: a wrong CHARTCTL_TOKEN is reported as
// that, not as "not signed in", which would send the user to log in while
// the variable keeps overriding the login.
func TestRefusedTokenNamesItsSource(t *testing.T) {
	srv := testkit.StartServer(t)
	out, keys, done := startTUI(t, map[string]string{
		cmdutil.EnvServer: srv.URL,
		cmdutil.EnvToken:  "chartctl_not_a_key",
	})
	waitOutput(t, out, done, "CHARTCTL_TOKEN was refused: check it, or unset it and run chartctl login")
	if _, err := keys.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("tui: %v", err)
	}
}

func TestUnauthorizedHint(t *testing.T) {
	tests := map[string]string{
		"":               "not signed in: run chartctl login",
		"--token":        "the --token was refused: check it, or drop it and run chartctl login",
		cmdutil.EnvToken: "CHARTCTL_TOKEN was refused: check it, or unset it and run chartctl login",
		"keyring":        "your sign-in was refused (expired or revoked): run chartctl login",
	}
	for source, want := range tests {
		if got := unauthorizedHint(source); got != want {
			t.Errorf("unauthorizedHint(%q) = %q, want %q", source, got, want)
		}
	}
}

// TestNeedsATerminal: in a pipe the command refuses (exit 1) before
// contacting the server and says what to use instead.
func TestNeedsATerminal(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	f := cmdutil.New(ios, func(string) string { return "" })
	cmd := NewCmdTUI(f, nil)
	cmd.SetArgs([]string{})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.ExecuteContext(context.Background())
	// Not a usage error (exit 2): nothing in the usage would fix it.
	var flagErr *cmdutil.FlagError
	if err == nil || errors.As(err, &flagErr) || !strings.Contains(err.Error(), "needs a terminal") {
		t.Fatalf("err = %v, want a plain error saying a terminal is needed", err)
	}
	if out.Len() != 0 {
		t.Errorf("wrote to stdout: %q", out.String())
	}
}
