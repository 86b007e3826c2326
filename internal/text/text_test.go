package text

import (
	"bytes"
	"testing"
)

func TestSanitize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello world", "hello world"},
		{"newline and tab kept", "a\tb\nc", "a\tb\nc"},
		{"CSI colour", "\x1b[31mred\x1b[0m", "red"},
		{"CSI clear screen", "x\x1b[2J\x1b[Hy", "xy"},
		{"CSI private mode", "a\x1b[?25lb", "ab"},
		{"OSC title BEL", "\x1b]0;pwned\x07text", "text"},
		{"OSC hyperlink ST", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"two-char ESC", "a\x1bcb", "ab"},
		{"charset ESC", "a\x1b(Bb", "ab"},
		{"C0 controls", "a\x00b\x07c\x08d\re\x7f", "abcde"},
		{"8-bit CSI", "a\u009b31mb", "ab"},
		{"8-bit OSC", "a\u009d0;title\u009cb", "ab"},
		{"C1 control", "a\u0085b", "ab"},
		{"unicode kept", "héllo 世界 🚀", "héllo 世界 🚀"},
		{"invalid utf8 dropped", "a\xffb", "ab"},
		{"unterminated OSC", "a\x1b]0;never ends", "a"},
		{"lone ESC at end", "abc\x1b", "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sanitize(tt.in); got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSanitizeLine(t *testing.T) {
	if got := SanitizeLine("a\nb\tc\x1b[1m"); got != "a b c" {
		t.Errorf("SanitizeLine = %q", got)
	}
}

func FuzzSanitize(f *testing.F) {
	f.Add("\x1b[31mred\x1b]0;t\x07\u009b1m")
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		for _, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("Sanitize(%q) = %q keeps control %U", s, out, r)
			}
		}
		if Sanitize(out) != out {
			t.Fatalf("Sanitize not idempotent on %q", s)
		}
	})
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		w        int
		in, want string
	}{
		{10, "short", "short"},
		{8, "a long description", "a lon..."},
		{3, "abcdef", "abc"},
		{0, "abc", ""},
		{5, "世界世界世界", "世..."},
	}
	for _, tt := range tests {
		if got := Truncate(tt.w, tt.in); got != tt.want {
			t.Errorf("Truncate(%d, %q) = %q, want %q", tt.w, tt.in, got, tt.want)
		}
	}
}

func TestTableTTY(t *testing.T) {
	var buf bytes.Buffer
	tb := NewTable(&buf, true, 0)
	tb.Header("name", "description")
	tb.AddField("stable")
	tb.AddField("Stable charts\x1b[2J")
	tb.EndRow()
	tb.AddField("incubator-long")
	tb.AddField("x", func(s string) string { return "<" + s + ">" })
	tb.EndRow()
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	want := "NAME            DESCRIPTION\n" +
		"stable          Stable charts\n" +
		"incubator-long  <x>\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestTableTTYFitsWidth(t *testing.T) {
	var buf bytes.Buffer
	tb := NewTable(&buf, true, 30)
	tb.AddField("name")
	tb.AddField("a very very long description that does not fit")
	tb.EndRow()
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); DisplayWidth(got[:len(got)-1]) > 30 {
		t.Errorf("row %q wider than 30", got)
	}
}

func TestTablePlain(t *testing.T) {
	var buf bytes.Buffer
	tb := NewTable(&buf, false, 0)
	tb.Header("name", "description")
	tb.AddField("stable")
	tb.AddField("multi\nline\ttext")
	tb.EndRow()
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	if want := "stable\tmulti line text\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}
