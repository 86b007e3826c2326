package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"
)

func TestRefusesNonLoopback(t *testing.T) {
	for _, args := range [][]string{
		{"--url", "http://192.0.2.10:8080", "--token", "k"},
		{"--peer", "http://chartmuseum.example.com"},
		{"--n", "0"},
		{"extra"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("run(%q) = %d, want 2 (stderr %q)", args, code, errb.String())
		}
		if out.Len() != 0 {
			t.Errorf("run(%q) printed %q", args, out.String())
		}
	}
}

func TestReproduceRedactsSecrets(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Int("n", 1000, "")
	fs.String("token", "", "")
	fs.String("peer", "", "")
	fs.String("markdown", "", "")
	fs.String("repo", "", "")
	if err := fs.Parse([]string{"--n", "10000", "--token", "chartctl_secret", "--peer", "http://127.0.0.1:8081", "--markdown", "docs/performance.md", "--repo", "it's"}); err != nil {
		t.Fatal(err)
	}
	got := reproduce(fs)
	want := `go run ./bench/cmd/chartbench --n 10000 --peer http://127.0.0.1:8081 --repo 'it'\''s' --token "$CHARTBENCH_TOKEN"`
	if got != want {
		t.Fatalf("reproduce =\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(got, "secret") {
		t.Fatal("token leaked")
	}
}
