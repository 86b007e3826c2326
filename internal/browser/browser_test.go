package browser

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestSystemUsesBROWSER(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "url")
	script := filepath.Join(dir, "fake-browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf %s \"$1\" > "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	s := System{Getenv: func(k string) string {
		if k == "BROWSER" {
			return script
		}
		return ""
	}, Stderr: &stderr}
	if err := s.Open("http://127.0.0.1:1/authorize?x=1"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "http://127.0.0.1:1/authorize?x=1" {
		t.Errorf("browser got %q", b)
	}
}

func TestSystemBROWSERFails(t *testing.T) {
	s := System{Getenv: func(string) string { return "/nonexistent/browser" }}
	if err := s.Open("http://127.0.0.1:1/"); err == nil {
		t.Fatal("want an error from a missing $BROWSER")
	}
}
