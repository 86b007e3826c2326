// Package browser opens web pages for the command line (the sign-in page of
// `chartctl login`). Commands take an Opener, so tests can follow the URL
// themselves instead of starting a browser.
package browser

import (
	"fmt"
	"io"
	"os/exec"
	"strings"

	pkgbrowser "github.com/pkg/browser"
)

// Opener opens a URL in a web browser.
type Opener interface {
	Open(url string) error
}

// OpenerFunc adapts a function to Opener.
type OpenerFunc func(url string) error

// Open implements Opener.
func (f OpenerFunc) Open(url string) error { return f(url) }

// System opens URLs in the user's browser: the command in $BROWSER when it
// is set (as the Debian sensible-browser convention and gh do), else the
// platform's opener (xdg-open, open, rundll32) via github.com/pkg/browser.
type System struct {
	// Getenv reads the environment ($BROWSER).
	Getenv func(string) string
	// Stderr receives the output of a $BROWSER command.
	Stderr io.Writer
}

// Open implements Opener.
func (s System) Open(url string) error {
	if s.Getenv != nil {
		if cmd := strings.Fields(s.Getenv("BROWSER")); len(cmd) > 0 {
			c := exec.Command(cmd[0], append(cmd[1:], url)...)
			c.Stdout = s.Stderr
			c.Stderr = s.Stderr
			if err := c.Run(); err != nil {
				return fmt.Errorf("open %s with $BROWSER: %w", url, err)
			}
			return nil
		}
	}
	if err := pkgbrowser.OpenURL(url); err != nil {
		return fmt.Errorf("open a browser: %w", err)
	}
	return nil
}
