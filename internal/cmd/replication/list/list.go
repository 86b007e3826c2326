// Package list implements `chartctl replication list`.
package list

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmd/replication/create"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// ListOptions are the inputs of `replication list`.
type ListOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Now    func() time.Time
}

// NewCmdList returns the `replication list` command; runF replaces the
// run function in tests.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Now: time.Now}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List replications",
		Long: `List the replications of the repositories you administer: a table on a
terminal, JSON in pipes or with -o json. Passwords are never shown.`,
		Example: `  chartctl replication list
  chartctl replication list -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	reps, _, err := c.Replications.List(ctx)
	if err != nil {
		return fmt.Errorf("list replications: %w", err)
	}
	if reps == nil {
		reps = []*client.Replication{}
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, reps)
	}
	if len(reps) == 0 {
		if opts.IO.IsStdoutTTY() {
			fmt.Fprintln(opts.IO.ErrOut, "No replications. Create one with: chartctl replication create NAME --from REPO --to oci://HOST/PATH")
		}
		return nil
	}
	cs := opts.IO.ColorScheme()
	t := opts.Table()
	t.Header("name", "source", "target", "copies", "created")
	t.KeepWhole(0)
	t.Optional(4)
	now := opts.Now()
	for _, r := range reps {
		t.AddField(r.Name, cs.Bold)
		t.AddField(r.Source)
		t.AddField(r.Target)
		t.AddField(create.Describe(r))
		t.AddField(cmdutil.FormatTime(opts.IO, now, r.CreatedAt))
		t.EndRow()
	}
	return t.Render()
}
