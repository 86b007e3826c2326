// Package iostreams holds the standard streams of a command and what is
// known about them: whether each is a terminal, whether colour is wanted,
// how wide the terminal is. Commands write through it, so tests can swap
// in buffers and pretend to be a terminal.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"strconv"

	"golang.org/x/term"
)

// IOStreams are the streams of one command run.
type IOStreams struct {
	// In is standard input.
	In io.Reader
	// Out is standard output: results only.
	Out io.Writer
	// ErrOut is standard error: progress, warnings and errors.
	ErrOut io.Writer

	stdinTTY, stdoutTTY, stderrTTY bool
	colorEnabled                   bool
	termWidth                      int
}

// System returns the process's streams, detecting terminals and colour:
// colour only when stdout is a terminal, NO_COLOR is unset (any value
// disables it, as https://no-color.org asks) and TERM is not "dumb".
func System() *IOStreams {
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	s.stdinTTY = isTerminal(os.Stdin)
	s.stdoutTTY = isTerminal(os.Stdout)
	s.stderrTTY = isTerminal(os.Stderr)
	s.colorEnabled = ColorWanted(s.stdoutTTY, os.Getenv)
	if s.stdoutTTY {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
			s.termWidth = w
		}
	}
	if s.termWidth == 0 {
		if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
			s.termWidth = n
		}
	}
	return s
}

// ColorWanted decides whether to colour output written to a stream that is
// (or is not) a terminal, given the environment.
func ColorWanted(tty bool, getenv func(string) string) bool {
	// NO_COLOR present with any non-empty value disables colour; the
	// environment reader cannot tell "set to empty" from "unset".
	if getenv("NO_COLOR") != "" {
		return false
	}
	if getenv("TERM") == "dumb" {
		return false
	}
	return tty
}

func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}

// Test returns streams over buffers: input, output and error output. None
// is a terminal until SetStdinTTY/SetStdoutTTY/SetStderrTTY say so.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// IsStdinTTY reports whether standard input is a terminal.
func (s *IOStreams) IsStdinTTY() bool { return s.stdinTTY }

// IsStdoutTTY reports whether standard output is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether standard error is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetStdinTTY overrides terminal detection of standard input.
func (s *IOStreams) SetStdinTTY(v bool) { s.stdinTTY = v }

// SetStdoutTTY overrides terminal detection of standard output.
func (s *IOStreams) SetStdoutTTY(v bool) { s.stdoutTTY = v }

// SetStderrTTY overrides terminal detection of standard error.
func (s *IOStreams) SetStderrTTY(v bool) { s.stderrTTY = v }

// CanPrompt reports whether the user can be asked a question: both
// standard input and standard output are terminals.
func (s *IOStreams) CanPrompt() bool { return s.stdinTTY && s.stdoutTTY }

// ColorEnabled reports whether output may be coloured.
func (s *IOStreams) ColorEnabled() bool { return s.colorEnabled }

// SetColorEnabled overrides colour detection.
func (s *IOStreams) SetColorEnabled(v bool) { s.colorEnabled = v }

// TerminalWidth returns the width of the terminal, 80 when unknown, 0 when
// standard output is not a terminal (no limit).
func (s *IOStreams) TerminalWidth() int {
	if !s.stdoutTTY {
		return 0
	}
	if s.termWidth > 0 {
		return s.termWidth
	}
	return 80
}

// SetTerminalWidth overrides the detected terminal width.
func (s *IOStreams) SetTerminalWidth(w int) { s.termWidth = w }

// ColorScheme returns the styles to use on standard output.
func (s *IOStreams) ColorScheme() *ColorScheme {
	return &ColorScheme{enabled: s.colorEnabled}
}

// ColorScheme styles text with ANSI colours when enabled, and returns it
// unchanged otherwise.
type ColorScheme struct {
	enabled bool
}

func (c *ColorScheme) wrap(code, s string) string {
	if !c.enabled || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Bold makes s bold.
func (c *ColorScheme) Bold(s string) string { return c.wrap("1", s) }

// Green colours s green (success).
func (c *ColorScheme) Green(s string) string { return c.wrap("32", s) }

// Red colours s red (failure).
func (c *ColorScheme) Red(s string) string { return c.wrap("31", s) }

// Yellow colours s yellow (warning).
func (c *ColorScheme) Yellow(s string) string { return c.wrap("33", s) }

// Gray dims s (secondary information).
func (c *ColorScheme) Gray(s string) string { return c.wrap("90", s) }

// Cyan colours s cyan (names).
func (c *ColorScheme) Cyan(s string) string { return c.wrap("36", s) }

// SuccessIcon is a green check mark.
func (c *ColorScheme) SuccessIcon() string { return c.Green("✓") }

// WarningIcon is a yellow exclamation mark.
func (c *ColorScheme) WarningIcon() string { return c.Yellow("!") }
