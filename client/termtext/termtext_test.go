package termtext

import (
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "nginx web server", "nginx web server"},
		{"unicode kept", "Grüße – 日本", "Grüße – 日本"},
		{"osc title BEL", "before\x1b]0;pwned\x07after", "beforeafter"},
		{"osc title ST", "a\x1b]2;pwned\x1b\\b", "ab"},
		{"osc hyperlink", "\x1b]8;;http://evil\x07click\x1b]8;;\x07", "click"},
		{"unterminated osc", "ok\x1b]0;pwned", "ok"},
		{"csi colour", "\x1b[31mred\x1b[0m", "red"},
		{"csi cursor move", "x\x1b[2J\x1b[10;20Hy", "xy"},
		{"csi private mode", "\x1b[?1049hz", "z"},
		{"8-bit csi", "a\u009b31mb", "ab"},
		{"8-bit osc", "a\u009d0;pwned\u009cb", "ab"},
		{"dcs", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"two-byte escape", "a\x1bcb\x1b(Bc", "abc"},
		{"c0 controls", "a\x00b\x07c\x08d\x7fe", "abcde"},
		{"c1 control", "a\u0085b", "ab"},
		{"whitespace to space", "line1\nline2\tx\ry", "line1 line2 x y"},
		{"bidi override", "abc\u202edef\u2066g", "abcdefg"},
		{"invalid utf8", "a\xffb", "a\uFFFDb"},
		{"raw 8-bit csi byte", "a\x9b2Jb", "a\uFFFD2Jb"},
		{"trailing esc", "abc\x1b", "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Line(tt.in)
			if got != tt.want {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for _, r := range got {
				if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
					t.Errorf("Line(%q) kept control %U", tt.in, r)
				}
			}
			if !utf8.ValidString(got) {
				t.Errorf("Line(%q) = %q is not valid UTF-8", tt.in, got)
			}
		})
	}
}

func FuzzLine(f *testing.F) {
	f.Add("\x1b]0;pwned\x07")
	f.Add("\x1b[31mred")
	f.Add("a\u009b1;2Hb")
	f.Fuzz(func(t *testing.T, s string) {
		got := Line(s)
		for _, r := range got {
			if r < 0x20 || (r >= 0x7f && r <= 0x9f) || isBidiControl(r) {
				t.Fatalf("Line(%q) = %q keeps control %U", s, got, r)
			}
		}
		if Line(got) != got {
			t.Fatalf("Line is not idempotent on %q", s)
		}
	})
}

func TestSanitizeKeepsLayout(t *testing.T) {
	in := "Line one\n\tindented \x1b[1mbold\x1b[0m\r\n"
	if got, want := Sanitize(in), "Line one\n\tindented bold\n"; got != want {
		t.Fatalf("Sanitize(%q) = %q, want %q", in, got, want)
	}
	if got, want := Line(in), "Line one  indented bold "; got != want {
		t.Fatalf("Line(%q) = %q, want %q", in, got, want)
	}
}
