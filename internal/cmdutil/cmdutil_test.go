package cmdutil

import (
	"os/exec"
	"testing"
)

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"ci-push":            "ci-push",
		"robot$acme+ci-push": `'robot$acme+ci-push'`,
		"it's":               `'it'\''s'`,
		"":                   `''`,
		"a b":                `'a b'`,
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
	// A real shell reads the quoted word back as it was.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, in := range []string{"robot$acme+ci-push", "it's $HOME `x` \"y\"", ""} {
		out, err := exec.Command(sh, "-c", "printf %s "+ShellQuote(in)).Output()
		if err != nil || string(out) != in {
			t.Errorf("sh read %s back as %q (%v)", ShellQuote(in), out, err)
		}
	}
}
