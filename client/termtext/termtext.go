// Package termtext makes text that came from a chartctl server safe to
// print in a terminal. Chart descriptions, names and messages are written
// by other people; printed as they are, an escape sequence in one could
// retitle the terminal, move the cursor or hide earlier output. The CLI and
// the terminal browser both print server text through this package.
package termtext

import (
	"strings"
	"unicode/utf8"
)

// Sanitize removes from s what could drive a terminal: ANSI escape
// sequences (CSI, OSC, DCS, SOS, PM, APC and two-byte escapes, in their
// 7-bit and 8-bit forms), C0 and C1 control characters other than newline
// and tab, DEL, and the Unicode bidirectional overrides (which could make
// text read differently from what it is). Invalid UTF-8 bytes become
// U+FFFD.
func Sanitize(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteRune(utf8.RuneError)
			i++
			continue
		}
		switch {
		case r == 0x1b: // ESC: a 7-bit escape sequence starts here.
			i = skipEscape(s, i+size)
			continue
		case r == 0x9b: // 8-bit CSI
			i = skipCSI(s, i+size)
			continue
		case r == 0x9d, r == 0x90, r == 0x98, r == 0x9e, r == 0x9f: // 8-bit OSC, DCS, SOS, PM, APC
			i = skipString(s, i+size)
			continue
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			// Other C0/C1 controls (carriage return included) and DEL.
		case isBidiControl(r):
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Line is Sanitize for text shown on one line (a table cell, a status
// line): newlines, tabs and carriage returns also become single spaces.
func Line(s string) string {
	s = Sanitize(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n"))
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// isPlain reports whether s is printable ASCII (and newlines and tabs),
// the common case that needs no copy.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// isBidiControl reports whether r is an explicit bidirectional formatting
// character (embeddings, overrides and isolates).
func isBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// skipEscape returns the index just past the escape sequence whose ESC byte
// ended right before i.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	// nF escapes: intermediate bytes 0x20–0x2F, then one final byte.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipCSI returns the index just past a control sequence whose introducer
// ended right before i: parameter bytes 0x30–0x3F, intermediate bytes
// 0x20–0x2F, then one final byte 0x40–0x7E. A sequence broken by another
// byte ends there, and that byte is kept for the caller to judge.
func skipCSI(s string, i int) int {
	for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
		i++
	}
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipString returns the index just past a control string (OSC, DCS, SOS,
// PM, APC) whose introducer ended right before i. The string ends with BEL,
// ST (ESC \) or the 8-bit ST (U+009C); an unterminated string swallows the
// rest of the text, as a terminal would.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			// An ESC that does not form ST aborts the string; the escape
			// itself is handled by the caller's loop.
			return i
		case s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c:
			return i + 2
		}
		i++
	}
	return i
}
