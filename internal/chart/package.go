package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/ignore"
	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Package writes the chart in dir as a chart archive into outDir, laid out
// as `helm package` lays it out (every file under NAME/), honouring the
// chart's .helmignore with Helm's own rules (helm.sh/helm/v4/pkg/ignore),
// and returns the archive's path. The archive is checked with Read before
// it is kept, so what Package writes the server accepts.
//
// It does not use Helm's chart loader and saver: those pull Kubernetes
// client libraries into the binary.
func Package(dir, outDir string, lim Limits) (string, error) {
	top, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(top, "Chart.yaml")); err != nil {
		return "", fmt.Errorf("%s is not a chart directory: it has no Chart.yaml", dir)
	}
	rules := ignore.Empty()
	if f, err := os.Open(filepath.Join(top, ignore.HelmIgnore)); err == nil {
		rules, err = ignore.Parse(f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("read %s: %w", ignore.HelmIgnore, err)
		}
	}
	rules.AddDefaults()

	type file struct {
		name string
		info fs.FileInfo
		path string
	}
	var files []file
	err = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		info, err := os.Stat(p) // follows symlinks, as Helm does
		if err != nil {
			return fmt.Errorf("read %s: %w", rel, err)
		}
		if info.IsDir() {
			if rules.Ignore(rel, info) {
				return filepath.SkipDir
			}
			if d.Type()&fs.ModeSymlink != 0 {
				return fmt.Errorf("%s is a symbolic link to a directory; replace it with the directory", rel)
			}
			return nil
		}
		if rules.Ignore(rel, info) {
			return nil
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("cannot package %s: not a regular file", rel)
		}
		files = append(files, file{name: rel, info: info, path: p})
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("package %s: %w", dir, err)
	}
	// Chart.yaml first, as Helm writes it; then the rest in path order.
	sort.Slice(files, func(i, j int) bool {
		if (files[i].name == "Chart.yaml") != (files[j].name == "Chart.yaml") {
			return files[i].name == "Chart.yaml"
		}
		return files[i].name < files[j].name
	})

	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	gz.Comment = "Helm"
	tw := tar.NewWriter(gz)
	// The top directory is the chart's name, as `helm package` writes it;
	// Read below checks the rest of Chart.yaml.
	name := filepath.Base(top)
	if b, err := os.ReadFile(filepath.Join(top, "Chart.yaml")); err == nil {
		var md struct{ Name string }
		if yaml.Unmarshal(b, &md) == nil && md.Name != "" {
			name = md.Name
		}
	}
	now := time.Now()
	for _, f := range files {
		data, err := os.ReadFile(f.path)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", f.name, err)
		}
		data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
		hdr := &tar.Header{Name: name + "/" + f.name, Mode: 0o644, Size: int64(len(data)), ModTime: now, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return "", err
		}
		if _, err := tw.Write(data); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	if err := gz.Close(); err != nil {
		return "", err
	}
	ch, err := Read(bytes.NewReader(buf.Bytes()), lim)
	if err != nil {
		return "", fmt.Errorf("package %s: %s", dir, strings.TrimPrefix(chartctl.ErrorMessage(err), "Invalid chart archive: "))
	}
	out := filepath.Join(outDir, ArchiveFileName(ch.Name, ch.Version))
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	return out, nil
}
