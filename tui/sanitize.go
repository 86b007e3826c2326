package tui

import (
	"strings"
	"unicode/utf8"
)

// sanitize makes text that came from the server safe to print inside the
// TUI. It removes ANSI escape sequences (CSI, OSC, DCS, SOS, PM, APC and
// two-byte escapes, in their 7-bit and 8-bit forms), C0 and C1 control
// characters, DEL and the Unicode bidirectional overrides, so a chart
// description can neither retitle the terminal, move the cursor, nor
// reorder what is displayed. Tabs and line breaks become single spaces
// because every string is shown on one line or re-wrapped by the layout.
// Invalid UTF-8 bytes become U+FFFD.
func sanitize(s string) string {
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
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			// Other C0/C1 controls and DEL are dropped.
		case isBidiControl(r):
			// Bidirectional overrides could make text read differently
			// from what it is.
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isPlain reports whether s is printable ASCII only, the common case that
// needs no copy.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
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
