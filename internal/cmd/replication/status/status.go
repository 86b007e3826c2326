// Package status implements `chartctl replication status`.
package status

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// StatusOptions are the inputs of `replication status`.
type StatusOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool
	Now    func() time.Time

	Name string
}

// HintList is the next step after an unknown replication.
const HintList = "To see the replications you manage, run: chartctl replication list"

// NewCmdStatus returns the `replication status` command; runF replaces
// the run function in tests.
func NewCmdStatus(f *cmdutil.Factory, runF func(*StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{IO: f.IOStreams, Client: f.Client, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show how a replication stands",
		Long: `Show a replication's target and how it stands: versions waiting to be
copied (pending, including those being retried), versions given up after
a day of retries (failed), its last success and its last error.`,
		Example: `  chartctl replication status acme-dr
  chartctl replication status acme-dr -o json`,
		Args:              cmdutil.ExactArgs(1, "a replication name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteReplications(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return statusRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func statusRun(ctx context.Context, opts *StatusOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	r, _, err := c.Replications.Get(ctx, opts.Name)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("replication %s: %w", opts.Name, err), HintList)
	}
	st, _, err := c.Replications.Status(ctx, opts.Name)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("status of replication %s: %w", opts.Name, err), HintList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, st)
	}
	Print(opts.IO, opts.Now(), r, st)
	return nil
}

// Print writes a replication's status as `replication status` shows it.
func Print(ios *iostreams.IOStreams, now time.Time, r *client.Replication, st *client.ReplicationStatus) {
	cs := ios.ColorScheme()
	w := ios.Out
	lastSuccess := "never"
	if st.LastSuccessAt != nil {
		lastSuccess = st.LastSuccessAt.UTC().Format("2006-01-02 15:04:05 MST")
		if ios.IsStdoutTTY() {
			lastSuccess += " (" + cmdutil.FuzzyAgo(now, *st.LastSuccessAt) + ")"
		}
	}
	failed := fmt.Sprint(st.Failed)
	if st.Failed > 0 {
		failed = cs.Red(failed)
	}
	fmt.Fprintf(w, "%s\n\n", cs.Bold(termtext.Line(r.Name)))
	fmt.Fprintf(w, "source:       %s\n", termtext.Line(r.Source))
	fmt.Fprintf(w, "target:       %s\n", termtext.Line(r.Target))
	fmt.Fprintf(w, "pending:      %d\n", st.Pending)
	fmt.Fprintf(w, "failed:       %s\n", failed)
	fmt.Fprintf(w, "last success: %s\n", lastSuccess)
	if st.LastError != nil && *st.LastError != "" {
		fmt.Fprintf(w, "last error:   %s\n", cs.Red(termtext.Line(*st.LastError)))
	}
	if st.Failed > 0 {
		fmt.Fprintf(ios.ErrOut, "Versions given up are copied again by: chartctl replication run %s\n", termtext.Line(r.Name))
	}
}
