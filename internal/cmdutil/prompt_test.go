package cmdutil

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/iostreams"
)

// Ctrl-C at a confirmation prompt ends the command. The root context is
// cancelled on SIGINT (which then no longer kills the process), so a
// prompt that only read standard input ignored every Ctrl-C until Enter.
func TestConfirmEndsOnInterrupt(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	stdin, typing := io.Pipe() // a terminal nobody types into
	defer typing.Close()
	ios.In = stdin
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Ctrl-C
	for name, ask := range map[string]func() error{
		"Confirm":       func() error { return Confirm(ctx, ios, "Revoke API key k?", "Not revoked") },
		"ConfirmByName": func() error { return ConfirmByName(ctx, ios, "repository r", "r") },
	} {
		if err := ask(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s after Ctrl-C: %v, want context.Canceled", name, err)
		}
	}
	if strings.Contains(errOut.String(), "Not ") {
		t.Errorf("an interrupted prompt reported an answer: %q", errOut.String())
	}
}

// An answer still decides.
func TestConfirmAnswers(t *testing.T) {
	for _, c := range []struct {
		answer string
		want   error
	}{{"y\n", nil}, {"yes\n", nil}, {"n\n", ErrCancel}, {"\n", ErrCancel}} {
		ios, in, _, _ := iostreams.Test()
		in.WriteString(c.answer)
		if err := Confirm(context.Background(), ios, "Delete?", "Not deleted"); !errors.Is(err, c.want) && err != c.want {
			t.Errorf("answer %q: %v, want %v", c.answer, err, c.want)
		}
	}
	ios, in, _, _ := iostreams.Test()
	in.WriteString("stable\n")
	if err := ConfirmByName(context.Background(), ios, "repository stable", "stable"); err != nil {
		t.Errorf("typed name: %v", err)
	}
}
