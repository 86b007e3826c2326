package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	ibackup "github.com/chartctl/chartctl/internal/backup"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/testkit"
)

func TestBackupToFileAndStdout(t *testing.T) {
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "r", "private")
	if r := ts.Upload(t, "r", ts.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"}), ""); r.StatusCode != 200 {
		t.Fatal(r.StatusCode)
	}
	ios, _, out, errOut := iostreams.Test()
	mk := func() (*client.Client, error) { return client.New(ts.URL, client.WithToken(ts.AdminKey)) }
	file := filepath.Join(t.TempDir(), "b.tar")
	if err := backupRun(context.Background(), &BackupOptions{IO: ios, Client: mk, JSON: true, File: file}); err != nil {
		t.Fatal(err)
	}
	var s Summary
	if err := json.Unmarshal(out.Bytes(), &s); err != nil || !s.OK || s.Repositories != 1 || s.ChartVersions != 1 || s.Blobs != 1 {
		t.Fatalf("summary %s (%v)", out, err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, res := ibackup.Read(context.Background(), bytes.NewReader(b), nil); !res.OK || int64(len(b)) != s.Bytes {
		t.Fatalf("the file does not verify: %+v (%d bytes, summary says %d)", res, len(b), s.Bytes)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(file), ".*partial*")); len(left) != 0 {
		t.Errorf("left behind %v", left)
	}

	out.Reset()
	errOut.Reset()
	if err := backupRun(context.Background(), &BackupOptions{IO: ios, Client: mk, File: "-"}); err != nil {
		t.Fatal(err)
	}
	if _, res := ibackup.Read(context.Background(), bytes.NewReader(out.Bytes()), nil); !res.OK {
		t.Fatalf("stdout is not a whole backup: %+v", res.Problems)
	}
	if !strings.Contains(errOut.String(), "Backed up 1 repository, 1 chart version, 1 blob") {
		t.Errorf("summary on stderr: %q", errOut)
	}

	// A non-admin credential: refused, and no file appears.
	dev := ts.MustUser(t, "dev@example.com", false)
	key := ts.MustKey(t, dev, "repo:read")
	other := filepath.Join(t.TempDir(), "x.tar")
	err = backupRun(context.Background(), &BackupOptions{IO: ios, File: other, Client: func() (*client.Client, error) {
		return client.New(ts.URL, client.WithToken(key), client.WithMaxRetries(0))
	}})
	if err == nil || !client.IsForbidden(err) {
		t.Fatalf("non-admin backup: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(other)); len(entries) != 0 {
		t.Errorf("a refused backup left %v", entries)
	}
}
