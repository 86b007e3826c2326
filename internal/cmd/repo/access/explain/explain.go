// Package explain implements `chartctl repo access explain`.
package explain

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// ExplainOptions are the inputs of `repo access explain`.
type ExplainOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Repository string
	// User is the email of the user to explain; "" explains the caller.
	User string
}

// NewCmdExplain returns the `repo access explain` command; runF replaces
// the run function in tests.
func NewCmdExplain(f *cmdutil.Factory, runF func(*ExplainOptions) error) *cobra.Command {
	opts := &ExplainOptions{IO: f.IOStreams, Client: f.Client}
	var team string
	cmd := &cobra.Command{
		Use:   "explain REPOSITORY [--user EMAIL]",
		Short: "Show a user's role on a repository and where it comes from",
		Long: `Show the effective role of a user (by default, you) on a repository and
each source that gives it: being a server admin or the owner, their
organization role, a grant to one of their teams or to them, or the
repository's public or internal visibility. The strongest one counts. You
need the admin role on the repository.`,
		Example: `  chartctl repo access explain web-charts --user bob@example.com
  chartctl repo access explain web-charts -o json`,
		Args:              cmdutil.ExactArgs(1, "a repository name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteRepositories(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repository = args[0]
			opts.JSON = f.WantsJSON()
			if team != "" {
				// A team has no single effective role: its grant is in
				// `repo access list`.
				return cmdutil.FlagErrorf("explain takes --user EMAIL, not --team: a team's grant is shown by `chartctl repo access list %s`", opts.Repository)
			}
			if runF != nil {
				return runF(opts)
			}
			return explainRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.User, "user", "", "email of the user to explain (default: you)")
	cmd.Flags().StringVar(&team, "team", "", "not taken: explain is per user")
	_ = cmd.Flags().MarkHidden("team")
	return cmd
}

func explainRun(ctx context.Context, opts *ExplainOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	email := opts.User
	if email == "" {
		me, _, err := c.Users.Me(ctx)
		if err != nil {
			return fmt.Errorf("find who you are signed in as: %w", err)
		}
		if me.Robot != "" {
			return cmdutil.FlagErrorf("signed in as robot %s, which has no repository roles: give --user EMAIL", me.Robot)
		}
		email = me.Email
	}
	p, _, err := c.Repositories.Permissions(ctx, opts.Repository, email)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("explain the role of %s on repository %s: %w", email, opts.Repository, err), cmdutil.HintRepoList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, p)
	}
	cs := opts.IO.ColorScheme()
	w := opts.IO.Out
	if p.Role == "" {
		fmt.Fprintf(w, "%s has no role on %s\n", termtext.Line(email), termtext.Line(opts.Repository))
	} else {
		fmt.Fprintf(w, "%s has role %s on %s\n", termtext.Line(email), cs.Bold(termtext.Line(p.Role)), termtext.Line(opts.Repository))
	}
	if len(p.Via) == 0 {
		_, err = fmt.Fprintln(w, "  through nothing: no organization role, grant or visibility gives access")
		return err
	}
	for _, v := range p.Via {
		fmt.Fprintf(w, "  %-8s %s\n", termtext.Line(v.Role), Source(v))
	}
	return nil
}

// Source describes where a role comes from, in words.
func Source(v client.PermissionVia) string {
	name := termtext.Line(v.Name)
	switch v.Kind {
	case client.ViaAdmin:
		return "as a server admin"
	case client.ViaOwner:
		return "as the owner of the repository"
	case client.ViaOrganization:
		return "through their role in organization " + name
	case client.ViaTeam:
		return "through a grant to team " + name
	case client.ViaUser:
		return "through a grant to them"
	case client.ViaVisibility:
		return "because the repository is " + name
	}
	return termtext.Line(v.Kind) + " " + name
}
