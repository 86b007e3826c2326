package importcmd

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/testkit"
)

func TestImportRunDirectory(t *testing.T) {
	dir := t.TempDir()
	for name, b := range map[string][]byte{
		"app-1.0.0.tgz":    testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"}),
		"bad-1.0.0.tgz":    []byte("junk"),
		"index-cache.yaml": []byte("apiVersion: v1\nentries: {}\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "stable", "private")
	ios, _, out, errOut := iostreams.Test()
	opts := &ImportOptions{IO: ios, JSON: true, Source: dir, Repo: "stable", Client: func() (*client.Client, error) {
		return client.New(ts.URL, client.WithToken(ts.AdminKey))
	}}
	err := importRun(context.Background(), opts)
	if !errors.Is(err, cmdutil.ErrSilent) {
		t.Fatalf("err = %v, want the silent exit 1 of a run with failures", err)
	}
	var s struct {
		Counts struct{ Imported, Skipped, Failed int }
		Failed []struct{ Name, Reason string }
	}
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if s.Counts.Imported != 1 || s.Counts.Failed != 1 || s.Failed[0].Name != "bad-1.0.0" || s.Failed[0].Reason == "" {
		t.Errorf("summary %s", out)
	}
	if errOut.String() != "" {
		t.Errorf("stderr %q, want nothing beside the JSON", errOut)
	}

	// Text output, second run: nothing new.
	os.Remove(filepath.Join(dir, "bad-1.0.0.tgz"))
	out.Reset()
	errOut.Reset()
	opts.JSON = false
	if err := importRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if out.String() != "" || !strings.Contains(errOut.String(), "Imported 0, skipped 1 (already present), failed 0") {
		t.Errorf("stdout %q stderr %q", out, errOut)
	}
}

func TestNewCmdImportFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios}
	for _, args := range [][]string{
		{"https://x"},
		{"https://x", "--repo", "r", "--password-stdin"},
		{"https://x", "--repo", "r", "--username", "u", "--source-token", "t"},
		{"https://x", "--repo", "r", "--index-max-size", "lots"},
		{"https://x", "--repo", "r", "--index-max-size", "0"},
	} {
		cmd := NewCmdImport(f, func(*ImportOptions) error { return nil })
		cmd.SetArgs(args)
		cmd.SetOut(ios.Out)
		cmd.SetErr(ios.ErrOut)
		var fe *cmdutil.FlagError
		if err := cmd.Execute(); !errors.As(err, &fe) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
}

// TestImportIndexMaxSize: a Helm repository whose index.yaml is larger
// than --index-max-size is refused, the error naming the flag; under it,
// the import runs.
func TestImportIndexMaxSize(t *testing.T) {
	chart := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	index := "apiVersion: v1\nentries:\n  app:\n  - name: app\n    version: 1.0.0\n    description: " + strings.Repeat("x", 2048) + "\n    urls:\n    - app-1.0.0.tgz\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/index.yaml":
			_, _ = io.WriteString(w, index)
		case "/app-1.0.0.tgz":
			_, _ = w.Write(chart)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(up.Close)
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "stable", "private")
	run := func(size string) (string, error) {
		ios, _, out, errOut := iostreams.Test()
		var got *ImportOptions
		cmd := NewCmdImport(&cmdutil.Factory{IOStreams: ios}, func(o *ImportOptions) error { got = o; return nil })
		cmd.SetArgs([]string{up.URL, "--repo", "stable", "--index-max-size", size})
		cmd.SetOut(ios.Out)
		cmd.SetErr(ios.ErrOut)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		got.Client = func() (*client.Client, error) { return client.New(ts.URL, client.WithToken(ts.AdminKey)) }
		err := importRun(t.Context(), got)
		return out.String() + errOut.String(), err
	}
	if _, err := run("1KiB"); err == nil || !strings.Contains(err.Error(), "is larger than 1 KiB, the limit set by --index-max-size") {
		t.Fatalf("an index over --index-max-size: %v", err)
	}
	if output, err := run("4KiB"); err != nil || !strings.Contains(output, `"imported": 1`) {
		t.Fatalf("an index under --index-max-size: %v, %s", err, output)
	}
}
