package restore

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/testkit"
)

func TestRestoreRun(t *testing.T) {
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "r", "public")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	if r := ts.Upload(t, "r", ts.AdminKey, archive, ""); r.StatusCode != 200 {
		t.Fatal(r.StatusCode)
	}
	b := ts.Do(t, http.MethodGet, "/v1/admin/backup", ts.AdminKey, nil).Body
	file := filepath.Join(t.TempDir(), "b.tar")
	os.WriteFile(file, b, 0o600)

	ios, _, out, _ := iostreams.Test()
	data := filepath.Join(t.TempDir(), "restored")
	if err := restoreRun(context.Background(), &RestoreOptions{IO: ios, File: file, Data: data}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Restored 1 repositories, 1 chart versions and 1 blobs") {
		t.Errorf("output %q", out)
	}
	restored := testkit.OpenServer(t, data)
	if r := restored.Do(t, http.MethodGet, "/v1/repositories/r/charts/app/1.0.0/archive", ts.AdminKey, nil); r.StatusCode != 200 || string(r.Body) != string(archive) {
		t.Fatalf("restored download: %d", r.StatusCode)
	}

	// Into a non-empty directory: refused, untouched.
	if err := restoreRun(context.Background(), &RestoreOptions{IO: ios, File: file, Data: data}); !errors.As(err, new(*cmdutil.FlagError)) {
		t.Errorf("restore into a non-empty dir: %v", err)
	}

	// A flipped byte: refused, and nothing is left behind.
	bad := append([]byte(nil), b...)
	i := strings.Index(string(bad), string(archive[:64]))
	bad[i+100] ^= 1
	badFile := filepath.Join(t.TempDir(), "bad.tar")
	os.WriteFile(badFile, bad, 0o600)
	fresh := filepath.Join(t.TempDir(), "fresh")
	err := restoreRun(context.Background(), &RestoreOptions{IO: ios, File: badFile, Data: fresh})
	if err == nil || !strings.Contains(err.Error(), "blob_digest") {
		t.Fatalf("tampered restore: %v", err)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("the failed restore left %s behind", fresh)
	}
	empty := t.TempDir()
	if err := restoreRun(context.Background(), &RestoreOptions{IO: ios, File: badFile, Data: empty}); err == nil {
		t.Fatal("tampered restore into an empty dir succeeded")
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("the failed restore left %v in the existing dir", entries)
	}
}
