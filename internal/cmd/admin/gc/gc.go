// Package gc implements `chartctl admin gc`.
package gc

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// GCOptions are the inputs of `admin gc`.
type GCOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	DryRun bool
}

// NewCmdGC returns the `admin gc` command.
func NewCmdGC(f *cmdutil.Factory, runF func(*GCOptions) error) *cobra.Command {
	opts := &GCOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Collect the OCI registry's garbage now",
		Long: `Collect garbage now, as the server does every hour: upload sessions
abandoned for a day, OCI blob links no manifest has referred to for the
grace period (the server's --gc-grace, 1 hour by default), and stored blobs
nothing has referred to for that long (a deleted chart version's blob is
removed here once past the grace period). With --dry-run, only list what
would go.`,
		Example: `  chartctl admin gc --dry-run
  chartctl admin gc -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return gcRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "only list what would be removed")
	return cmd
}

func gcRun(ctx context.Context, opts *GCOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	rep, _, err := c.Admin.GC(ctx, opts.DryRun)
	if err != nil {
		return fmt.Errorf("garbage collection: %w", err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, rep)
	}
	out := opts.IO.Out
	verb := "Removed"
	if rep.DryRun {
		verb = "Would remove"
	}
	fmt.Fprintf(out, "%s %d upload session(s), %d blob link(s) and %d blob(s) (%s).\n",
		verb, len(rep.Sessions), len(rep.Links), len(rep.Blobs), humanBytes(rep.Bytes))
	if rep.DryRun {
		for _, s := range rep.Sessions {
			fmt.Fprintf(out, "session  %s\n", s)
		}
		for _, l := range rep.Links {
			fmt.Fprintf(out, "link     %s\n", l)
		}
		for _, b := range rep.Blobs {
			fmt.Fprintf(out, "blob     %s\n", b)
		}
	}
	return nil
}

// humanBytes formats n bytes with a binary unit.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
