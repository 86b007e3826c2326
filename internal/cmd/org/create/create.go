// Package create implements `chartctl org create`.
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

// CreateOptions are the inputs of `org create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name        string
	Description string
}

// NewCmdCreate returns the `org create` command.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:     "create NAME",
		Short:   "Create an organization; you become its owner",
		Example: `  chartctl org create acme --description "Acme Inc"`,
		Args:    cmdutil.ExactArgs(1, "an organization name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Description, "description", "d", "", "description of the organization")
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	org, _, err := c.Organizations.Create(ctx, &client.CreateOrganizationRequest{Name: opts.Name, Description: opts.Description})
	if err != nil {
		return fmt.Errorf("create organization %s: %w", opts.Name, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, org)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Created organization %s\n", opts.IO.ColorScheme().SuccessIcon(), termtext.Line(org.Name))
	return err
}
