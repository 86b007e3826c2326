// Package list implements `chartctl repo access list`.
package list

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// ListOptions are the inputs of `repo access list`.
type ListOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Now    func() time.Time

	Repository string
}

// NewCmdList returns the `repo access list` command; runF replaces the run
// function in tests.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Now: time.Now}
	return &cobra.Command{
		Use:     "list REPOSITORY",
		Aliases: []string{"ls"},
		Short:   "List the teams and users granted a role on a repository",
		Long: `List the grants on a repository: a table on a terminal, JSON in pipes or
with -o json. Roles that come from the organization are not grants: see
them per user with ` + "`chartctl repo access explain`" + `.`,
		Example: `  chartctl repo access list web-charts
  chartctl repo access list web-charts -o json`,
		Args:              cmdutil.ExactArgs(1, "a repository name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteRepositories(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repository = args[0]
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
	grants, err := client.Collect(c.Repositories.AllAccess(ctx, opts.Repository))
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("list access to repository %s: %w", opts.Repository, err), cmdutil.HintRepoList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, grants)
	}
	if len(grants) == 0 {
		if opts.IO.IsStdoutTTY() {
			fmt.Fprintf(opts.IO.ErrOut, "No grants on %s: only its organization's roles apply. Grant one with: chartctl repo access grant %s --team TEAM --role write\n",
				termtext.Line(opts.Repository), termtext.Line(opts.Repository))
		}
		return nil
	}
	cs := opts.IO.ColorScheme()
	now := opts.Now()
	t := opts.Table()
	t.Header("kind", "name", "role", "granted")
	t.KeepWhole(1)
	t.Optional(3)
	for _, g := range grants {
		t.AddField(g.Kind, cs.Gray)
		t.AddField(g.Name, cs.Bold)
		t.AddField(g.Role)
		t.AddField(cmdutil.FormatTime(opts.IO, now, g.CreatedAt))
		t.EndRow()
	}
	return t.Render()
}
