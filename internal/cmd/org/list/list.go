// Package list implements `chartctl org list`.
package list

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// ListOptions are the inputs of `org list`.
type ListOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Now    func() time.Time
}

// NewCmdList returns the `org list` command.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Now: time.Now}
	return &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the organizations you can see",
		Example: `  chartctl org list`,
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
}

func listRun(ctx context.Context, opts *ListOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	orgs, err := client.Collect(c.Organizations.All(ctx))
	if err != nil {
		return fmt.Errorf("list organizations: %w", err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, orgs)
	}
	if len(orgs) == 0 && opts.IO.IsStdoutTTY() {
		fmt.Fprintln(opts.IO.ErrOut, "No organizations yet. Create one with: chartctl org create NAME")
		return nil
	}
	cs := opts.IO.ColorScheme()
	now := opts.Now()
	t := opts.Table()
	t.Header("name", "description", "created")
	t.KeepWhole(0)
	// On a narrow terminal the creation time goes first.
	t.Optional(2)
	for _, o := range orgs {
		t.AddField(o.Name, cs.Bold)
		t.AddField(o.Description)
		t.AddField(cmdutil.FormatTime(opts.IO, now, o.CreatedAt), cs.Gray)
		t.EndRow()
	}
	return t.Render()
}
