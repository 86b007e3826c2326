package tui

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/chartctl/chartctl/client"
)

const testServer = "https://charts.example.test"

// session is one run of the browser in a fixed-size virtual terminal.
type session struct {
	t   *testing.T
	tm  *teatest.TestModel
	out bytes.Buffer // everything the program wrote, for checks on raw bytes
}

func setupSession(t *testing.T, api API, width, height int) *session {
	t.Helper()
	lipgloss.SetColorProfile(termenv.Ascii)
	m := New(api, Options{Server: testServer, PageSize: 50})
	m.c.now = func() time.Time { return fixedTime }
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(width, height))
	return &session{t: t, tm: tm}
}

// waitFor waits until the program has drawn text.
func (s *session) waitFor(text string) {
	s.t.Helper()
	teatest.WaitFor(s.t, s.tm.Output(), func(b []byte) bool {
		if bytes.Contains(b, []byte(text)) {
			s.out.Write(b)
			return true
		}
		return false
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
}

// press sends named keys; anything else is typed as runes.
func (s *session) press(keys ...string) {
	for _, k := range keys {
		s.tm.Send(keyMsg(k))
	}
}

func keyMsg(k string) tea.KeyMsg {
	switch k {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "backspace":
		return tea.KeyMsg{Type: tea.KeyBackspace}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "end":
		return tea.KeyMsg{Type: tea.KeyEnd}
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// finish quits with ctrl+c (q would be typed into an open filter) and
// returns the final screen.
func (s *session) finish() string {
	s.t.Helper()
	s.press("ctrl+c")
	fm := s.tm.FinalModel(s.t, teatest.WithFinalTimeout(10*time.Second))
	return fm.(Model).View()
}

// TestBrowse drives the browser through every view the way a user would
// and compares the final screen with testdata/TestBrowse/<case>.golden.
func TestBrowse(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*fakeAPI)
		steps func(*session)
	}{
		{"repositories", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
		}},
		{"charts", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("enter")
			s.waitFor("In-memory data store")
		}},
		{"versions", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("enter")
			s.waitFor("In-memory data store")
			s.press("enter")
			s.waitFor("1.24.0")
		}},
		{"detail", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("enter")
			s.waitFor("In-memory data store")
			s.press("enter")
			s.waitFor("1.24.0")
			s.press("down", "enter")
			s.waitFor("bytes)") // the size comes with the version's own metadata
		}},
		{"detail shows verdicts", func(f *fakeAPI) {
			verified := fixedTime
			// nginx 1.1.0: signed and verified, and marked noncompliant
			// by a policy change, with a lint warning kept from its push.
			c := &f.charts["apps"][1]
			c.Verification = &client.Verification{Status: "verified", Signatures: []client.Signature{
				{Kind: "pgp", Identity: "Release Bot <release@acme.test>", Trust: "release", VerifiedAt: &verified}}}
			c.Policy = &client.VersionPolicy{Status: "noncompliant", CheckedAt: &verified, Findings: []client.Finding{
				{Rule: "required_fields", Severity: "error", Message: "Chart.yaml lacks sources"},
				{Rule: "lint", Severity: "warning", Message: "templates/: directory does not exist"}}}
		}, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("enter")
			s.waitFor("In-memory data store")
			s.press("enter")
			s.waitFor("1.24.0")
			s.press("down", "enter")
			s.waitFor("directory does not exist")
		}},
		{"detail of an unverified signature", func(f *fakeAPI) {
			// nginx 1.2.0: signed by a key nobody trusts.
			f.charts["apps"][0].Verification = &client.Verification{Status: "unverified", Signatures: []client.Signature{
				{Kind: "cosign", Reason: "no cosign trust material here"}}}
		}, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("enter")
			s.waitFor("In-memory data store")
			s.press("enter")
			s.waitFor("1.24.0")
			s.press("enter")
			s.waitFor("no cosign trust material here")
		}},
		{"detail of a private repository", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("down", "enter")
			s.waitFor("Certificate management")
			s.press("enter")
			s.waitFor("v1.14.0")
			s.press("enter")
			s.waitFor("bytes)")
		}},
		{"detail of a private repository from search", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("/", "c", "e", "r", "t", "enter")
			s.waitFor("Certificate management")
			s.press("enter")
			s.waitFor("v1.14.0")
			s.press("enter")
			s.waitFor("bytes)")
		}},
		{"teams", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("tab")
			s.waitFor("Platform engineering")
		}},
		{"members", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("tab")
			s.waitFor("Platform engineering")
			s.press("down", "enter")
			s.waitFor("carol@acme.test")
		}},
		{"tab back to charts keeps place", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("enter")
			s.waitFor("In-memory data store")
			s.press("tab")
			s.waitFor("Platform engineering")
			s.press("tab")
			s.waitFor("In-memory data store")
		}},
		{"help", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("?")
			s.waitFor("move down")
		}},
		{"help closes", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("?")
			s.waitFor("move down")
			s.press("esc")
			s.waitFor("Cluster infrastructure")
		}},
		{"filter as you type", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("/", "i", "n", "f")
			s.waitFor("filtered from 3")
		}},
		{"filter kept after enter", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("enter")
			s.waitFor("In-memory data store")
			s.press("/", "r", "e", "d", "enter")
			s.waitFor("esc clears")
		}},
		{"filter cleared by esc", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("/", "i", "n", "f")
			s.waitFor("filtered from 3")
			s.press("esc")
			s.waitFor("Applications of the platform")
		}},
		{"filter without match offers search", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("/", "c", "a", "c", "h", "e")
			s.waitFor("Enter searches")
		}},
		{"search", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("/", "c", "a", "c", "h", "e", "enter")
			s.waitFor("7.2.4")
		}},
		{"search opens versions", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("/", "w", "e", "b", "enter")
			s.waitFor("NGINX web server and reverse proxy")
			s.press("enter")
			s.waitFor("1.24.0")
		}},
		{"back from search shows all repositories", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("/", "c", "a", "c", "h", "e", "enter")
			s.waitFor("7.2.4")
			s.press("esc")
			s.waitFor("Cluster infrastructure")
		}},
		{"back with esc and backspace", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("enter")
			s.waitFor("In-memory data store")
			s.press("enter")
			s.waitFor("1.24.0")
			s.press("esc")
			s.waitFor("In-memory data store")
			s.press("backspace")
			s.waitFor("Cluster infrastructure")
		}},
		{"refresh", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("down", "r")
			s.waitFor("2/3 repositories")
		}},
		{"access", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("enter")
			s.waitFor("In-memory data store")
			s.press("a")
			s.waitFor("erin@partner.test")
		}},
		{"access toggles back to charts", nil, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("enter")
			s.waitFor("In-memory data store")
			s.press("a")
			s.waitFor("erin@partner.test")
			s.press("a")
			s.waitFor("In-memory data store")
		}},
		{"access refused", func(f *fakeAPI) {
			f.setErr("RepositoryAccess:apps", &client.Error{StatusCode: http.StatusForbidden, Code: client.CodeForbidden, Message: "Listing the grants of repository \"apps\" needs the admin role there."})
		}, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("enter")
			s.waitFor("In-memory data store")
			s.press("a")
			s.waitFor("admin role")
		}},
		{"unauthorized", func(f *fakeAPI) {
			f.setErr("ListRepositories", &client.Error{StatusCode: http.StatusUnauthorized, Code: client.CodeUnauthorized, Message: "missing credential"})
		}, func(s *session) {
			s.waitFor("run chartctl login")
		}},
		{"not found", func(f *fakeAPI) {
			f.setErr("ListCharts:apps", &client.Error{StatusCode: http.StatusNotFound, Code: client.CodeNotFound, Message: "repository \x1b[2Japps not found"})
		}, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("enter")
			s.waitFor("not found")
		}},
		{"rate limited", func(f *fakeAPI) {
			f.setErr("SearchCharts", &client.Error{StatusCode: http.StatusTooManyRequests, Code: client.CodeRateLimitExceeded, Message: "rate limit exceeded", RetryAfter: 42 * time.Second})
		}, func(s *session) {
			s.waitFor("Cluster infrastructure")
			s.press("/", "n", "g", "enter")
			s.waitFor("rate limited until 10:30:42, then r retries")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeAPI()
			if tt.setup != nil {
				tt.setup(api)
			}
			s := setupSession(t, api, 100, 30)
			tt.steps(s)
			view := s.finish()
			for _, raw := range [][]byte{s.out.Bytes(), []byte(view)} {
				if bytes.Contains(raw, []byte("pwned")) || bytes.Contains(raw, []byte("\x1b]0;")) {
					t.Errorf("server text reached the terminal unsanitized:\n%q", raw)
				}
			}
			teatest.RequireEqualOutput(t, []byte(view))
		})
	}
}

// TestSlowServerKeepsDrawing proves the UI stays alive while a request
// hangs: the spinner keeps turning and keys are handled.
func TestSlowServerKeepsDrawing(t *testing.T) {
	api := newFakeAPI()
	gate := make(chan struct{})
	api.gate = gate
	released := false
	release := func() {
		if !released {
			released = true
			close(gate)
		}
	}
	t.Cleanup(release)
	s := setupSession(t, api, 80, 24)

	frames := []string{"⣾", "⣽", "⣻", "⢿", "⡿", "⣟", "⣯", "⣷"}
	seen := map[string]bool{}
	teatest.WaitFor(t, s.tm.Output(), func(b []byte) bool {
		for _, f := range frames {
			if bytes.Contains(b, []byte(f)) {
				seen[f] = true
			}
		}
		return len(seen) >= 3 && bytes.Contains(b, []byte("Loading repositories"))
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(5*time.Millisecond))

	s.press("?")
	s.waitFor("move down")
	s.press("esc")
	release()
	s.waitFor("Cluster infrastructure")
	s.finish()
}
