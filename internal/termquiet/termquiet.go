// Package termquiet keeps Bubble Tea's package initialization from
// querying the terminal for every command. Bubble Tea v1 asks the
// terminal for its background colour while the program initializes (so
// Lip Gloss can pick light or dark styles before a program takes the
// terminal over), writing OSC 11 and a cursor position request to
// standard output and waiting up to five seconds for the answer. Only
// `chartctl tui` draws with those styles; every other command would write
// the query into the terminal, or a CI log, and wait five seconds
// wherever nothing answers (script(1), `docker run -t` in a CI job).
//
// This package's init runs before Bubble Tea's (packages initialize once
// their imports have, first in import-path order: this one imports only
// the standard library, Bubble Tea waits for Lip Gloss and termenv). It
// sets TERM=dumb, which termenv takes as a terminal not to query, unless
// the command line names the tui; Restore, called first in main, puts
// TERM back before anything else reads it.
package termquiet

import "os"

var (
	quieted bool
	term    string
	hadTerm bool
)

func init() { quiet(os.Args[1:]) }

// quiet sets TERM=dumb for the rest of initialization unless args name
// the tui command.
func quiet(args []string) {
	for _, a := range args {
		if a == "tui" {
			return
		}
	}
	term, hadTerm = os.LookupEnv("TERM")
	quieted = os.Setenv("TERM", "dumb") == nil
}

// Restore puts TERM back as the process got it. It is safe to call more
// than once, and when init changed nothing.
func Restore() {
	if !quieted {
		return
	}
	quieted = false
	if hadTerm {
		os.Setenv("TERM", term)
	} else {
		os.Unsetenv("TERM")
	}
}
