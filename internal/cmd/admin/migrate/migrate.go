// Package migrate implements `chartctl admin migrate`: moving a
// single-node data directory to PostgreSQL and an S3-compatible store.
package migrate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/dump"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/migrate"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/s3blob"
)

// Options are the inputs of `admin migrate`.
type Options struct {
	IO        *iostreams.IOStreams
	From      string
	Database  string
	BlobStore string
}

// NewCmdMigrate returns the `admin migrate` command. runF replaces the run
// function in tests.
func NewCmdMigrate(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "migrate --from DATA --database URL --blob-store URL",
		Short: "Copy a single-node data directory to PostgreSQL and an S3 store",
		Long: `Copy a single-node chartctl (the bbolt database and blob files of its data
directory) to PostgreSQL and an S3-compatible store, for running replicas.
Stop the server first: the data directory is opened exclusively.

The copy keeps IDs, password hashes, API keys and times, and carries
everything a backup carries: users, keys, OAuth clients, organizations,
teams, repositories, charts with their download counters, quotas,
retention policies, webhooks (their secrets stay sealed: give the replicas
this node's secrets key file, DATA/secrets.key, as --secrets-key-file), the
OCI registry's content and the audit log.

Blobs go first and an interrupted run resumes them: run the same command
again and blobs already copied are skipped. Records are then written in
one database transaction, so a run that stops writes none; the database
must hold no data. At the end the records are read back and compared with
the source's, and every blob is read back and checked against its digest.
Dashboard sessions and OAuth tokens are not copied: users sign in again.`,
		Example: `  chartctl admin migrate --from /var/lib/chartctl \
    --database 'postgres://chartctl:PASSWORD@db:5432/chartctl?sslmode=require' \
    --blob-store 's3://charts/prod?region=eu-west-1'`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.From == "" || opts.Database == "" || opts.BlobStore == "" {
				return errors.New("--from, --database and --blob-store are required")
			}
			if !strings.HasPrefix(opts.Database, "postgres://") && !strings.HasPrefix(opts.Database, "postgresql://") {
				return fmt.Errorf("invalid --database: use postgres://user:pass@host:port/db")
			}
			if !strings.HasPrefix(opts.BlobStore, "s3://") {
				return fmt.Errorf("invalid --blob-store: use s3://BUCKET[/PREFIX]?endpoint=URL&region=R&path_style=true")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.From, "from", "", "the data directory of the single-node server (holding chartctl.db and blobs/)")
	cmd.Flags().StringVar(&opts.Database, "database", "", "the PostgreSQL database to copy to: postgres://user:pass@host:port/db?sslmode=…")
	cmd.Flags().StringVar(&opts.BlobStore, "blob-store", "", "the S3 store to copy to: s3://BUCKET[/PREFIX]?endpoint=URL&region=R&path_style=true")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	src, err := bolt.Open(filepath.Join(opts.From, "chartctl.db"), bolt.LockTimeout(time.Second))
	if errors.Is(err, bolt.ErrLocked) {
		return fmt.Errorf("data directory %s is in use by a running chartctl server; stop it first", opts.From)
	} else if err != nil {
		return err
	}
	defer src.Close()
	srcBlobs, err := blob.Open(filepath.Join(opts.From, "blobs"))
	if err != nil {
		return err
	}
	dst, err := postgres.Open(ctx, opts.Database)
	if err != nil {
		return err
	}
	defer dst.Close()
	dstBlobs, err := s3blob.Open(ctx, opts.BlobStore)
	if err != nil {
		return err
	}
	m := &migrate.Migration{Src: src, SrcBlobs: srcBlobs, Dst: dst, DstBlobs: dstBlobs, Progress: opts.IO.ErrOut,
		Transaction: func(ctx context.Context, fn func(dump.Target) error) error {
			return dst.Import(ctx, func(tx *postgres.DB) error { return fn(tx) })
		}}
	sum, err := m.Run(ctx)
	if err != nil {
		return fmt.Errorf("migration stopped: %w", err)
	}
	fmt.Fprintf(opts.IO.Out, "Migrated and verified:\n%s\n", sum)
	return nil
}
