// Package backup implements `chartctl admin backup`.
package backup

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	ibackup "github.com/chartctl/chartctl/internal/backup"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// BackupOptions are the inputs of `admin backup`.
type BackupOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool
	File   string
}

// NewCmdBackup returns the `admin backup` command.
func NewCmdBackup(f *cmdutil.Factory, runF func(*BackupOptions) error) *cobra.Command {
	opts := &BackupOptions{IO: f.IOStreams, Client: f.Client}
	return &cobra.Command{
		Use:   "backup FILE",
		Short: "Save a consistent backup of a running server",
		Long: `Download a consistent snapshot of everything the server stores (users, key
hashes, OAuth clients, organizations, teams, repositories, charts and their
blobs) into FILE, or to standard output with "-". The server keeps serving
and accepting writes; the backup holds the state of one moment.

The archive is checked as it arrives (every digest, the manifest) and FILE
appears only once it is whole. The summary goes to standard output, or to
standard error when the backup itself does.`,
		Example: `  chartctl admin backup chartctl-$(date +%F).tar
  chartctl admin backup - | aws s3 cp - s3://backups/chartctl.tar`,
		Args: cmdutil.ExactArgs(1, "a file to write the backup to (or -) is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return backupRun(cmd.Context(), opts)
		},
	}
}

// Summary is the command's report.
type Summary struct {
	File          string `json:"file"`
	OK            bool   `json:"ok"`
	Bytes         int64  `json:"bytes"`
	Repositories  int    `json:"repositories"`
	ChartVersions int    `json:"chart_versions"`
	Blobs         int    `json:"blobs"`
	BlobBytes     int64  `json:"blob_bytes"`
}

func backupRun(ctx context.Context, opts *BackupOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	var out io.Writer
	var tmp *os.File
	toStdout := opts.File == "-"
	if toStdout {
		out = opts.IO.Out
	} else {
		tmp, err = os.CreateTemp(filepath.Dir(opts.File), "."+filepath.Base(opts.File)+".partial-*")
		if err != nil {
			return fmt.Errorf("create %s: %w", opts.File, err)
		}
		defer func() {
			if tmp != nil {
				tmp.Close()
				os.Remove(tmp.Name())
			}
		}()
		out = tmp
	}
	// Check the archive while it streams.
	pr, pw := io.Pipe()
	type readResult struct{ res *ibackup.Result }
	done := make(chan readResult, 1)
	go func() {
		_, res := ibackup.Read(ctx, pr, nil)
		_, _ = io.Copy(io.Discard, pr)
		done <- readResult{res}
	}()
	counter := &countingWriter{}
	var bar *progress
	if opts.IO.IsStderrTTY() {
		bar = &progress{w: opts.IO.ErrOut}
		counter.fn = bar.update
	}
	_, err = c.Admin.Backup(ctx, io.MultiWriter(out, pw, counter))
	pw.Close()
	res := (<-done).res
	if bar != nil {
		bar.done()
	}
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if !res.OK {
		p := res.Problems[0]
		return fmt.Errorf("the backup the server sent is not whole (%s: %s); nothing was kept: check the server's log", p.Kind, p.Detail)
	}
	if tmp != nil {
		if err := tmp.Sync(); err != nil {
			return fmt.Errorf("write %s: %w", opts.File, err)
		}
		if err := tmp.Close(); err != nil {
			return fmt.Errorf("write %s: %w", opts.File, err)
		}
		if err := os.Rename(tmp.Name(), opts.File); err != nil {
			return fmt.Errorf("write %s: %w", opts.File, err)
		}
		tmp = nil
	}
	s := Summary{File: opts.File, OK: true, Bytes: counter.n, Repositories: res.Checked.Repositories,
		ChartVersions: res.Checked.ChartVersions, Blobs: res.Checked.Blobs, BlobBytes: res.Checked.Bytes}
	w := opts.IO.Out
	if toStdout {
		w = opts.IO.ErrOut
	}
	if opts.JSON {
		return cmdutil.PrintJSON(w, s)
	}
	name := opts.File
	if toStdout {
		name = "standard output"
	}
	_, err = fmt.Fprintf(w, "%s Backed up %s, %s, %s (%s) to %s\n",
		opts.IO.ColorScheme().SuccessIcon(), text.Count(int64(s.Repositories), "repository", "repositories"),
		text.Count(int64(s.ChartVersions), "chart version", "chart versions"), text.Count(int64(s.Blobs), "blob", "blobs"), text.HumanBytes(s.Bytes), name)
	return err
}

type countingWriter struct {
	n  int64
	fn func(int64)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if c.fn != nil {
		c.fn(c.n)
	}
	return len(p), nil
}

// progress shows the bytes received on one terminal line.
type progress struct {
	w     io.Writer
	last  int64
	drawn bool
}

func (p *progress) update(n int64) {
	if p.drawn && n-p.last < 256<<10 {
		return
	}
	p.drawn, p.last = true, n
	fmt.Fprintf(p.w, "\r\x1b[KBacking up… %s", text.HumanBytes(n))
}

func (p *progress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
