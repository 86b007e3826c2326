package iostreams

import "testing"

func TestColorWanted(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name string
		tty  bool
		env  func(string) string
		want bool
	}{
		{"tty", true, env(), true},
		{"pipe", false, env(), false},
		{"NO_COLOR on tty", true, env("NO_COLOR", "1"), false},
		{"dumb terminal", true, env("TERM", "dumb"), false},
	}
	for _, tt := range tests {
		if got := ColorWanted(tt.tty, tt.env); got != tt.want {
			t.Errorf("%s: ColorWanted = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestColorScheme(t *testing.T) {
	ios, _, _, _ := Test()
	if got := ios.ColorScheme().Red("x"); got != "x" {
		t.Errorf("colour off: %q", got)
	}
	ios.SetColorEnabled(true)
	if got := ios.ColorScheme().Red("x"); got != "\x1b[31mx\x1b[0m" {
		t.Errorf("colour on: %q", got)
	}
}

func TestTerminalWidth(t *testing.T) {
	ios, _, _, _ := Test()
	if w := ios.TerminalWidth(); w != 0 {
		t.Errorf("pipe width = %d, want 0", w)
	}
	ios.SetStdoutTTY(true)
	if w := ios.TerminalWidth(); w != 80 {
		t.Errorf("default tty width = %d, want 80", w)
	}
	ios.SetTerminalWidth(120)
	if w := ios.TerminalWidth(); w != 120 {
		t.Errorf("width = %d, want 120", w)
	}
}
