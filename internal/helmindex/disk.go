package helmindex

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// diskFiles are the gzip forms of large indexes kept on disk
// (Options.DiskDir), counted by the Indexes that name them.
type diskFiles struct {
	dir string

	mu   sync.Mutex
	refs map[string]int // file name → live Indexes naming it
	err  error          // why the directory cannot be used, if it cannot
}

// newDiskFiles prepares dir: made if missing, emptied of a previous
// process's files (their Indexes are gone with that process).
func newDiskFiles(dir string) *diskFiles {
	d := &diskFiles{dir: dir, refs: map[string]int{}}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		d.err = fmt.Errorf("index cache directory: %w", err)
		return d
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		d.err = fmt.Errorf("index cache directory: %w", err)
		return d
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".gz") || strings.HasPrefix(e.Name(), ".tmp-") {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return d
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
	if d.refs[name] == 0 {
		if err := writeAtomic(d.dir, path, data); err != nil {
			return "", err
		}
	}
	d.refs[name]++
	return path, nil
}

// release counts one Index fewer naming the file name, and removes the
// file when none is left.
func (d *diskFiles) release(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refs[name]--
	if d.refs[name] > 0 {
		return
	}
	delete(d.refs, name)
	_ = os.Remove(filepath.Join(d.dir, name))
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
