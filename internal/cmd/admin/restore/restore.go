// Package restore implements `chartctl admin restore`.
package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	ibackup "github.com/chartctl/chartctl/internal/backup"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// RestoreOptions are the inputs of `admin restore`.
type RestoreOptions struct {
	IO   *iostreams.IOStreams
	JSON bool
	File string
	Data string
}

// NewCmdRestore returns the `admin restore` command.
func NewCmdRestore(f *cmdutil.Factory, runF func(*RestoreOptions) error) *cobra.Command {
	opts := &RestoreOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "restore FILE --data DIR",
		Short: "Restore a backup into a new data directory (offline)",
		Long: `Restore the backup FILE ("-" for standard input) into DIR, which must not
exist or be empty; then start the server with --data DIR. Every digest is
checked as the archive is read, and no record is written before the whole
archive has proved whole: a truncated or altered backup is refused and DIR
is left as it was (removed when this command created it).

This is the layout of 'chartctl serve --data DIR' (DIR/chartctl.db and
DIR/blobs); no server may be using DIR.`,
		Example: `  chartctl admin restore chartctl-2026-11-23.tar --data /var/lib/chartctl-restored`,
		Args:    cmdutil.ExactArgs(1, "a backup file to restore is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			opts.JSON = f.WantsJSON()
			if opts.Data == "" {
				return cmdutil.FlagErrorf("--data is required: the new, empty data directory to restore into")
			}
			if runF != nil {
				return runF(opts)
			}
			return restoreRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Data, "data", "", "empty data directory to restore into (required)")
	return cmd
}

// Summary is the command's report.
type Summary struct {
	Data          string `json:"data"`
	Repositories  int    `json:"repositories"`
	ChartVersions int    `json:"chart_versions"`
	Blobs         int    `json:"blobs"`
	Bytes         int64  `json:"bytes"`
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
	created, err := prepare(opts.Data)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			cleanup(opts.Data, created)
		}
	}()
	db, err := bolt.Open(filepath.Join(opts.Data, "chartctl.db"))
	if err != nil {
		return err
	}
	blobs, err := blob.Open(filepath.Join(opts.Data, "blobs"))
	if err != nil {
		db.Close()
		return err
	}
	res, err := ibackup.Restore(ctx, in, ibackup.Target{Store: db, OAuth: db, Blobs: blobs})
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("restore %s: %w; %s was left as it was", opts.File, err, opts.Data)
	}
	s := Summary{Data: opts.Data, Repositories: res.Checked.Repositories, ChartVersions: res.Checked.ChartVersions, Blobs: res.Checked.Blobs, Bytes: res.Checked.Bytes}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, s)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Restored %d repositories, %d chart versions and %d blobs into %s; start the server with --data %s\n",
		opts.IO.ColorScheme().SuccessIcon(), s.Repositories, s.ChartVersions, s.Blobs, s.Data, s.Data)
	return err
}

// prepare makes sure dir is a new or empty directory; created reports
// that it did not exist.
func prepare(dir string) (created bool, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, fmt.Errorf("create %s: %w", dir, err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("read %s: %w", dir, err)
	case len(entries) > 0:
		return false, cmdutil.FlagErrorf("%s is not empty: restore only into a new or empty directory", dir)
	}
	return false, nil
}

// cleanup removes what a failed restore wrote: dir itself when it created
// it, else everything inside it.
func cleanup(dir string, created bool) {
	if created {
		_ = os.RemoveAll(dir)
		return
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}
