// Package list implements `chartctl repo list`.
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

// ListOptions are the inputs of `repo list`.
type ListOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Now    func() time.Time
}

// NewCmdList returns the `repo list` command.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Now: time.Now}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the repositories you can read",
		Example: `  chartctl repo list
  chartctl repo list -o json | jq -r '.[].name'`,
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
	repos, err := client.Collect(c.Repositories.All(ctx))
	if err != nil {
		return fmt.Errorf("list repositories: %w", err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, repos)
	}
	if len(repos) == 0 && opts.IO.IsStdoutTTY() {
		fmt.Fprintln(opts.IO.ErrOut, "No repositories yet. Create one with: chartctl repo create NAME")
		return nil
	}
	cs := opts.IO.ColorScheme()
	now := opts.Now()
	t := opts.Table()
	t.Header("name", "visibility", "organization", "description", "created")
	t.KeepWhole(0)
	// On a narrow terminal the creation time, then the organization, go
	// first.
	t.Optional(4, 2)
	for _, r := range repos {
		org := ""
		if r.Organization != nil {
			org = *r.Organization
		}
		t.AddField(r.Name, cs.Bold)
		t.AddField(r.Visibility)
		t.AddField(org)
		t.AddField(r.Description)
		t.AddField(cmdutil.FormatTime(opts.IO, now, r.CreatedAt), cs.Gray)
		t.EndRow()
	}
	return t.Render()
}
