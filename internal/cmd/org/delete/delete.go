// Package delete implements `chartctl org delete`.
package delete

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// DeleteOptions are the inputs of `org delete`.
type DeleteOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name string
	Yes  bool
}

// NewCmdDelete returns the `org delete` command; runF replaces the run
// function in tests.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "delete ORG [--yes]",
		Short: "Delete an organization with its teams and robots",
		Long: `Delete an organization you own, with its teams, robot accounts and
everything bound to it. An organization that still owns repositories is not
deleted: delete them first. On a terminal you are asked to type the
organization's name; elsewhere --yes is required.`,
		Example: `  chartctl org delete acme
  chartctl org delete acme --yes`,
		Args:              cmdutil.ExactArgs(1, "an organization name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteOrganizations(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if err := cmdutil.RequireYes(opts.IO, opts.Yes); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return deleteRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "delete without asking")
	return cmd
}

func deleteRun(ctx context.Context, opts *DeleteOptions) error {
	if !opts.Yes {
		what := "organization " + opts.Name + " with its teams and robots"
		if err := cmdutil.ConfirmByName(ctx, opts.IO, what, opts.Name); err != nil {
			return err
		}
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	if _, err := c.Organizations.Delete(ctx, opts.Name); err != nil {
		err = fmt.Errorf("delete organization %s: %w", opts.Name, err)
		var ce *client.Error
		if errors.As(err, &ce) && ce.StatusCode == http.StatusConflict {
			// The server refuses while repositories remain; say how to
			// find them.
			return &cmdutil.HintError{Err: err, Hint: "Delete its repositories first (chartctl repo delete NAME); to see them, run: chartctl repo list"}
		}
		return cmdutil.HintNotFound(err, cmdutil.HintOrgList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, map[string]any{"name": opts.Name, "deleted": true})
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Deleted organization %s\n", opts.IO.ColorScheme().SuccessIcon(), termtext.Line(opts.Name))
	return err
}
