package restore

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/dump"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/s3blob"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/enginetest"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/testkit/s3test"
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
	if !strings.Contains(out.String(), "Restored 1 repository, 1 chart version and 1 blob") {
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

func TestMain(m *testing.M) { os.Exit(enginetest.Main(m)) }

// testkitKey is the secrets key testkit servers seal webhook secrets with.
const testkitKey = "testkit secrets key, 32+ bytes long"

// backupWithWebhook returns a backup of a server with a chart and a
// webhook, written to a file.
func backupWithWebhook(t *testing.T) (string, []byte) {
	t.Helper()
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "r", "public")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	if r := ts.Upload(t, "r", ts.AdminKey, archive, ""); r.StatusCode != 200 {
		t.Fatal(r.StatusCode)
	}
	if r := ts.DoJSON(t, http.MethodPost, "/v1/repositories/r/webhooks", ts.AdminKey, map[string]any{"url": "https://hooks.example.com/r", "events": []string{"*"}}); r.StatusCode != 200 {
		t.Fatal(r.StatusCode, string(r.Body))
	}
	b := ts.Do(t, http.MethodGet, "/v1/admin/backup", ts.AdminKey, nil).Body
	file := filepath.Join(t.TempDir(), "b.tar")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return file, archive
}

func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios}
	f.Flags.Output = cmdutil.OutputTable
	cmd := NewCmdRestore(f, nil)
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// The command restores into PostgreSQL and S3, checks the secrets key
// against the webhook secrets, and refuses a wrong key leaving both
// stores as they were.
func TestRestoreIntoPostgresAndS3(t *testing.T) {
	file, archive := backupWithWebhook(t)
	keyFile := filepath.Join(t.TempDir(), "secrets.key")
	os.WriteFile(keyFile, []byte(testkitKey), 0o600)
	wrongKey := filepath.Join(t.TempDir(), "wrong.key")
	os.WriteFile(wrongKey, []byte("another key of at least 32 bytes!!"), 0o600)

	dbURL, bucket := pgtest.NewDatabase(t), s3test.NewBucket(t)
	_, _, err := runCmd(t, file, "--database", dbURL, "--blob-store", bucket, "--secrets-key-file", wrongKey)
	if err == nil || !strings.Contains(err.Error(), "does not open the secret of webhook") || !strings.Contains(err.Error(), "the database and the S3 store were left as they were") {
		t.Fatalf("wrong key: %v", err)
	}
	db, err := postgres.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if empty, kind, _ := dump.Empty(context.Background(), db); !empty {
		t.Fatalf("the refused restore left a %s in the database", kind)
	}
	blobs, err := s3blob.Open(context.Background(), bucket)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	blobs.Walk(context.Background(), func(string) error { n++; return nil })
	if n != 0 {
		t.Fatalf("the refused restore left %d blobs in S3", n)
	}

	out, _, err := runCmd(t, file, "--database", dbURL, "--blob-store", bucket, "--secrets-key-file", keyFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Restored 1 repository, 1 chart version and 1 blob", "1 webhook,", "3 audit entries", "opens the webhook secrets (1 webhook,",
		"Start the server with --database 'postgres://", "--blob-store '" + bucket + "'"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	cv, err := db.ChartVersion(context.Background(), "r", "app", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	b, err := blobs.Open(context.Background(), cv.Digest)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(b)
	b.Close()
	if string(got) != string(archive) {
		t.Error("the restored archive differs")
	}
	// Again: the database holds data now.
	if _, _, err := runCmd(t, file, "--database", dbURL, "--blob-store", bucket); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("restore into a database with data: %v", err)
	}
}

// With --data, the key is copied into the new data directory, where a
// server finds it; without a key the command warns about the sealed
// secrets. A failed restore leaves no working directory behind.
func TestRestoreDataWithSecretsKey(t *testing.T) {
	file, _ := backupWithWebhook(t)
	keyFile := filepath.Join(t.TempDir(), "secrets.key")
	os.WriteFile(keyFile, []byte(testkitKey), 0o600)
	parent := t.TempDir()
	data := filepath.Join(parent, "data")
	if _, _, err := runCmd(t, file, "--data", data, "--secrets-key-file", keyFile); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(data, "secrets.key")); err != nil || string(b) != testkitKey {
		t.Fatalf("secrets.key: %q %v", b, err)
	}
	_, stderr, err := runCmd(t, file, "--data", filepath.Join(parent, "nokey"))
	if err != nil || !strings.Contains(stderr, "The secrets of 1 webhook are sealed with the source server's secrets key") {
		t.Fatalf("without a key: %v, stderr %q", err, stderr)
	}
	if _, _, err := runCmd(t, file, "--data", filepath.Join(parent, "wrong"), "--secrets-key-file", file); err == nil {
		t.Fatal("a backup file accepted as a secrets key")
	}
	entries, _ := os.ReadDir(parent)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "data,nokey" {
		t.Errorf("%s holds %v, want data and nokey only", parent, names)
	}
}

func TestRestoreFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"b.tar"}, "--data is required"},
		{[]string{"b.tar", "--database", "postgres://h/db"}, "--data is required"},
		{[]string{"b.tar", "--database", "mysql://h/db", "--data", "d"}, "invalid --database"},
		{[]string{"b.tar", "--data", "d", "--blob-store", "gs://b"}, "invalid --blob-store"},
	} {
		var ran bool
		ios, _, _, _ := iostreams.Test()
		cmd := NewCmdRestore(&cmdutil.Factory{IOStreams: ios}, func(*RestoreOptions) error { ran = true; return nil })
		cmd.SetArgs(c.args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		if ran || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: ran %v, err %v, want %q", c.args, ran, err, c.want)
		}
	}
}

// backupFiles returns a backup of a server with one chart, a copy with a
// flipped byte in the chart's blob, and the chart's archive.
// key is the server admin's API key, which the restore keeps.
func backupFiles(t *testing.T) (good, corrupt string, archive []byte, key string) {
	t.Helper()
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "r", "public")
	archive = testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	if r := ts.Upload(t, "r", ts.AdminKey, archive, ""); r.StatusCode != 200 {
		t.Fatal(r.StatusCode)
	}
	b := ts.Do(t, http.MethodGet, "/v1/admin/backup", ts.AdminKey, nil).Body
	dir := t.TempDir()
	good, corrupt = filepath.Join(dir, "b.tar"), filepath.Join(dir, "bad.tar")
	bad := append([]byte(nil), b...)
	bad[strings.Index(string(bad), string(archive[:64]))+100] ^= 1
	if err := os.WriteFile(good, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(corrupt, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	return good, corrupt, archive, ts.AdminKey
}

// checkRestoreInto restores corrupt into the existing empty directory dir
// (refused, dir left empty), then good (dir then holds the data a server
// serves the chart from, and nothing else).
func checkRestoreInto(t *testing.T, dir, good, corrupt string, archive []byte, key string) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	err := restoreRun(context.Background(), &RestoreOptions{IO: ios, File: corrupt, Data: dir})
	if err == nil || !strings.Contains(err.Error(), "blob_digest") {
		t.Fatalf("corrupt restore: %v", err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Fatalf("the failed restore left %v in %s (%v)", entries, dir, err)
	}
	if err := restoreRun(context.Background(), &RestoreOptions{IO: ios, File: good, Data: dir}); err != nil {
		t.Fatalf("restore into the empty %s: %v", dir, err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "blobs,chartctl.db" {
		t.Errorf("%s holds %v, want blobs and chartctl.db only", dir, names)
	}
	restored := testkit.OpenServer(t, dir)
	if r := restored.Do(t, http.MethodGet, "/v1/repositories/r/charts/app/1.0.0/archive", key, nil); r.StatusCode != 200 || string(r.Body) != string(archive) {
		t.Fatalf("restored download: %d", r.StatusCode)
	}
}

// The usual target, an existing empty directory, is restored into (a
// rename onto it used to fail with "file exists"); an empty volume's
// lost+found does not count, anything else does, and so does the working
// directory of an interrupted restore, which the message names.
func TestRestoreIntoExistingEmptyDir(t *testing.T) {
	good, corrupt, archive, key := backupFiles(t)
	checkRestoreInto(t, t.TempDir(), good, corrupt, archive, key)

	withLostFound := t.TempDir()
	os.Mkdir(filepath.Join(withLostFound, "lost+found"), 0o700)
	ios, _, _, _ := iostreams.Test()
	if err := restoreRun(context.Background(), &RestoreOptions{IO: ios, File: good, Data: withLostFound}); err != nil {
		t.Fatalf("restore beside lost+found: %v", err)
	}

	interrupted := t.TempDir()
	os.Mkdir(filepath.Join(interrupted, ".restoring-0a1b2c"), 0o700)
	err := restoreRun(context.Background(), &RestoreOptions{IO: ios, File: good, Data: interrupted})
	if !errors.As(err, new(*cmdutil.FlagError)) || !strings.Contains(err.Error(), "left by an interrupted restore: remove it") {
		t.Errorf("restore over an interrupted one: %v", err)
	}
}

// mountChildEnv carries the backup files to the copy of the test binary
// that TestRestoreIntoMountPoint runs in its own mount namespace.
const mountChildEnv = "CHARTCTL_TEST_RESTORE_MOUNT"

// tmpfsMagic is statfs's f_type of a tmpfs (linux/magic.h).
const tmpfsMagic = 0x01021994

// A data directory that is a mount point (an empty volume, here a tmpfs):
// the restore stages on the volume itself, so its files end up on it, and
// a failed restore leaves the mount point empty. The test runs itself
// again under `unshare -rm` (a user and mount namespace, where it may
// mount a tmpfs without privileges).
func TestRestoreIntoMountPoint(t *testing.T) {
	if files := os.Getenv(mountChildEnv); files != "" {
		good, corrupt, _ := strings.Cut(files, "\n")
		archive, err := os.ReadFile(os.Getenv(mountChildEnv + "_ARCHIVE"))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64m"); err != nil {
			t.Fatalf("mount a tmpfs on %s: %v", dir, err)
		}
		// Unmounted after the restored server is closed (cleanups run
		// last in, first out) and before the directory is removed.
		t.Cleanup(func() { syscall.Unmount(dir, 0) })
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil || st.Type != tmpfsMagic {
			t.Fatalf("%s is not a tmpfs mount (%x, %v)", dir, st.Type, err)
		}
		checkRestoreInto(t, dir, good, corrupt, archive, os.Getenv(mountChildEnv+"_KEY"))
		return
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare(1) is not installed: cannot make a mount point without privileges")
	}
	if out, err := exec.Command(unshare, "-rm", "true").CombinedOutput(); err != nil {
		t.Skipf("this machine does not allow user and mount namespaces (unshare -rm: %v %s)", err, out)
	}
	good, corrupt, archive, key := backupFiles(t)
	archiveFile := filepath.Join(t.TempDir(), "app.tgz")
	os.WriteFile(archiveFile, archive, 0o600)
	cmd := exec.Command(unshare, "-rm", os.Args[0], "-test.run", "^TestRestoreIntoMountPoint$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), mountChildEnv+"="+good+"\n"+corrupt, mountChildEnv+"_ARCHIVE="+archiveFile, mountChildEnv+"_KEY="+key)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRestoreIntoMountPoint") {
		t.Fatalf("the restore into a mount point failed (%v):\n%s", err, out)
	}
}
