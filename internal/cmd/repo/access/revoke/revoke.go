// Package revoke implements `chartctl repo access revoke`.
package revoke

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmd/repo/access/grant"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// RevokeOptions are the inputs of `repo access revoke`.
type RevokeOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Repository string
	Team       string
	User       string
}

// NewCmdRevoke returns the `repo access revoke` command; runF replaces the
// run function in tests.
func NewCmdRevoke(f *cmdutil.Factory, runF func(*RevokeOptions) error) *cobra.Command {
	opts := &RevokeOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "revoke REPOSITORY (--team TEAM | --user EMAIL)",
		Short: "Remove a team's or a user's role on a repository",
		Long: `Remove the role granted to a team or a user on one repository. What they
may do there afterwards comes from their organization role alone (see
` + "`chartctl repo access explain`" + `). Nothing is deleted, so there is no
confirmation: grant the role again to undo it.`,
		Example: `  chartctl repo access revoke web-charts --team web
  chartctl repo access revoke web-charts --user ada@example.com`,
		Args:              cmdutil.ExactArgs(1, "a repository name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteRepositories(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repository = args[0]
			opts.JSON = f.WantsJSON()
			if err := grant.TeamOrUser(opts.Team, opts.User); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return revokeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Team, "team", "", "team whose role to remove")
	cmd.Flags().StringVar(&opts.User, "user", "", "email of the user whose role to remove")
	_ = cmd.RegisterFlagCompletionFunc("team", cmdutil.CompleteTeams(f))
	return cmd
}

func revokeRun(ctx context.Context, opts *RevokeOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	kind, name := client.GrantKindTeam, opts.Team
	if opts.User != "" {
		kind, name = client.GrantKindUser, opts.User
	}
	if _, err := c.Repositories.Revoke(ctx, opts.Repository, kind, name); err != nil {
		hint := "To see the grants on " + opts.Repository + ", run: chartctl repo access list " + opts.Repository
		return cmdutil.HintNotFound(fmt.Errorf("revoke the role of %s %s on repository %s: %w", kind, name, opts.Repository, err), hint)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, map[string]any{"repository": opts.Repository, "kind": kind, "name": name, "revoked": true})
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Revoked the role of %s %s on %s\n", opts.IO.ColorScheme().SuccessIcon(),
		kind, termtext.Line(name), termtext.Line(opts.Repository))
	return err
}
