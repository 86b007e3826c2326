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
	"strconv"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/ignore"
	"sigs.k8s.io/yaml"
)

// Package writes the chart in dir as a chart archive into outDir, laid out
// as `helm package` lays it out (every file under NAME/), honouring the
// chart's .helmignore with Helm's own rules (helm.sh/helm/v4/pkg/ignore),
// and returns the archive's path. The archive is checked with Read before
// it is kept, so what Package writes the server accepts; and, as `helm
// package` does, a chart whose declared dependencies are not in charts/
// is refused (checkDependencies), since it could never be installed.
//
// The archive is reproducible: the same directory gives the same bytes,
// whenever and wherever it is packaged, so pushing a chart directory twice
// uploads the same digest. Entries are sorted (Chart.yaml first, as Helm
// writes it, then by path); every entry has mode 0644, uid and gid 0, no
// user or group name, and the modification time of SourceDateEpoch (the
// SOURCE_DATE_EPOCH environment variable, see
// https://reproducible-builds.org/specs/source-date-epoch/, or else the
// Unix epoch), never the files' own mtimes; the gzip header has no file
// name and no time.
//
// It does not use Helm's chart loader and saver: those pull Kubernetes
// client libraries into the binary.
func Package(dir, outDir string, lim Limits) (string, error) {
	mtime, err := SourceDateEpoch()
	if err != nil {
		return "", err
	}
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
	// No Name and a zero ModTime: the header holds nothing that changes
	// between runs.
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
	for _, f := range files {
		data, err := os.ReadFile(f.path)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", f.name, err)
		}
		data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
		hdr := &tar.Header{
			Name: name + "/" + f.name, Mode: 0o644, Size: int64(len(data)), ModTime: mtime,
			Typeflag: tar.TypeReg, Uid: 0, Gid: 0, Uname: "", Gname: "",
		}
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
		return "", fmt.Errorf("package %s: %s", dir, Reason(err))
	}
	if len(ch.Metadata.Dependencies) > 0 {
		paths := make([]string, len(files))
		for i, f := range files {
			paths[i] = f.name
		}
		if err := checkDependencies(ch, top, paths, lim); err != nil {
			return "", fmt.Errorf("package %s: %w", dir, err)
		}
	}
	out := filepath.Join(outDir, ArchiveFileName(ch.Name, ch.Version))
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	return out, nil
}

// checkDependencies returns the error `helm package` gives when a
// dependency Chart.yaml (or requirements.yaml) declares is not in charts/,
// matched by the subcharts' own names, as Helm's CheckDependencies does.
// paths are the files being packaged, relative to top: Helm's loader
// reads a subchart from a directory charts/X/ or an archive charts/X.tgz,
// and skips names starting with '.' or '_'.
func checkDependencies(ch *Chart, top string, paths []string, lim Limits) error {
	present := map[string]bool{}
	for _, p := range paths {
		rest, ok := strings.CutPrefix(p, "charts/")
		if !ok || strings.IndexAny(rest, "._") == 0 {
			continue
		}
		sub, file, nested := strings.Cut(rest, "/")
		switch {
		case !nested && strings.HasSuffix(sub, ".tgz"):
			f, err := os.Open(filepath.Join(top, filepath.FromSlash(p)))
			if err != nil {
				return err
			}
			subchart, err := Read(f, lim)
			f.Close()
			if err != nil {
				return fmt.Errorf("subchart %s: %s", p, Reason(err))
			}
			present[subchart.Name] = true
		case nested && file == "Chart.yaml":
			b, err := os.ReadFile(filepath.Join(top, filepath.FromSlash(p)))
			if err != nil {
				return err
			}
			var md struct{ Name string }
			if yaml.Unmarshal(b, &md) == nil && md.Name != "" {
				present[md.Name] = true
			}
		}
	}
	var missing []string
	for _, d := range ch.Metadata.Dependencies {
		if !present[d.Name] {
			missing = append(missing, d.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("found in Chart.yaml, but missing in charts/ directory: %s; run 'helm dependency build' in the chart's directory first", strings.Join(missing, ", "))
	}
	return nil
}

// SourceDateEpoch returns the time Package stamps on every archive entry:
// the SOURCE_DATE_EPOCH environment variable (whole seconds since the Unix
// epoch) when it is set, else the Unix epoch itself. A constant, not the
// files' newest mtime, because a fresh checkout (a CI job) gives every file
// a new mtime and the archive would change with it. It returns an error
// when SOURCE_DATE_EPOCH is set but is not a non-negative integer, as the
// specification asks.
func SourceDateEpoch() (time.Time, error) {
	v, ok := os.LookupEnv("SOURCE_DATE_EPOCH")
	if !ok || v == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds since 1970-01-01", v)
	}
	return time.Unix(n, 0).UTC(), nil
}
