// Package restore implements `chartctl admin restore`.
package restore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	ibackup "github.com/chartctl/chartctl/internal/backup"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/dump"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/s3blob"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/text"
)

// RestoreOptions are the inputs of `admin restore`.
type RestoreOptions struct {
	IO   *iostreams.IOStreams
	JSON bool
	File string
	// Data is the data directory: the bbolt database and file blobs
	// unless Database and BlobStore say otherwise.
	Data string
	// Database is "" or "bolt" (DATA/chartctl.db) or a postgres:// URL.
	Database string
	// BlobStore is "" or "file" (DATA/blobs) or an s3:// URL.
	BlobStore string
	// SecretsKeyFile is the source server's secrets key: checked against
	// the backup's webhook secrets and copied to DATA/secrets.key.
	SecretsKeyFile string
}

// NewCmdRestore returns the `admin restore` command.
func NewCmdRestore(f *cmdutil.Factory, runF func(*RestoreOptions) error) *cobra.Command {
	opts := &RestoreOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "restore FILE (--data DIR | --database URL --blob-store URL)",
		Short: "Restore a backup into an empty store (offline)",
		Long: `Restore the backup FILE ("-" for standard input) into an empty store, then
start the server on it. The target is what 'chartctl serve' uses:

  --data DIR                            bbolt and blob files in DIR
  --database URL --blob-store s3://…    PostgreSQL and an S3-compatible store
  --database URL --data DIR             PostgreSQL, blob files in DIR/blobs
  --data DIR --blob-store s3://…        bbolt in DIR, blobs in S3

A backup of either engine restores into either. DIR must not exist or be
empty (an empty mount point will do; a lost+found directory is ignored), and the database must hold no data (a new database: the schema is
created). Blobs already in an S3 store are kept.

Every digest is checked as the archive is read, and no record is written
before the whole archive has proved whole; the records then go in at once
(one PostgreSQL transaction; bbolt and blob files are made in
DIR/.restoring-… and moved into DIR at the end), are read back and compared with the
backup's. A truncated or altered backup, or any failure, leaves the target
as it was: the blobs written to S3 are deleted again.

Webhook secrets stay sealed with the source server's secrets key. Give that
key as --secrets-key-file (single node: its DATA/secrets.key) to check that
it opens them and, with --data, to copy it to DIR/secrets.key; with
PostgreSQL start every replica with it.`,
		Example: `  chartctl admin restore chartctl-2026-11-23.tar --data /var/lib/chartctl-restored \
    --secrets-key-file /var/lib/chartctl/secrets.key
  AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=… chartctl admin restore chartctl.tar \
    --database 'postgres://chartctl:PASSWORD@db:5432/chartctl?sslmode=require' \
    --blob-store 's3://charts/prod?region=eu-west-1'`,
		Args: cmdutil.ExactArgs(1, "a backup file to restore is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			opts.JSON = f.WantsJSON()
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return restoreRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Data, "data", "", "new or empty data directory to restore into")
	cmd.Flags().StringVar(&opts.Database, "database", "", "restore into this empty PostgreSQL database: postgres://user:pass@host:port/db?sslmode=… (default: bolt in --data)")
	cmd.Flags().StringVar(&opts.BlobStore, "blob-store", "", "restore blobs into this S3 store: s3://BUCKET[/PREFIX]?endpoint=URL&region=R&path_style=true (default: files in --data)")
	cmd.Flags().StringVar(&opts.SecretsKeyFile, "secrets-key-file", "", "the source server's secrets key, which seals its webhook secrets")
	return cmd
}

func (o *RestoreOptions) bolt() bool { return o.Database == "" || o.Database == "bolt" }
func (o *RestoreOptions) fileBlobs() bool {
	return o.BlobStore == "" || o.BlobStore == "file"
}

func (o *RestoreOptions) validate() error {
	switch db := o.Database; {
	case o.bolt():
	case strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://"):
		if _, err := url.Parse(db); err != nil {
			return cmdutil.FlagErrorf("invalid --database: the URL does not parse; use postgres://user:pass@host:port/db?sslmode=…")
		}
	default:
		return cmdutil.FlagErrorf("invalid --database: use bolt or postgres://user:pass@host:port/db")
	}
	if !o.fileBlobs() {
		if _, err := s3blob.ParseURL(o.BlobStore); err != nil {
			return cmdutil.FlagErrorf("invalid --blob-store: %v", err)
		}
	}
	if o.Data == "" && (o.bolt() || o.fileBlobs()) {
		return cmdutil.FlagErrorf("--data is required: the new, empty data directory to restore into (or give --database and --blob-store)")
	}
	return nil
}

// Summary is the command's report.
type Summary struct {
	Data          string         `json:"data,omitempty"`
	Database      string         `json:"database"`
	BlobStore     string         `json:"blob_store"`
	Repositories  int            `json:"repositories"`
	ChartVersions int            `json:"chart_versions"`
	Blobs         int            `json:"blobs"`
	Bytes         int64          `json:"bytes"`
	Records       map[string]int `json:"records"`
	// SealedSecrets counts webhooks whose secrets need the source's
	// secrets key; SecretsKey says where it was put or checked.
	SealedSecrets int    `json:"sealed_secrets"`
	SecretsKey    string `json:"secrets_key,omitempty"`
}

func restoreRun(ctx context.Context, opts *RestoreOptions) (err error) {
	var in io.Reader = opts.IO.In
	if opts.File != "-" {
		f, err := os.Open(opts.File)
		if err != nil {
			return fmt.Errorf("open the backup: %w", err)
		}
		defer f.Close()
		in = f
	}
	var box *secrets.Box
	if opts.SecretsKeyFile != "" {
		if box, err = secrets.Load(opts.SecretsKeyFile, false); err != nil {
			return err
		}
	}
	s := Summary{Data: opts.Data, Database: "bolt", BlobStore: "file"}

	// Files are made in a working directory inside DIR, on DIR's own
	// filesystem (a mounted volume's), and moved into DIR once everything
	// is in: a restore that fails leaves DIR as it found it, and one that
	// is killed leaves only DIR/.restoring-….
	var st *staging
	if opts.Data != "" {
		if st, err = prepare(opts.Data); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				st.abandon()
			}
		}()
	}
	work := ""
	if st != nil {
		work = st.work
	}

	t := ibackup.Target{}
	if opts.bolt() {
		db, err := bolt.Open(filepath.Join(work, "chartctl.db"))
		if err != nil {
			return err
		}
		defer db.Close()
		t.Store = db
	} else {
		db, err := postgres.Open(ctx, opts.Database)
		if err != nil {
			return err
		}
		defer db.Close()
		t.Store = db
		t.Transaction = func(ctx context.Context, fn func(dump.Target) error) error {
			return db.Import(ctx, func(tx *postgres.DB) error { return fn(tx) })
		}
		s.Database = redact(opts.Database)
	}
	if opts.fileBlobs() {
		blobs, err := blob.Open(filepath.Join(work, "blobs"))
		if err != nil {
			return err
		}
		t.Blobs = blobs
	} else {
		blobs, err := s3blob.Open(ctx, opts.BlobStore)
		if err != nil {
			return err
		}
		t.Blobs = blobs
		s.BlobStore = opts.BlobStore
	}
	t.Check = func(records []chartctl.DumpRecord) error {
		for _, r := range records {
			w := r.Webhook
			if w == nil || len(w.Secret) == 0 {
				continue
			}
			s.SealedSecrets++
			if box == nil {
				continue
			}
			if _, err := box.Open(w.Secret); err != nil {
				return fmt.Errorf("the key in %s does not open the secret of webhook %s: it is not the secrets key of the server this backup was taken from", opts.SecretsKeyFile, w.ID)
			}
		}
		return nil
	}

	res, counts, err := ibackup.Restore(ctx, in, t)
	if err != nil {
		var where []string
		if opts.Data != "" {
			where = append(where, opts.Data)
		}
		if !opts.bolt() {
			where = append(where, "the database")
		}
		if !opts.fileBlobs() {
			where = append(where, "the S3 store")
		}
		state := "was left as it was"
		if len(where) > 1 {
			state = "were left as they were"
		}
		return fmt.Errorf("restore %s: %w; %s %s", opts.File, err, strings.Join(where, " and "), state)
	}
	if opts.Data != "" {
		if opts.SecretsKeyFile != "" {
			if err := copyFile(opts.SecretsKeyFile, filepath.Join(work, "secrets.key")); err != nil {
				return fmt.Errorf("copy the secrets key: %w", err)
			}
			s.SecretsKey = filepath.Join(opts.Data, "secrets.key")
		}
		if bs, ok := t.Store.(*bolt.DB); ok {
			if err := bs.Close(); err != nil {
				return err
			}
		}
		if err := st.finish(); err != nil {
			if !opts.bolt() {
				// The records are committed: keep the blobs where they are.
				st.keep()
				return fmt.Errorf("the records are in the database, but moving the blobs from %s into %s failed: %w; move the entries of %s into %s by hand", st.work, opts.Data, err, st.work, opts.Data)
			}
			return fmt.Errorf("move the restored data into %s: %w", opts.Data, err)
		}
	} else if opts.SecretsKeyFile != "" {
		s.SecretsKey = opts.SecretsKeyFile
	}
	s.Repositories, s.ChartVersions, s.Blobs, s.Bytes = res.Checked.Repositories, res.Checked.ChartVersions, res.Checked.Blobs, res.Checked.Bytes
	s.Records = counts
	return report(opts, &s)
}

func report(opts *RestoreOptions, s *Summary) error {
	if s.SealedSecrets > 0 && s.SecretsKey == "" {
		fmt.Fprintf(opts.IO.ErrOut, "! The secrets of %s are sealed with the source server's secrets key: start the server with that key (--secrets-key-file, or copy it to DATA/secrets.key), or they cannot sign deliveries until their secrets are rotated\n", dump.Count(s.SealedSecrets, chartctl.DumpWebhook))
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, s)
	}
	into := s.Data
	start := "--data " + quote(s.Data)
	if s.Database != "bolt" {
		into, start = s.Database, "--database "+quote(s.Database)
		if s.BlobStore == "file" {
			start += " --data " + quote(s.Data)
		}
	}
	if s.BlobStore != "file" {
		into += " and " + s.BlobStore
		start += " --blob-store " + quote(s.BlobStore)
	}
	out := opts.IO.Out
	fmt.Fprintf(out, "%s Restored %s, %s and %s into %s\n",
		opts.IO.ColorScheme().SuccessIcon(), text.Count(int64(s.Repositories), "repository", "repositories"),
		text.Count(int64(s.ChartVersions), "chart version", "chart versions"), text.Count(int64(s.Blobs), "blob", "blobs"), into)
	var parts []string
	for _, k := range chartctl.DumpKinds {
		if n := s.Records[k]; n > 0 {
			parts = append(parts, dump.Count(n, k))
		}
	}
	fmt.Fprintf(out, "  records: %s\n", strings.Join(parts, ", "))
	if s.SealedSecrets > 0 && s.SecretsKey != "" {
		fmt.Fprintf(out, "  the secrets key opens the webhook secrets (%s, %s)\n", dump.Count(s.SealedSecrets, chartctl.DumpWebhook), s.SecretsKey)
	}
	_, err := fmt.Fprintf(out, "Start the server with %s\n", start)
	return err
}

// staging is where a restore with --data makes its files: a working
// directory inside the data directory, so that moving the files into it
// is a rename within one filesystem even when the data directory is a
// mount point.
type staging struct {
	dir, work string
	// created is set when the restore made dir, which it then removes on
	// failure; an existing dir is left empty instead.
	created bool
	// moved lists the entries already moved from work into dir.
	moved []string
	kept  bool
}

// ignorable reports whether an entry of a data directory does not make it
// non-empty: the lost+found directory that mkfs puts at the root of a new
// ext2/3/4 volume, the usual data directory of a container.
func ignorable(e fs.DirEntry) bool { return e.Name() == "lost+found" && e.IsDir() }

// prepare checks that dir is new or empty (creating it when new) and
// returns its staging directory, dir/.restoring-….
func prepare(dir string) (*staging, error) {
	st := &staging{dir: dir}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", filepath.Dir(filepath.Clean(dir)), err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
		st.created = true
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", dir, err)
	default:
		for _, e := range entries {
			if ignorable(e) {
				continue
			}
			if strings.HasPrefix(e.Name(), ".restoring-") {
				return nil, cmdutil.FlagErrorf("%s holds %s, left by an interrupted restore: remove it (rm -r %s) and run the restore again", dir, e.Name(), quote(filepath.Join(dir, e.Name())))
			}
			return nil, cmdutil.FlagErrorf("%s is not empty (it holds %s): restore only into a new or empty directory", dir, e.Name())
		}
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	st.work = filepath.Join(dir, ".restoring-"+hex.EncodeToString(r[:]))
	if err := os.Mkdir(st.work, 0o700); err != nil {
		st.abandon()
		return nil, fmt.Errorf("create %s: %w", st.work, err)
	}
	return st, nil
}

// finish moves every entry of the working directory into dir, the
// database file last (a server started on a half-moved directory would
// otherwise find a database without its blobs), then removes the working
// directory.
func (st *staging) finish() error {
	entries, err := os.ReadDir(st.work)
	if err != nil {
		return err
	}
	slices.SortStableFunc(entries, func(a, b fs.DirEntry) int {
		return cmpBool(a.Name() == "chartctl.db", b.Name() == "chartctl.db")
	})
	for _, e := range entries {
		if err := os.Rename(filepath.Join(st.work, e.Name()), filepath.Join(st.dir, e.Name())); err != nil {
			return err
		}
		st.moved = append(st.moved, e.Name())
	}
	return os.Remove(st.work)
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// keep leaves the working directory and what was moved in place, for a
// failure after the records were committed elsewhere.
func (st *staging) keep() { st.kept = true }

// abandon undoes the restore's files: the working directory, what was
// already moved out of it, and dir itself when the restore created it.
func (st *staging) abandon() {
	if st == nil || st.kept {
		return
	}
	for _, name := range st.moved {
		_ = os.RemoveAll(filepath.Join(st.dir, name))
	}
	if st.work != "" {
		_ = os.RemoveAll(st.work)
	}
	if st.created {
		_ = os.Remove(st.dir)
	}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}

// quote quotes s for a POSIX shell when it holds anything but plain
// characters (an S3 URL's & and ?).
func quote(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// redact hides a password in a URL for messages.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return u.Redacted()
	}
	return raw
}
