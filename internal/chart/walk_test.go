package chart

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestWalkVisitsEveryFile(t *testing.T) {
	archive := mustArchive(t, append(validEntries("demo", "1.0.0"),
		file("demo/README.md", "# Demo\n"),
		dir("demo/templates/"),
	)...)
	got := map[string]string{}
	c, err := Walk(bytes.NewReader(archive), Limits{}, func(path string, size int64, content io.Reader) error {
		if path == "templates/deployment.yaml" {
			// Read part of it only: the rest is discarded.
			b := make([]byte, 4)
			_, err := io.ReadFull(content, b)
			got[path] = string(b)
			return err
		}
		b, err := io.ReadAll(content)
		if int64(len(b)) != size {
			t.Errorf("%s: read %d bytes, size %d", path, len(b), size)
		}
		got[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "demo" || got["README.md"] != "# Demo\n" || got["templates/deployment.yaml"] != "kind" || got["Chart.yaml"] == "" {
		t.Fatalf("chart %+v, files %q", c, got)
	}
}

func TestWalkStopsOnCallbackError(t *testing.T) {
	archive := mustArchive(t, append(validEntries("demo", "1.0.0"), file("demo/values.yaml", "a: 1\n"))...)
	stop := errors.New("stop")
	if _, err := Walk(bytes.NewReader(archive), Limits{}, func(string, int64, io.Reader) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("Walk returned %v, want the callback's error", err)
	}
}

func TestWalkRejectsWhatReadRejects(t *testing.T) {
	archive := mustArchive(t, file("demo/Chart.yaml", chartYAML("other", "1.0.0")))
	_, err := Walk(bytes.NewReader(archive), Limits{}, func(_ string, _ int64, r io.Reader) error {
		_, err := io.Copy(io.Discard, r)
		return err
	})
	wantInvalid(t, err, `Invalid chart archive: Chart.yaml name "other" does not match the chart directory "demo".`)
}
