// Package grant implements `chartctl repo access grant`.
package grant

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// GrantOptions are the inputs of `repo access grant`.
type GrantOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Repository string
	// Team or User (an email) receives Role.
	Team string
	User string
	Role string
}

// NewCmdGrant returns the `repo access grant` command; runF replaces the
// run function in tests.
func NewCmdGrant(f *cmdutil.Factory, runF func(*GrantOptions) error) *cobra.Command {
	opts := &GrantOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "grant REPOSITORY (--team TEAM | --user EMAIL) [--role ROLE]",
		Short: "Give a team or a user a role on a repository",
		Long: `Give a team (of the repository's organization) or a user (by email) a
role on one repository: read, write (push and delete versions), maintain
(also the repository's settings) or admin (also its grants and deleting
it). The role replaces any role granted to them there before; read is the
default. You need the admin role on the repository.`,
		Example: `  chartctl repo access grant web-charts --team web --role write
  chartctl repo access grant web-charts --user ada@example.com --role admin`,
		Args:              cmdutil.ExactArgs(1, "a repository name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteRepositories(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repository = args[0]
			opts.JSON = f.WantsJSON()
			if err := TeamOrUser(opts.Team, opts.User); err != nil {
				return err
			}
			if !slices.Contains(client.RepoRoles, opts.Role) {
				return cmdutil.FlagErrorf("invalid --role %q: want %s", opts.Role, strings.Join(client.RepoRoles, ", "))
			}
			if runF != nil {
				return runF(opts)
			}
			return grantRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Team, "team", "", "team to grant the role to")
	cmd.Flags().StringVar(&opts.User, "user", "", "email of the user to grant the role to")
	cmd.Flags().StringVar(&opts.Role, "role", client.RepoRoleRead, "role: "+strings.Join(client.RepoRoles, ", "))
	_ = cmd.RegisterFlagCompletionFunc("team", cmdutil.CompleteTeams(f))
	_ = cmd.RegisterFlagCompletionFunc("role", cobra.FixedCompletions(client.RepoRoles, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// TeamOrUser checks that exactly one of --team and --user is given: the
// grant commands act on one team or one user.
func TeamOrUser(team, user string) error {
	switch {
	case team != "" && user != "":
		return cmdutil.FlagErrorf("--team and --user go one at a time: give one of them")
	case team == "" && user == "":
		return cmdutil.FlagErrorf("--team TEAM or --user EMAIL is required")
	}
	return nil
}

func grantRun(ctx context.Context, opts *GrantOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	who := "team " + opts.Team
	if opts.User != "" {
		who = opts.User
	}
	g, _, err := c.Repositories.Grant(ctx, opts.Repository, &client.GrantRequest{Team: opts.Team, User: opts.User, Role: opts.Role})
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("grant %s %s on repository %s: %w", who, opts.Role, opts.Repository, err), cmdutil.HintRepoList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, g)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Granted %s %s %s on %s\n", opts.IO.ColorScheme().SuccessIcon(),
		termtext.Line(g.Kind), termtext.Line(g.Name), termtext.Line(g.Role), termtext.Line(opts.Repository))
	return err
}
