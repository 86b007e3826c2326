// Package list implements `chartctl team list`.
package list

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// ListOptions are the inputs of `team list`.
type ListOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool

	Organization string
}

// NewCmdList returns the `team list` command.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the teams you can see",
		Example: `  chartctl team list
  chartctl team list --org acme`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Organization, "org", "", "only the teams of this organization")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	teams, err := client.Collect(c.Teams.All(ctx, client.TeamListOptions{Organization: opts.Organization}))
	if err != nil {
		return fmt.Errorf("list teams: %w", err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, teams)
	}
	if len(teams) == 0 && opts.IO.IsStdoutTTY() {
		fmt.Fprintln(opts.IO.ErrOut, "No teams.")
		return nil
	}
	cs := opts.IO.ColorScheme()
	t := opts.Table()
	t.Header("name", "organization", "members", "idp groups", "description")
	t.KeepWhole(0, 1)
	// On a narrow terminal the member count, then the description, go
	// first.
	t.Optional(2, 3)
	for _, tm := range teams {
		t.AddField(tm.Name, cs.Bold)
		t.AddField(tm.Organization)
		t.AddField(strconv.Itoa(tm.MemberCount))
		t.AddField(strings.Join(tm.IDPGroups, ","))
		t.AddField(tm.Description)
		t.EndRow()
	}
	return t.Render()
}
