package push

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

func writeChartDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mychart")
	files := map[string]string{
		"Chart.yaml":                "apiVersion: v2\nname: mychart\nversion: 1.2.3\nappVersion: \"2.0\"\ndescription: My chart\n",
		"values.yaml":               "replicaCount: 1\n",
		"templates/deployment.yaml": "kind: Deployment\n",
		".helmignore":               "secrets/\n*.bak\n",
		"secrets/password.txt":      "hunter2\n",
		"values.yaml.bak":           "old\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestArchivePathPackagesDirectory(t *testing.T) {
	dir := writeChartDir(t)
	archive, cleanup, err := archivePath(dir)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(archive) != "mychart-1.2.3.tgz" {
		t.Errorf("archive %s, want mychart-1.2.3.tgz", archive)
	}
	ch, err := loader.LoadFile(archive)
	if err != nil {
		t.Fatalf("Helm cannot load the packaged chart: %v", err)
	}
	if ch.Metadata.Name != "mychart" || ch.Metadata.Version != "1.2.3" {
		t.Errorf("packaged %s %s", ch.Metadata.Name, ch.Metadata.Version)
	}
	for _, f := range ch.Raw {
		if f.Name == "secrets/password.txt" || f.Name == "values.yaml.bak" {
			t.Errorf("%s was packaged although .helmignore excludes it", f.Name)
		}
	}
	cleanup()
	if _, err := os.Stat(archive); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cleanup left %s: %v", archive, err)
	}
}

func TestArchivePathArchiveAsIs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x-1.0.0.tgz")
	if err := os.WriteFile(p, []byte("not checked here"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, cleanup, err := archivePath(p)
	defer cleanup()
	if err != nil || got != p {
		t.Errorf("archivePath = %q, %v", got, err)
	}
}

func TestArchivePathErrors(t *testing.T) {
	tmp := t.TempDir()
	notChart := filepath.Join(tmp, "readme.md")
	if err := os.WriteFile(notChart, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := archivePath(notChart); err == nil {
		t.Error("a .md file was accepted")
	} else {
		var fe *cmdutil.FlagError
		if !errors.As(err, &fe) {
			t.Errorf("err = %v, want a FlagError", err)
		}
	}
	if _, _, err := archivePath(filepath.Join(tmp, "missing")); err == nil {
		t.Error("a missing path was accepted")
	}
	if _, _, err := archivePath(tmp); err == nil {
		t.Error("a directory without Chart.yaml was accepted")
	}
}

func TestNewCmdPushRequiresRepo(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	cmd := NewCmdPush(&cmdutil.Factory{IOStreams: ios}, func(*PushOptions) error { return nil })
	cmd.SetArgs([]string{"./mychart"})
	cmd.SetOut(ios.Out)
	cmd.SetErr(ios.ErrOut)
	var fe *cmdutil.FlagError
	if err := cmd.Execute(); !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a FlagError", err)
	}
}

func TestProgressBar(t *testing.T) {
	ios, _, _, stderr := iostreams.Test()
	bar := &progressBar{w: ios.ErrOut, width: 10}
	bar.update(0, 2<<20)
	bar.update(1<<20, 2<<20)
	bar.update(2<<20, 2<<20)
	bar.done()
	out := stderr.String()
	for _, want := range []string{"  0%", " 50%", "100%", "2.0 MiB / 2.0 MiB", "\r\x1b[K"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress output %q lacks %q", out, want)
		}
	}
}

// terminalLine is what a terminal shows on the one line the bar draws on:
// "\r" returns to the first column, "\x1b[K" erases to the end of the
// line, and other characters overwrite what is under the cursor.
func terminalLine(out string) string {
	var line []rune
	col := 0
	for len(out) > 0 {
		switch {
		case strings.HasPrefix(out, "\r"):
			col, out = 0, out[1:]
		case strings.HasPrefix(out, "\x1b[K"):
			line, out = line[:col], out[3:]
		default:
			r := []rune(out)[0]
			if col < len(line) {
				line[col] = r
			} else {
				line = append(line, r)
			}
			col++
			out = out[len(string(r)):]
		}
	}
	return string(line)
}

func TestProgressBarLeavesNoResidue(t *testing.T) {
	ios, _, _, stderr := iostreams.Test()
	bar := &progressBar{w: ios.ErrOut, width: 10}
	// "512.0 KiB / 1.0 MiB" is longer than "1.0 MiB / 1.0 MiB", which
	// once left "1.0 MiB / 1.0 MiBiB" on the screen.
	bar.update(512<<10, 1<<20)
	bar.update(1<<20, 1<<20)
	got := terminalLine(stderr.String())
	if want := "Uploading [==========] 100% 1.0 MiB / 1.0 MiB"; got != want {
		t.Errorf("terminal shows %q, want %q", got, want)
	}
	bar.done()
	if got := terminalLine(stderr.String()); got != "" {
		t.Errorf("after done the line shows %q, want it cleared", got)
	}
}
