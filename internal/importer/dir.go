package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// DirSource is a ChartMuseum storage directory: chart archives (*.tgz),
// each with an optional provenance file beside it (*.tgz.prov), and
// ChartMuseum's index-cache.yaml, whose created times are kept when it is
// there (else an archive's modification time is its created time).
type DirSource struct {
	Dir string
}

// String returns the directory.
func (s *DirSource) String() string { return s.Dir }

// Versions reads each archive's Chart.yaml to learn its name and version.
func (s *DirSource) Versions(ctx context.Context) ([]*Version, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.Dir, err)
	}
	created := s.indexCache()
	var out []*Version
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && (strings.HasSuffix(e.Name(), ".tgz") || strings.HasSuffix(e.Name(), ".tar.gz")) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("%s holds no chart archives (*.tgz)", s.Dir)
	}
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := filepath.Join(s.Dir, n)
		v := &Version{Location: p}
		v.open = func(context.Context) (io.ReadCloser, error) { return os.Open(p) }
		ch, fi, err := readChart(p)
		if err != nil {
			// Listed under its file name so the report says which file.
			v.Name, v.Version = strings.TrimSuffix(strings.TrimSuffix(n, ".tgz"), ".tar.gz"), "?"
			v.open = func(context.Context) (io.ReadCloser, error) { return nil, err }
			out = append(out, v)
			continue
		}
		v.Name, v.Version = ch.Name, ch.Version
		v.Created = fi.ModTime().UTC()
		if t, ok := created[key(ch.Name, ch.Version)]; ok {
			v.Created = t
		}
		prov := p + ".prov"
		v.openProv = func(context.Context) (io.ReadCloser, error) {
			f, err := os.Open(prov)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, ErrNotFound
			}
			return f, err
		}
		out = append(out, v)
	}
	return out, nil
}

func readChart(p string) (*chart.Chart, fs.FileInfo, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	ch, err := chart.Read(f, chart.DefaultLimits())
	if err != nil {
		// chart.Read's errors are written for API callers ("Invalid chart
		// archive: not gzip-compressed."): keep the reason, not the
		// *chartctl.Error's debugging form, which names its code.
		var ce *chartctl.Error
		if errors.As(err, &ce) {
			return nil, nil, fmt.Errorf("%s is not a valid chart archive: %s", filepath.Base(p), strings.TrimSuffix(chart.Reason(err), "."))
		}
		return nil, nil, fmt.Errorf("%s is not a valid chart archive: %w", filepath.Base(p), err)
	}
	return ch, fi, nil
}

// indexCache reads the created times from ChartMuseum's index-cache.yaml;
// a missing or unreadable file gives none.
func (s *DirSource) indexCache() map[string]time.Time {
	out := map[string]time.Time{}
	f, err := os.Open(filepath.Join(s.Dir, "index-cache.yaml"))
	if err != nil {
		return out
	}
	defer f.Close()
	_, _, err = decodeIndex(f, func(chart string, e *indexEntry) {
		name := e.Name
		if name == "" {
			name = chart
		}
		if t := parseCreated(e.Created); !t.IsZero() {
			out[key(name, e.Version)] = t
		}
	})
	if err != nil {
		return map[string]time.Time{}
	}
	return out
}
