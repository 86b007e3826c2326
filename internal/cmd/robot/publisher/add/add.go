// Package add implements `chartctl robot publisher add`.
package add

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// AddOptions are the inputs of `robot publisher add`.
type AddOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Robot    string
	Org      string
	Issuer   string
	Audience string
	// Claims are the --claim NAME=PATTERN conditions, parsed.
	Claims map[string]string
}

// NewCmdAdd returns the `robot publisher add` command.
func NewCmdAdd(f *cmdutil.Factory, runF func(*AddOptions) error) *cobra.Command {
	opts := &AddOptions{IO: f.IOStreams, Client: f.Client}
	var claims []string
	cmd := &cobra.Command{
		Use:   "add ROBOT --org ORG --issuer URL --audience AUD --claim NAME=PATTERN...",
		Short: "Trust a CI system's OIDC tokens for a robot",
		Long: `Add a trusted publisher to a robot: tokens of --issuer that carry
--audience and whose claims meet every --claim are exchanged (POST
/v1/oidc/token) for the robot's credential, living 15 minutes.

--claim NAME=PATTERN is repeatable; PATTERN is the exact value or a glob (*
matches within one /-separated part, so refs/heads/* matches refs/heads/main
but not refs/heads/a/b). Useful claims: GitHub Actions' repository,
repository_owner, ref, environment, job_workflow_ref, sub; GitLab's
project_path, namespace_path, ref, ref_type, environment, sub. A GitHub
Actions publisher must name repository, repository_owner or sub.`,
		Example: `  chartctl robot publisher add ci-push --org acme \
    --issuer https://token.actions.githubusercontent.com \
    --audience https://charts.example.com \
    --claim repository=acme/charts --claim ref=refs/heads/main --claim environment=release
  chartctl robot publisher add ci-push --org acme --issuer https://gitlab.com \
    --audience https://charts.example.com --claim project_path=acme/charts --claim ref_type=branch --claim ref=main`,
		Args: cmdutil.ExactArgs(1, "the robot's name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Robot = args[0]
			opts.JSON = f.WantsJSON()
			if opts.Org == "" {
				return cmdutil.FlagErrorf("--org is required")
			}
			if opts.Issuer == "" || opts.Audience == "" {
				return cmdutil.FlagErrorf("--issuer and --audience are required")
			}
			parsed, err := ParseClaims(claims)
			if err != nil {
				return err
			}
			opts.Claims = parsed
			if runF != nil {
				return runF(opts)
			}
			return addRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Org, "org", "", "organization of the robot (required)")
	cmd.Flags().StringVar(&opts.Issuer, "issuer", "", "the CI system's OIDC issuer URL, e.g. https://token.actions.githubusercontent.com (required)")
	cmd.Flags().StringVar(&opts.Audience, "audience", "", "the audience (aud) the tokens must carry, usually this server's URL (required)")
	cmd.Flags().StringArrayVar(&claims, "claim", nil, "claim condition NAME=PATTERN, exact or glob; repeatable (at least one)")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	_ = cmd.RegisterFlagCompletionFunc("issuer", cobra.FixedCompletions([]string{"https://token.actions.githubusercontent.com", "https://gitlab.com"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// ParseClaims parses --claim NAME=PATTERN values; at least one is needed
// and a name may appear once.
func ParseClaims(values []string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, cmdutil.FlagErrorf("give at least one --claim NAME=PATTERN, such as --claim repository=acme/charts")
	}
	out := map[string]string{}
	for _, v := range values {
		name, pat, ok := strings.Cut(v, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || pat == "" {
			return nil, cmdutil.FlagErrorf("invalid --claim %q: use NAME=PATTERN, such as repository=acme/charts", v)
		}
		if _, dup := out[name]; dup {
			return nil, cmdutil.FlagErrorf("--claim %s is given twice: a claim has one condition", name)
		}
		out[name] = pat
	}
	return out, nil
}

func addRun(ctx context.Context, opts *AddOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	p, _, err := c.Robots.AddPublisher(ctx, opts.Org, opts.Robot, &client.PublisherRequest{Issuer: opts.Issuer, Audience: opts.Audience, Claims: opts.Claims})
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("add a trusted publisher to robot %s/%s: %w", opts.Org, opts.Robot, err), "List the robots with: chartctl robot list --org "+opts.Org)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, p)
	}
	cs := opts.IO.ColorScheme()
	names := make([]string, 0, len(p.Claims))
	for k := range p.Claims {
		names = append(names, k)
	}
	sort.Strings(names)
	var conds []string
	for _, k := range names {
		conds = append(conds, k+"="+p.Claims[k])
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Added trusted publisher %s to robot %s/%s\n  issuer:   %s\n  audience: %s\n  claims:   %s\n",
		cs.SuccessIcon(), termtext.Line(p.ID), termtext.Line(opts.Org), termtext.Line(opts.Robot), termtext.Line(p.Issuer),
		termtext.Line(p.Audience), termtext.Line(strings.Join(conds, ", ")))
	return err
}
