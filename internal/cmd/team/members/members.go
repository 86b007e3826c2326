// Package members implements `chartctl team members`.
package members

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

// MembersOptions are the inputs of `team members`.
type MembersOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Now    func() time.Time

	Team string
}

// NewCmdMembers returns the `team members` command.
func NewCmdMembers(f *cmdutil.Factory, runF func(*MembersOptions) error) *cobra.Command {
	opts := &MembersOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "members TEAM",
		Short: "List the members of a team",
		Example: `  chartctl team members platform
  chartctl team members platform -o json`,
		Args:              cmdutil.ExactArgs(1, "a team name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteTeams(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Team = args[0]
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return membersRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func membersRun(ctx context.Context, opts *MembersOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	members, err := client.Collect(c.Teams.AllMembers(ctx, opts.Team))
	if err != nil {
		return fmt.Errorf("list members of team %s: %w", opts.Team, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, members)
	}
	if len(members) == 0 && opts.IO.IsStdoutTTY() {
		fmt.Fprintf(opts.IO.ErrOut, "No members in team %s. Add one with: chartctl team add-member %s --email EMAIL\n",
			termtext.Line(opts.Team), termtext.Line(opts.Team))
		return nil
	}
	cs := opts.IO.ColorScheme()
	now := opts.Now()
	t := opts.Table()
	t.Header("email", "role", "added")
	t.KeepWhole(0)
	// On a narrow terminal the date added goes first.
	t.Optional(2)
	for _, m := range members {
		t.AddField(m.Email, cs.Bold)
		t.AddField(m.Role)
		t.AddField(cmdutil.FormatTime(opts.IO, now, m.AddedAt), cs.Gray)
		t.EndRow()
	}
	return t.Render()
}
