// Package verify implements `chartctl admin verify`.
package verify

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	ibackup "github.com/chartctl/chartctl/internal/backup"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// VerifyOptions are the inputs of `admin verify`.
type VerifyOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool
	File   string
}

// NewCmdVerify returns the `admin verify` command.
func NewCmdVerify(f *cmdutil.Factory, runF func(*VerifyOptions) error) *cobra.Command {
	opts := &VerifyOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "verify [--file BACKUP]",
		Short: "Check a server's store, or a backup file",
		Long: `Without --file, ask the server to check its store: every chart version has its
archive and provenance blobs with the right digest and size, every blob the
OCI registry holds is there with its digest, every Helm index entry matches a
version, records refer to records that exist (quotas and retention policies
to their repository or organization, OCI manifests to their blobs, manifests
and chart versions, tags to their manifests), and no blob is an orphan
(orphans are listed with their sizes). With --file, check a backup offline:
its format, every digest, its manifest, the same references, and that
nothing is missing or cut short.

Exits 0 when everything is in order and 1 otherwise, so a cron job can alert.`,
		Example: `  chartctl admin verify
  chartctl admin verify --file chartctl-2026-11-23.tar -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return verifyRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.File, "file", "", "check this backup file instead of the server")
	return cmd
}

func verifyRun(ctx context.Context, opts *VerifyOptions) error {
	var res client.VerifyResult
	if opts.File != "" {
		f, err := os.Open(opts.File)
		if err != nil {
			return fmt.Errorf("open the backup: %w", err)
		}
		defer f.Close()
		_, r := ibackup.Read(ctx, f, nil)
		res = client.VerifyResult{OK: r.OK, Checked: client.VerifyChecked(r.Checked), Problems: []client.VerifyProblem{}}
		for _, p := range r.Problems {
			res.Problems = append(res.Problems, client.VerifyProblem(p))
		}
	} else {
		c, err := opts.Client()
		if err != nil {
			return err
		}
		r, _, err := c.Admin.Verify(ctx)
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		res = *r
	}
	if err := printResult(opts, &res); err != nil {
		return err
	}
	if !res.OK {
		return cmdutil.ErrSilent
	}
	return nil
}

func printResult(opts *VerifyOptions, res *client.VerifyResult) error {
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, res)
	}
	cs := opts.IO.ColorScheme()
	what := "The server's store"
	if opts.File != "" {
		what = opts.File
	}
	ch := res.Checked
	for _, p := range res.Problems {
		fmt.Fprintf(opts.IO.Out, "%s\t%s\t%s\n", termtext.Line(p.Kind), termtext.Line(p.Target), termtext.Line(p.Detail))
	}
	if res.OK {
		_, err := fmt.Fprintf(opts.IO.ErrOut, "%s %s is in order: %s (%s) checked\n",
			cs.SuccessIcon(), termtext.Line(what), checked(ch), text.Count(ch.Bytes, "byte", "bytes"))
		return err
	}
	_, err := fmt.Fprintf(opts.IO.ErrOut, "%s %s has %s (%s checked)\n",
		cs.Red("X"), termtext.Line(what), text.Count(int64(len(res.Problems)), "problem", "problems"), checked(ch))
	return err
}

// checked writes how many records and blobs were checked, for a person.
func checked(ch client.VerifyChecked) string {
	return text.Count(int64(ch.Repositories), "repository", "repositories") + ", " +
		text.Count(int64(ch.ChartVersions), "chart version", "chart versions") + ", " +
		text.Count(int64(ch.Blobs), "blob", "blobs")
}
