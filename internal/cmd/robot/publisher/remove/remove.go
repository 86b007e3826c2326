// Package remove implements `chartctl robot publisher remove`.
package remove

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// RemoveOptions are the inputs of `robot publisher remove`.
type RemoveOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Robot, ID, Org string
	Yes            bool
}

// NewCmdRemove returns the `robot publisher remove` command.
func NewCmdRemove(f *cmdutil.Factory, runF func(*RemoveOptions) error) *cobra.Command {
	opts := &RemoveOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "remove ROBOT ID --org ORG",
		Short: "Stop trusting a publisher's tokens for a robot",
		Long: `Remove a trusted publisher: its tokens are no longer exchanged. Credentials
already exchanged through it run out on their own, within 15 minutes.`,
		Example: `  chartctl robot publisher remove ci-push pub_01JD8X2Q3R4S5T6V7W8X9Y0Z1A --org acme --yes`,
		Args:    cmdutil.ExactArgs(2, "the robot's name and the publisher's id are required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Robot, opts.ID = args[0], args[1]
			opts.JSON = f.WantsJSON()
			if opts.Org == "" {
				return cmdutil.FlagErrorf("--org is required")
			}
			if err := cmdutil.RequireYes(opts.IO, opts.Yes); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return removeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Org, "org", "", "organization of the robot (required)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "remove without asking")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	return cmd
}

func removeRun(ctx context.Context, opts *RemoveOptions) error {
	if !opts.Yes {
		if err := cmdutil.Confirm(ctx, opts.IO, fmt.Sprintf("Remove trusted publisher %s of robot %s/%s?", termtext.Line(opts.ID), termtext.Line(opts.Org), termtext.Line(opts.Robot)), "Not removed"); err != nil {
			return err
		}
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	if _, err := c.Robots.RemovePublisher(ctx, opts.Org, opts.Robot, opts.ID); err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("remove trusted publisher %s of robot %s/%s: %w", opts.ID, opts.Org, opts.Robot, err),
			"List them with: chartctl robot publisher list "+opts.Robot+" --org "+opts.Org)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, map[string]any{"id": opts.ID, "deleted": true})
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Removed trusted publisher %s of robot %s/%s\n", opts.IO.ColorScheme().SuccessIcon(),
		termtext.Line(opts.ID), termtext.Line(opts.Org), termtext.Line(opts.Robot))
	return err
}
