//go:build linux

package bolt

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
)

// rssFileKiB is this process's resident memory of mapped files.
func rssFileKiB(t *testing.T) int {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// TestTrimMapped: after a read of a whole 64 MiB database its pages are
// resident in the process; trimMapped drops them, and every value reads
// back the same afterwards.
func TestTrimMapped(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "chartctl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The DB's own trimmer (every trimEvery) would drop pages between
	// the reads and the measurements.
	db.trim.close()
	value := func(i int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("%08d", i)), 512) } // 4 KiB
	const n = 16 << 10                                                                       // 64 MiB
	for start := 0; start < n; start += 1024 {
		if err := db.db.Update(func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("trim-test"))
			if err != nil {
				return err
			}
			for i := start; i < start+1024; i++ {
				if err := b.Put([]byte(fmt.Sprintf("%08d", i)), value(i)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	readAll := func() {
		t.Helper()
		if err := db.db.View(func(tx *bbolt.Tx) error {
			b := tx.Bucket([]byte("trim-test"))
			for i := range n {
				if v := b.Get([]byte(fmt.Sprintf("%08d", i))); !bytes.Equal(v, value(i)) {
					return fmt.Errorf("value %d reads %d bytes, not what was written", i, len(v))
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	readAll()
	before := rssFileKiB(t)
	if err := db.db.View(func(tx *bbolt.Tx) error {
		trimMapped(tx)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	after := rssFileKiB(t)
	if before-after < 48<<10 {
		t.Fatalf("mapped file memory %d KiB before the trim, %d KiB after: want at least 48 MiB less", before, after)
	}
	readAll()
	if again := rssFileKiB(t); again-after < 48<<10 {
		t.Fatalf("reading everything again mapped %d KiB: want the pages back", again-after)
	}
}
