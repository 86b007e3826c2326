// Package create implements `chartctl admin scim-token create`.
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

// CreateOptions are the inputs of `admin scim-token create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name string
}

// NewCmdCreate returns the `admin scim-token create` command.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:     "create [--name NAME]",
		Short:   "Create a SCIM bearer token; its value is shown once",
		Example: `  chartctl admin scim-token create --name okta`,
		Args:    cmdutil.ExactArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "a name to recognize the token by (default \"scim\")")
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	t, _, err := c.Admin.CreateSCIMToken(ctx, &client.CreateSCIMTokenRequest{Name: opts.Name})
	if err != nil {
		return fmt.Errorf("create SCIM token: %w", err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, t)
	}
	if opts.IO.IsStdoutTTY() {
		fmt.Fprintf(opts.IO.ErrOut, "%s Created SCIM token %s (%s). Copy it now: it is not shown again.\n",
			opts.IO.ColorScheme().SuccessIcon(), termtext.Line(t.Name), t.ID)
	}
	_, err = fmt.Fprintln(opts.IO.Out, t.Token)
	return err
}
