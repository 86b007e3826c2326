// Package run implements `chartctl replication run`.
package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmd/replication/status"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// RunOptions are the inputs of `replication run`.
type RunOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name    string
	Wait    bool
	Timeout time.Duration
	// Poll is how often the status is read while waiting.
	Poll time.Duration
}

// Result is what `replication run` prints as JSON: the versions queued
// and, after --wait, how the replication stands.
type Result struct {
	Name   string                    `json:"name"`
	Queued int                       `json:"queued"`
	Status *client.ReplicationStatus `json:"status,omitempty"`
}

// NewCmdRun returns the `replication run` command; runF replaces the run
// function in tests.
func NewCmdRun(f *cmdutil.Factory, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{IO: f.IOStreams, Client: f.Client, Poll: 500 * time.Millisecond}
	cmd := &cobra.Command{
		Use:   "run NAME [--wait]",
		Short: "Copy every version the source holds now",
		Long: `Queue a copy of every version the replication's source holds (that its
filter lets through) to its target: what a new replication, or a target
that lost data, needs. Versions already at the target are kept.

On a terminal the command waits and shows the copy's progress; elsewhere
it returns once the copies are queued, unless --wait is given. Copies
that fail are retried in the background: see chartctl replication status.`,
		Example: `  chartctl replication run acme-dr
  chartctl replication run acme-dr --wait --timeout 30m -o json`,
		Args:              cmdutil.ExactArgs(1, "a replication name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteReplications(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if !cmd.Flags().Changed("wait") {
				opts.Wait = opts.IO.IsStdoutTTY()
			}
			if opts.Timeout <= 0 {
				return cmdutil.FlagErrorf("--timeout must be positive, such as 10m")
			}
			if runF != nil {
				return runF(opts)
			}
			return runRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Wait, "wait", "w", false, "wait until the queued copies are done (default: on a terminal)")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "longest --wait waits")
	return cmd
}

func runRun(ctx context.Context, opts *RunOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	rep, _, err := c.Replications.Get(ctx, opts.Name)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("replication %s: %w", opts.Name, err), status.HintList)
	}
	before, _, err := c.Replications.Status(ctx, opts.Name)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("status of replication %s: %w", opts.Name, err), status.HintList)
	}
	queued, _, err := c.Replications.Run(ctx, opts.Name)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("run replication %s: %w", opts.Name, err), status.HintList)
	}
	cs := opts.IO.ColorScheme()
	res := Result{Name: opts.Name, Queued: queued.Queued}
	if !opts.Wait || queued.Queued == 0 {
		if opts.JSON {
			return cmdutil.PrintJSON(opts.IO.Out, res)
		}
		if queued.Queued == 0 {
			_, err = fmt.Fprintf(opts.IO.Out, "Nothing to copy: %s holds no version the replication lets through\n", termtext.Line(rep.Source))
			return err
		}
		_, err = fmt.Fprintf(opts.IO.Out, "%s Queued %d versions of %s for %s; see: chartctl replication status %s\n", cs.SuccessIcon(),
			queued.Queued, termtext.Line(rep.Source), termtext.Line(rep.Target), termtext.Line(rep.Name))
		return err
	}
	st, waitErr := wait(ctx, c, opts, rep, before, before.Pending+queued.Queued)
	res.Status = st
	if opts.JSON {
		if err := cmdutil.PrintJSON(opts.IO.Out, res); err != nil {
			return err
		}
		if waitErr != nil {
			fmt.Fprintln(opts.IO.ErrOut, waitErr)
			return cmdutil.ErrSilent
		}
		return nil
	}
	if waitErr != nil {
		return waitErr
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Copied %d versions of %s to %s\n", cs.SuccessIcon(), queued.Queued,
		termtext.Line(rep.Source), termtext.Line(rep.Target))
	return err
}

// wait polls the status until nothing is pending, an attempt fails (it is
// retried in the background, maybe for hours: the command says so rather
// than hang), or the timeout passes. On a terminal it shows the progress
// on standard error, redrawn in place.
func wait(ctx context.Context, c *client.Client, opts *RunOptions, rep *client.Replication, before *client.ReplicationStatus, total int) (*client.ReplicationStatus, error) {
	wctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	tty := opts.IO.IsStderrTTY()
	cs := opts.IO.ColorScheme()
	clear := func() {
		if tty {
			fmt.Fprint(opts.IO.ErrOut, "\r\x1b[K")
		}
	}
	defer clear()
	lastErr := func(st *client.ReplicationStatus) string {
		if st.LastError == nil {
			return ""
		}
		return *st.LastError
	}
	prevErr := lastErr(before)
	for {
		st, _, err := c.Replications.Status(wctx, opts.Name)
		if err != nil {
			if ctx.Err() == nil && wctx.Err() != nil {
				return before, timeoutError(opts)
			}
			return before, fmt.Errorf("status of replication %s: %w", opts.Name, err)
		}
		if tty {
			done := max(total-st.Pending, 0)
			clear()
			fmt.Fprintf(opts.IO.ErrOut, "%s Copying %s to %s: %d of %d done", cs.Gray("…"), termtext.Line(rep.Source),
				termtext.Line(rep.Target), done, total)
		}
		// A new last error, or failures given up, mean an attempt failed
		// while we waited.
		if e := lastErr(st); (e != "" && e != prevErr) || st.Failed > before.Failed {
			clear()
			return st, fmt.Errorf("copying to %s failed: %s\nFailed copies are retried in the background; see: chartctl replication status %s",
				termtext.Line(rep.Target), termtext.Line(e), termtext.Line(rep.Name))
		} else if e == "" {
			prevErr = ""
		}
		if st.Pending == 0 {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-wctx.Done():
			return st, timeoutError(opts)
		case <-time.After(opts.Poll):
		}
	}
}

func timeoutError(opts *RunOptions) error {
	return errors.New("the copies of " + opts.Name + " did not end within " + opts.Timeout.String() +
		"; they go on on the server (see chartctl replication status " + opts.Name + ")")
}
