package tui

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

func TestNoColorDropsColours(t *testing.T) {
	t.Cleanup(func() { lipgloss.SetColorProfile(termenv.Ascii) })
	lipgloss.SetColorProfile(termenv.TrueColor)

	coloured := newTestModelOpts(t, Options{Server: testServer}).View()
	if !strings.Contains(coloured, "\x1b[") {
		t.Fatal("a colour terminal shows no colours; the test proves nothing")
	}
	plain := newTestModelOpts(t, Options{Server: testServer, NoColor: true}).View()
	if strings.Contains(plain, "\x1b") {
		t.Errorf("NoColor view has escape sequences: %q", plain)
	}
	if !strings.Contains(plain, cursorMarker+"apps") {
		t.Error("without colour the selected row is not marked")
	}
}

func newTestModelOpts(t *testing.T, opts Options) Model {
	t.Helper()
	m := New(newFakeAPI(), opts)
	m = settle(t, m, struct{}{})
	for _, msg := range exec(m.Init()) {
		m = settle(t, m, msg)
	}
	return m
}

// TestRunQuits runs the real program loop on plain pipes, as under a
// script, and quits with q.
func TestRunQuits(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	api := newFakeAPI()
	in, inw := io.Pipe()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), api, Options{Server: testServer, Input: in, Output: &out})
	}()
	// q is sent once the first page was requested, so the program is up.
	waitCalls(t, api, 1)
	if _, err := inw.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	_ = inw.Close()
}

// TestRunStopsWithContext ends the program by cancelling its context.
func TestRunStopsWithContext(t *testing.T) {
	api := newFakeAPI()
	in, inw := io.Pipe()
	t.Cleanup(func() { _ = inw.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, api, Options{Server: testServer, Input: in, Output: io.Discard})
	}()
	waitCalls(t, api, 1)
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("Run after cancel = %v, want the context's error", err)
	}
}

// waitCalls blocks until api has received n calls; the fake signals each.
func waitCalls(t *testing.T, api *fakeAPI, n int) {
	t.Helper()
	ch := api.called()
	for len(api.callLog()) < n {
		select {
		case <-ch:
		case <-t.Context().Done():
			t.Fatal("no API call")
		}
	}
}
