// Package setidpgroups implements `chartctl team set-idp-groups`.
package setidpgroups

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// Options are the inputs of `team set-idp-groups`.
type Options struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Team   string
	Groups []string
}

// NewCmdSetIDPGroups returns the `team set-idp-groups` command.
func NewCmdSetIDPGroups(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "set-idp-groups TEAM [GROUP...]",
		Short: "Bind a team to identity provider groups, or unbind it",
		Long: `Bind a team to identity provider groups (names or ids). The identity
provider then owns the team's members: at every sign-in (and through SCIM)
people in one of the groups become members and people who left them stop
being members. Binding a team removes the members added by hand. With no
group, the team is unbound and keeps its members.`,
		Example: `  chartctl team set-idp-groups platform platform-admins 00g1a2b3c4
  chartctl team set-idp-groups platform`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.FlagErrorf("a team name is required")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Team, opts.Groups = args[0], args[1:]
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return run(cmd.Context(), opts)
		},
	}
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	groups := opts.Groups
	if groups == nil {
		groups = []string{}
	}
	team, _, err := c.Teams.Update(ctx, opts.Team, &client.UpdateTeamRequest{IDPGroups: &groups})
	if err != nil {
		return fmt.Errorf("set the groups of team %s: %w", opts.Team, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, team)
	}
	cs := opts.IO.ColorScheme()
	if len(team.IDPGroups) == 0 {
		_, err = fmt.Fprintf(opts.IO.Out, "%s Team %s is no longer bound to identity provider groups; its %d members stay\n",
			cs.SuccessIcon(), termtext.Line(team.Name), team.MemberCount)
		return err
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Team %s is bound to %s (%d members now)\n", cs.SuccessIcon(),
		termtext.Line(team.Name), termtext.Line(strings.Join(team.IDPGroups, ", ")), team.MemberCount)
	return err
}
