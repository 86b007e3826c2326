package cmdutil

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/chartctl/chartctl/internal/iostreams"
)

// readAnswer reads one line of ios.In, or returns ctx's error as soon as
// ctx is done. The root context is cancelled on Ctrl-C, which then no
// longer kills the process: a prompt that only read its input would ignore
// Ctrl-C until Enter. The abandoned read ends with the process.
func readAnswer(ctx context.Context, ios *iostreams.IOStreams) (string, error) {
	type answer struct {
		line string
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReader(ios.In).ReadString('\n')
		ch <- answer{line, err}
	}()
	select {
	case a := <-ch:
		return a.line, a.err
	case <-ctx.Done():
		fmt.Fprintln(ios.ErrOut) // end the prompt's line
		return "", ctx.Err()
	}
}

// ConfirmByName asks the user to type name to confirm a destructive
// action, as `gh repo delete` does; a different answer is ErrCancel.
// Callers ask only when ios.CanPrompt().
func ConfirmByName(ctx context.Context, ios *iostreams.IOStreams, what, name string) error {
	fmt.Fprintf(ios.ErrOut, "Type %s to confirm deleting %s: ", name, what)
	line, err := readAnswer(ctx, ios)
	if err != nil && line == "" {
		return fmt.Errorf("read confirmation: %w", err)
	}
	if strings.TrimSpace(line) != name {
		fmt.Fprintln(ios.ErrOut, "Not deleted: the answer did not match.")
		return ErrCancel
	}
	return nil
}

// Confirm asks a yes/no question on the terminal; anything but "y" or
// "yes" is ErrCancel. notDone says what was left undone ("Not revoked").
// Callers ask only when ios.CanPrompt().
func Confirm(ctx context.Context, ios *iostreams.IOStreams, question, notDone string) error {
	fmt.Fprintf(ios.ErrOut, "%s [y/N] ", question)
	line, err := readAnswer(ctx, ios)
	if err != nil && line == "" {
		return fmt.Errorf("read confirmation: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	fmt.Fprintln(ios.ErrOut, notDone+".")
	return ErrCancel
}

// RequireYes is the check of destructive commands: without --yes they
// must be able to ask.
func RequireYes(ios *iostreams.IOStreams, yes bool) error {
	if !yes && !ios.CanPrompt() {
		return FlagErrorf("--yes is required when not running interactively")
	}
	return nil
}

// FormatTime renders a server timestamp: relative ("3 hours ago") on a
// terminal, RFC 3339 elsewhere so scripts can parse it.
func FormatTime(ios *iostreams.IOStreams, now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	if !ios.IsStdoutTTY() {
		return t.UTC().Format(time.RFC3339)
	}
	return FuzzyAgo(now, t)
}

// FuzzyAgo describes t relative to now, such as "just now", "5 minutes
// ago" or "in 2 hours".
func FuzzyAgo(now, t time.Time) string {
	d := now.Sub(t)
	if d == math.MaxInt64 || d == math.MinInt64 {
		// Past what a Duration holds (about 292 years): Sub saturates,
		// and negating the minimum overflows. Count calendar years.
		if years := now.Year() - t.Year(); years > 0 {
			return fmt.Sprintf("%d years ago", years)
		}
		return fmt.Sprintf("in %d years", t.Year()-now.Year())
	}
	if d < 0 {
		return "in " + fuzzy(-d)
	}
	if d < time.Minute {
		// Short, so a fresh timestamp does not widen a table column.
		return "just now"
	}
	return fuzzy(d) + " ago"
}

func fuzzy(d time.Duration) string {
	unit := func(n int, s string) string {
		if n == 1 {
			return "1 " + s
		}
		return fmt.Sprintf("%d %ss", n, s)
	}
	switch {
	case d < time.Minute:
		return unit(int(d.Seconds()), "second")
	case d < time.Hour:
		return unit(int(d.Minutes()), "minute")
	case d < 24*time.Hour:
		return unit(int(d.Hours()), "hour")
	case d < 30*24*time.Hour:
		return unit(int(d.Hours()/24), "day")
	case d < 365*24*time.Hour:
		return unit(int(d.Hours()/24/30), "month")
	}
	return unit(int(d.Hours()/24/365), "year")
}

// ReadStdinSecret reads a secret given on standard input (the first line
// of r, without its line ending), as flags like --password-stdin take
// one: nothing shows it in the process list or the shell history. An
// empty secret is a FlagError naming flag.
func ReadStdinSecret(r io.Reader, flag string) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the %s secret from standard input: %w", flag, err)
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", FlagErrorf("%s read an empty password", flag)
	}
	return pw, nil
}

// ReadStdinPassword reads a new account password from the first line of
// r (a --password-stdin flag). A password the server would refuse (not 8
// to 72 characters) is a usage error here, before anything is sent.
func ReadStdinPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("read the password from standard input: %w", err)
	}
	pw := strings.TrimRight(line, "\r\n")
	if len(pw) < 8 || len(pw) > 72 {
		return "", FlagErrorf("the password on standard input must be 8 to 72 characters long")
	}
	return pw, nil
}
