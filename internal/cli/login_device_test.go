package cli

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/keyring"
	"github.com/chartctl/chartctl/internal/oauth"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

// promptWriter is standard error for a device login under test: it keeps
// what was written and hands the first verification_uri_complete printed
// to the test, which plays the person at the browser.
type promptWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	urls chan string
	sent bool
}

var completeRE = regexp.MustCompile(`http://\S+/device\?user_code=\S+`)

func (w *promptWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := completeRE.FindString(w.buf.String()); m != "" && !w.sent {
		w.sent = true
		w.urls <- m
	}
	return len(p), nil
}

func (w *promptWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// runDevice runs `chartctl login --device` against env in the
// background; answer gets the printed URL with the code.
func runDevice(t *testing.T, env *oauthtest.Env, dir string, answer func(complete string)) (int, string) {
	t.Helper()
	f := newFactory(t, dir, nil)
	ios, _, _, _ := iostreams.Test()
	w := &promptWriter{urls: make(chan string, 1)}
	ios.ErrOut = w
	f.IOStreams = ios
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), f, Hooks{}, []string{"login", "--device", "--server", env.URL, "--scopes", "repo:read,repo:write"})
	}()
	select {
	case u := <-w.urls:
		answer(u)
	case code := <-done:
		t.Fatalf("login --device ended (%d) before printing a code: %s", code, w.String())
	}
	return <-done, w.String()
}

// TestLoginDevice runs `chartctl login --device` against the real
// authorization server: the test reads the printed address and code,
// approves in a browser session, and the stored credential then works.
func TestLoginDevice(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.Clock.FollowRealTime(t)
	env.MustUserWithPassword(t, "ada@example.com", "correct horse battery", false)
	dir := t.TempDir()
	code, stderr := runDevice(t, env, dir, func(complete string) {
		// The first polls may come before the answer: pending, not slow_down.
		time.Sleep(6 * time.Second)
		u, err := url.Parse(complete)
		if err != nil {
			t.Error(err)
			return
		}
		uc := u.Query().Get("user_code")
		b := env.NewBrowser(t)
		b.SignIn(t, "ada@example.com", "correct horse battery")
		if p := b.AnswerDevice(t, uc, "approve"); !strings.Contains(p.Body, "Device connected") {
			t.Errorf("approve: %d %s", p.StatusCode, p.Body)
		}
	})
	if code != ExitOK {
		t.Fatalf("login --device exited %d: %s", code, stderr)
	}
	for _, want := range []string{env.URL + "/device\n", "and enter the code ", "Logged in to " + env.URL + " as ada@example.com"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	kr := keyring.New(nil, dir, io.Discard)
	cred, err := kr.Get(env.URL)
	if err != nil || cred.AccessToken == "" || cred.RefreshToken == "" || cred.TokenURL != env.URL+"/oauth/token" {
		t.Fatalf("stored credential %+v, %v", cred, err)
	}
	code, stdout, stderr := run(t, newFactory(t, dir, nil), "repo", "create", "ada-device", "-o", "json")
	if code != ExitOK || !strings.Contains(stdout, `"name": "ada-device"`) {
		t.Fatalf("repo create with the device's token: %d %s %s", code, stdout, stderr)
	}
}

func TestLoginDeviceDenied(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.Clock.FollowRealTime(t)
	env.MustUserWithPassword(t, "ada@example.com", "correct horse battery", false)
	dir := t.TempDir()
	code, stderr := runDevice(t, env, dir, func(complete string) {
		u, _ := url.Parse(complete)
		b := env.NewBrowser(t)
		b.SignIn(t, "ada@example.com", "correct horse battery")
		b.AnswerDevice(t, u.Query().Get("user_code"), "deny")
	})
	if code != ExitError || !strings.Contains(stderr, "access was denied in the browser") {
		t.Fatalf("login --device after a denial: %d %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, keyring.FileName)); !os.IsNotExist(err) {
		t.Errorf("credentials written after a denial: %v", err)
	}
}

func TestLoginDeviceExpired(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	dir := t.TempDir()
	code, stderr := runDevice(t, env, dir, func(string) {
		// Nobody answers; the server's clock passes the code's lifetime.
		env.Clock.Advance(oauth.DeviceCodeTTL)
	})
	if code != ExitError || !strings.Contains(stderr, "the code expired before it was approved") || !strings.Contains(stderr, "chartctl login --device again") {
		t.Fatalf("login --device after expiry: %d %s", code, stderr)
	}
}
