// Package create implements `chartctl team create`.
package create

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// CreateOptions are the inputs of `team create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name         string
	Organization string
	Description  string
	IDPGroups    []string
}

// NewCmdCreate returns the `team create` command.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "create NAME --org ORG",
		Short: "Create a team in an organization",
		Example: `  chartctl team create platform --org acme --description "Platform engineers"
  chartctl team create platform --org acme --idp-group platform-admins`,
		Args: cmdutil.ExactArgs(1, "a team name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if opts.Organization == "" {
				return cmdutil.FlagErrorf("--org is required")
			}
			if runF != nil {
				return runF(opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Organization, "org", "", "organization of the team (required)")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	cmd.Flags().StringVarP(&opts.Description, "description", "d", "", "description of the team")
	cmd.Flags().StringArrayVar(&opts.IDPGroups, "idp-group", nil, "bind the team to this identity provider group, by name or id (repeatable): the IdP then owns its members")
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	team, _, err := c.Teams.Create(ctx, &client.CreateTeamRequest{Name: opts.Name, Organization: opts.Organization, Description: opts.Description, IDPGroups: opts.IDPGroups})
	if err != nil {
		return fmt.Errorf("create team %s: %w", opts.Name, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, team)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Created team %s in %s\n", opts.IO.ColorScheme().SuccessIcon(),
		termtext.Line(team.Name), termtext.Line(team.Organization))
	return err
}
