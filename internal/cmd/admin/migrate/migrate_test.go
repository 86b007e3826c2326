package migrate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/cmd/admin/migrate"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/testkit/enginetest"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/testkit/s3test"
)

func TestMain(m *testing.M) { os.Exit(enginetest.Main(m)) }

// TestMigrateCommand runs the command on a data directory with one chart
// against a real PostgreSQL and versitygw: progress on stderr, the
// verified summary on stdout.
func TestMigrateCommand(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	db, err := bolt.Open(filepath.Join(data, "chartctl.db"))
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.Open(filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	w, _ := blobs.Create(ctx)
	_, _ = w.Write([]byte("archive"))
	d, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateRepository(ctx, &chartctl.Repository{Name: "r"}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := db.PutChartVersion(ctx, &chartctl.ChartVersion{Repository: "r", Name: "web", Version: "1.0.0", Digest: d}, chartctl.PutVersionOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	ios, _, out, errOut := iostreams.Test()
	cmd := migrate.NewCmdMigrate(&cmdutil.Factory{IOStreams: ios}, nil)
	cmd.SetArgs([]string{"--from", data, "--database", pgtest.NewDatabase(t), "--blob-store", s3test.NewBucket(t)})
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("migrate: %v\n%s", err, errOut)
	}
	if !strings.Contains(out.String(), "Migrated and verified") || !strings.Contains(out.String(), "chart versions:      1") ||
		!strings.Contains(out.String(), "blobs:               1 (1 copied now") {
		t.Fatalf("stdout:\n%s", out)
	}
	if !strings.Contains(errOut.String(), "verify blobs") || !strings.Contains(errOut.String(), "100%") {
		t.Fatalf("no progress on stderr:\n%s", errOut)
	}

	// Missing flags are refused before anything is opened.
	cmd = migrate.NewCmdMigrate(&cmdutil.Factory{IOStreams: ios}, nil)
	cmd.SetArgs([]string{"--from", data})
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	if err := cmd.ExecuteContext(ctx); err == nil || !strings.Contains(err.Error(), "required") {
		t.Fatalf("without --database: %v", err)
	}
}
