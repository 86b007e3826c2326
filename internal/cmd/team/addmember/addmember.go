// Package addmember implements `chartctl team add-member`.
package addmember

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// Roles are the roles a team member can have.
var Roles = []string{"member", "maintainer", "owner"}

// AddMemberOptions are the inputs of `team add-member`.
type AddMemberOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Team  string
	Email string
	Role  string
}

// NewCmdAddMember returns the `team add-member` command.
func NewCmdAddMember(f *cmdutil.Factory, runF func(*AddMemberOptions) error) *cobra.Command {
	opts := &AddMemberOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "add-member TEAM --email EMAIL [--role ROLE]",
		Short: "Add a person to a team",
		Long: `Add a person to a team by email, as a member (default), maintainer or
owner. Someone without an account yet is recorded, and the membership takes
effect when their account exists.`,
		Example:           `  chartctl team add-member platform --email ada@example.com --role maintainer`,
		Args:              cmdutil.ExactArgs(1, "a team name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteTeams(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Team = args[0]
			opts.JSON = f.WantsJSON()
			if opts.Email == "" {
				return cmdutil.FlagErrorf("--email is required")
			}
			if !slices.Contains(Roles, opts.Role) {
				return cmdutil.FlagErrorf("invalid --role %q: want member, maintainer or owner", opts.Role)
			}
			if runF != nil {
				return runF(opts)
			}
			return addMemberRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Email, "email", "", "email of the person to add (required)")
	cmd.Flags().StringVar(&opts.Role, "role", "member", "role: member, maintainer or owner")
	_ = cmd.RegisterFlagCompletionFunc("role", cobra.FixedCompletions(Roles, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func addMemberRun(ctx context.Context, opts *AddMemberOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	m, _, err := c.Teams.AddMember(ctx, opts.Team, &client.AddMemberRequest{Email: opts.Email, Role: opts.Role})
	if err != nil {
		return fmt.Errorf("add %s to team %s: %w", opts.Email, opts.Team, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, m)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Added %s to team %s as %s\n", opts.IO.ColorScheme().SuccessIcon(),
		termtext.Line(m.Email), termtext.Line(opts.Team), termtext.Line(m.Role))
	return err
}
