// Package create implements `chartctl robot create`.
package create

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	apikeycreate "github.com/chartctl/chartctl/internal/cmd/apikey/create"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// Permissions are the permissions a robot can have.
var Permissions = []string{client.RobotPull, client.RobotPush, client.RobotDelete}

// CreateOptions are the inputs of `robot create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool
	Now    func() time.Time

	Name         string
	Organization string
	Description  string
	Repositories []string
	Permissions  []string
	// Expires is the --expires value, resolved against Now when the robot
	// is created ("": never expires).
	Expires string
}

// NewCmdCreate returns the `robot create` command; runF replaces the run
// function in tests.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IOStreams, Client: f.Client, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "create NAME --org ORG --repo GLOB... [--permission pull,push,delete] [--expires 90d]",
		Short: "Create a robot account and print its secret once",
		Long: `Create a robot account of an organization you own. --repo names the
repositories it reaches, as names or patterns ('acme-*'; repeat the flag
for more); --permission what it may do there: pull (the default), push,
delete. --expires takes a duration (90d, 2w, 12h) or a date (2027-01-31).

Its secret is printed this once: store it now, e.g. as a CI secret. Use it
as CHARTCTL_TOKEN, or with Helm under the user name robot$ORG+NAME.`,
		Example: `  chartctl robot create ci-push --org acme --repo 'acme-*' --permission pull,push --expires 90d
  chartctl robot create reader --org acme --repo acme-charts --repo web-charts`,
		Args: cmdutil.ExactArgs(1, "a robot name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if opts.Organization == "" {
				return cmdutil.FlagErrorf("--org is required: robots belong to an organization")
			}
			if len(opts.Repositories) == 0 {
				return cmdutil.FlagErrorf("--repo is required: name the repositories the robot reaches (e.g. --repo '%s-*')", opts.Organization)
			}
			if err := CheckPermissions(opts.Permissions); err != nil {
				return err
			}
			if opts.Expires != "" {
				if _, err := apikeycreate.ParseExpiry(time.Now(), opts.Expires); err != nil {
					return cmdutil.FlagErrorf("invalid --expires: %s", err)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Organization, "org", "", "organization that owns the robot (required)")
	cmd.Flags().StringArrayVar(&opts.Repositories, "repo", nil, "repository name or pattern the robot reaches, such as 'acme-*' (repeatable; at least one)")
	cmd.Flags().StringSliceVar(&opts.Permissions, "permission", []string{client.RobotPull}, "comma-separated permissions: "+strings.Join(Permissions, ", "))
	cmd.Flags().StringVar(&opts.Description, "description", "", "what the robot is for")
	cmd.Flags().StringVar(&opts.Expires, "expires", "", "expiry: a duration such as 90d or a date such as 2027-01-31 (default: never)")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	_ = cmd.RegisterFlagCompletionFunc("repo", cmdutil.CompleteRepositories(f))
	_ = cmd.RegisterFlagCompletionFunc("permission", cobra.FixedCompletions(Permissions, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
	return cmd
}

// CheckPermissions refuses an empty or unknown --permission value.
func CheckPermissions(perms []string) error {
	if len(perms) == 0 {
		return cmdutil.FlagErrorf("--permission needs at least one of %s", strings.Join(Permissions, ", "))
	}
	for _, p := range perms {
		if !slices.Contains(Permissions, p) {
			return cmdutil.FlagErrorf("invalid --permission %q: want %s", p, strings.Join(Permissions, ", "))
		}
	}
	return nil
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	req := &client.CreateRobotRequest{
		Name:         opts.Name,
		Description:  opts.Description,
		Repositories: opts.Repositories,
		Permissions:  opts.Permissions,
	}
	if opts.Expires != "" {
		at, err := apikeycreate.ParseExpiry(opts.Now(), opts.Expires)
		if err != nil {
			return cmdutil.FlagErrorf("invalid --expires: %s", err)
		}
		req.ExpiresAt = &at
	}
	robot, _, err := c.Robots.Create(ctx, opts.Organization, req)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("create robot %s in %s: %w", opts.Name, opts.Organization, err), cmdutil.HintOrgList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, robot)
	}
	cs := opts.IO.ColorScheme()
	if opts.IO.IsStdoutTTY() {
		expires := "never"
		if robot.ExpiresAt != nil {
			expires = robot.ExpiresAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(opts.IO.Out, "%s Created robot %s in %s (repositories %s, permissions %s, expires %s)\n",
			cs.SuccessIcon(), cs.Bold(termtext.Line(robot.Name)), termtext.Line(robot.Organization),
			termtext.Line(strings.Join(robot.Repositories, " ")), termtext.Line(strings.Join(robot.Permissions, ",")), expires)
	}
	return PrintSecret(opts.IO, c, robot)
}

// PrintSecret prints a robot's new secret. On a terminal it comes with the
// warning that it will not be shown again and the ways to use it, its
// user name quoted for shells; piped (-o table), it is the secret alone,
// for `SECRET=$(chartctl robot create …)`.
func PrintSecret(ios *iostreams.IOStreams, c *client.Client, robot *client.Robot) error {
	if !ios.IsStdoutTTY() {
		_, err := fmt.Fprintln(ios.Out, termtext.Line(robot.Secret))
		return err
	}
	cs := ios.ColorScheme()
	w := ios.Out
	fmt.Fprintf(w, "\n    %s\n\n", termtext.Line(robot.Secret))
	fmt.Fprintf(w, "%s Copy the secret now: it will not be shown again.\n\n", cs.WarningIcon())
	return printUsage(w, cs, c, robot)
}

// printUsage shows where the secret goes: CHARTCTL_TOKEN, and Helm's basic
// auth with the robot's user name.
func printUsage(w io.Writer, cs *iostreams.ColorScheme, c *client.Client, robot *client.Robot) error {
	user := cmdutil.ShellQuote(termtext.Line(robot.UserName))
	base := strings.TrimSuffix(c.BaseURL.String(), "/")
	host := c.BaseURL.Host
	fmt.Fprintf(w, "%s\n", cs.Gray("Use it as CHARTCTL_TOKEN, or with Helm (user name "+user+"):"))
	fmt.Fprintf(w, "  helm repo add REPO %s/helm/REPO --username %s --password \"$SECRET\"\n", termtext.Line(base), user)
	_, err := fmt.Fprintf(w, "  echo \"$SECRET\" | helm registry login %s --username %s --password-stdin\n", termtext.Line(host), user)
	return err
}
