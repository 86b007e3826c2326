// Package create implements `chartctl repo create`.
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

// CreateOptions are the inputs of `repo create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name         string
	Description  string
	Organization string
	Public       bool
}

// NewCmdCreate returns the `repo create` command; runF replaces the run
// function in tests.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a chart repository",
		Long: `Create a chart repository. Without --org it belongs to you; with --org it
belongs to that organization (you need the maintainer role there).
Repositories are private unless --public is given; a public repository is
readable by every signed-in user and by anonymous Helm clients.`,
		Example: `  chartctl repo create stable --description "Stable charts"
  chartctl repo create platform --org acme --public`,
		Args: cmdutil.ExactArgs(1, "a repository name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Description, "description", "d", "", "description of the repository")
	cmd.Flags().StringVar(&opts.Organization, "org", "", "organization that owns the repository")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	cmd.Flags().BoolVar(&opts.Public, "public", false, "make the repository readable by everyone")
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	req := &client.CreateRepositoryRequest{
		Name:         opts.Name,
		Description:  opts.Description,
		Organization: opts.Organization,
	}
	if opts.Public {
		req.Visibility = "public"
	}
	repo, _, err := c.Repositories.Create(ctx, req)
	if err != nil {
		return fmt.Errorf("create repository %s: %w", opts.Name, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, repo)
	}
	cs := opts.IO.ColorScheme()
	owner := "you"
	if repo.Organization != nil {
		owner = *repo.Organization
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Created %s repository %s (owner: %s)\n",
		cs.SuccessIcon(), termtext.Line(repo.Visibility), cs.Bold(termtext.Line(repo.Name)), termtext.Line(owner))
	return err
}
