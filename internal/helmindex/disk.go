package helmindex

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// diskFiles are the gzip forms of large indexes kept on disk
// (Options.DiskDir), counted by the Indexes that name them, and the
// sidecars that describe some of them across restarts (snapshot.go),
// which pin the files they name.
type diskFiles struct {
	dir string

	mu       sync.Mutex
	refs     map[string]int          // file name → live Indexes naming it
	pins     map[string]int          // file name → sidecars naming it
	sidecars map[string]snapshotMeta // sidecar name → what it says
	err      error                   // why the directory cannot be used, if it cannot
	// writing counts the snapshot writes under way (Cache.Flush).
	writing sync.WaitGroup
}

// newDiskFiles prepares dir: made if missing, emptied of a previous
// process's files except the sidecars this build wrote and the files
// they name.
func newDiskFiles(dir string) *diskFiles {
	d := &diskFiles{dir: dir, refs: map[string]int{}, pins: map[string]int{}, sidecars: map[string]snapshotMeta{}}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		d.err = fmt.Errorf("index cache directory: %w", err)
		return d
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		d.err = fmt.Errorf("index cache directory: %w", err)
		return d
	}
	present := map[string]bool{}
	for _, e := range entries {
		present[e.Name()] = true
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, snapshotSuffix) {
			continue
		}
		var m snapshotMeta
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || json.Unmarshal(data, &m) != nil || !kept(m.File, ".gz", present) || !kept(m.BodyFile, bodySuffix, present) ||
			m.Build != buildID() || m.Generation == "" {
			_ = os.Remove(filepath.Join(dir, name))
			continue
		}
		d.sidecars[name] = m
		d.pins[m.File]++
		d.pins[m.BodyFile]++
	}
	for _, e := range entries {
		name := e.Name()
		if ((strings.HasSuffix(name, ".gz") || strings.HasSuffix(name, bodySuffix)) && d.pins[name] == 0) || strings.HasPrefix(name, ".tmp-") {
			_ = os.Remove(filepath.Join(dir, name))
		}
	}
	return d
}

// kept reports whether name is the name of a kept file with suffix in
// the directory, whose files are present.
func kept(name, suffix string, present map[string]bool) bool {
	return present[name] && strings.HasSuffix(name, suffix) && filepath.Base(name) == name
}

// keep makes sure the file name holds data and counts one more Index
// naming it; it returns the file's path. The file is written to a temp
// name and renamed, so no reader ever sees part of it.
func (d *diskFiles) keep(name string, data []byte) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return "", d.err
	}
	path := filepath.Join(d.dir, name)
	if d.refs[name] == 0 && d.pins[name] == 0 {
		if err := writeAtomic(d.dir, path, data); err != nil {
			return "", err
		}
	}
	d.refs[name]++
	return path, nil
}

// release counts one Index fewer naming the file name, and removes the
// file when none is left and no sidecar names it.
func (d *diskFiles) release(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refs[name]--
	if d.refs[name] > 0 {
		return
	}
	delete(d.refs, name)
	d.removeUnused(name)
}

// removeUnused removes the file name if no Index and no sidecar names it.
// d.mu is held.
func (d *diskFiles) removeUnused(name string) {
	if d.refs[name] > 0 || d.pins[name] > 0 {
		return
	}
	delete(d.pins, name)
	_ = os.Remove(filepath.Join(d.dir, name))
}

// describe writes the sidecar sname, data (which says m), and the body m
// names, in place of what the sidecar said before. The gzip file m names
// is held by the caller.
func (d *diskFiles) describe(sname string, m snapshotMeta, body, data []byte) error {
	if d.err != nil {
		return d.err
	}
	// The body goes first, outside the lock: it may be large, and a
	// sidecar must never name a file that is not complete. Two writers
	// of one name write the same bytes.
	if err := writeAtomic(d.dir, filepath.Join(d.dir, m.BodyFile), body); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := writeAtomic(d.dir, filepath.Join(d.dir, sname), data); err != nil {
		d.removeUnused(m.BodyFile)
		return err
	}
	d.pins[m.File]++
	d.pins[m.BodyFile]++
	if old, ok := d.sidecars[sname]; ok {
		d.unpin(old)
	}
	d.sidecars[sname] = m
	return nil
}

// unpin counts one sidecar fewer naming the files of m. d.mu is held.
func (d *diskFiles) unpin(m snapshotMeta) {
	d.pins[m.File]--
	d.removeUnused(m.File)
	d.pins[m.BodyFile]--
	d.removeUnused(m.BodyFile)
}

// sidecar returns what the sidecar sname says, as read at start or
// written since.
func (d *diskFiles) sidecar(sname string) (snapshotMeta, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m, ok := d.sidecars[sname]
	return m, ok
}

// adopt counts one more Index naming the gzip file m names, and returns
// its path and content and the body's, each of the size m says.
func (d *diskFiles) adopt(m snapshotMeta) (path string, gz, body []byte, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pins[m.File] == 0 || d.pins[m.BodyFile] == 0 {
		return "", nil, nil, os.ErrNotExist
	}
	read := func(name string, size int64) ([]byte, error) {
		data, err := os.ReadFile(filepath.Join(d.dir, name))
		if err == nil && int64(len(data)) != size {
			err = fmt.Errorf("index cache file %s: %d bytes, described as %d", name, len(data), size)
		}
		return data, err
	}
	if gz, err = read(m.File, m.GzipSize); err != nil {
		return "", nil, nil, err
	}
	if body, err = read(m.BodyFile, m.BodySize); err != nil {
		return "", nil, nil, err
	}
	d.refs[m.File]++
	return filepath.Join(d.dir, m.File), gz, body, nil
}

// forget removes the sidecar sname, and the files it named if nothing
// else names them.
func (d *diskFiles) forget(sname string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.forgetLocked(sname)
}

func (d *diskFiles) forgetLocked(sname string) {
	m, ok := d.sidecars[sname]
	if !ok {
		return
	}
	_ = os.Remove(filepath.Join(d.dir, sname))
	delete(d.sidecars, sname)
	d.unpin(m)
}

// forgetRepo removes every sidecar of repo.
func (d *diskFiles) forgetRepo(repo string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for sname, m := range d.sidecars {
		if m.Repo == repo {
			d.forgetLocked(sname)
		}
	}
}

// writeAtomic writes data to path through a temp file in dir and a
// rename. No fsync: the files are a cache, rebuilt from memory, and a
// new process empties the directory first.
func writeAtomic(dir, path string, data []byte) error {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("index cache file: %w", err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("index cache file: %w", werr)
	}
	return nil
}
