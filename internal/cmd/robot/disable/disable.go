// Package disable implements `chartctl robot disable` and `chartctl robot
// enable`: one switch, so the two verbs share their options and run
// function.
package disable

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// DisableOptions are the inputs of `robot disable` and `robot enable`.
type DisableOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name         string
	Organization string
	// Disabled is what the robot becomes: true for disable.
	Disabled bool
}

// NewCmdDisable returns the `robot disable` command; runF replaces the run
// function in tests.
func NewCmdDisable(f *cmdutil.Factory, runF func(*DisableOptions) error) *cobra.Command {
	return newCmd(f, runF, true, &cobra.Command{
		Use:   "disable NAME --org ORG",
		Short: "Stop a robot account's secret until it is enabled again",
		Long: `Disable a robot: its secret, and credentials exchanged for it, are
refused until ` + "`chartctl robot enable`" + `. Nothing is deleted.`,
		Example: `  chartctl robot disable ci-push --org acme`,
	})
}

// NewCmdEnable returns the `robot enable` command; runF replaces the run
// function in tests.
func NewCmdEnable(f *cmdutil.Factory, runF func(*DisableOptions) error) *cobra.Command {
	return newCmd(f, runF, false, &cobra.Command{
		Use:     "enable NAME --org ORG",
		Short:   "Let a disabled robot account's secret work again",
		Example: `  chartctl robot enable ci-push --org acme`,
	})
}

func newCmd(f *cmdutil.Factory, runF func(*DisableOptions) error, disabled bool, cmd *cobra.Command) *cobra.Command {
	opts := &DisableOptions{IO: f.IOStreams, Client: f.Client, Disabled: disabled}
	cmd.Args = cmdutil.ExactArgs(1, "a robot name is required")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		opts.Name = args[0]
		opts.JSON = f.WantsJSON()
		if opts.Organization == "" {
			return cmdutil.FlagErrorf("--org is required: robots belong to an organization")
		}
		if runF != nil {
			return runF(opts)
		}
		return disableRun(cmd.Context(), opts)
	}
	cmd.Flags().StringVar(&opts.Organization, "org", "", "organization of the robot (required)")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	return cmd
}

func disableRun(ctx context.Context, opts *DisableOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	verb := "enable"
	if opts.Disabled {
		verb = "disable"
	}
	r, _, err := c.Robots.Update(ctx, opts.Organization, opts.Name, &client.UpdateRobotRequest{Disabled: &opts.Disabled})
	if err != nil {
		hint := "To see the robots of " + opts.Organization + ", run: chartctl robot list --org " + opts.Organization
		return cmdutil.HintNotFound(fmt.Errorf("%s robot %s in %s: %w", verb, opts.Name, opts.Organization, err), hint)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, r)
	}
	cs := opts.IO.ColorScheme()
	if opts.Disabled {
		_, err = fmt.Fprintf(opts.IO.Out, "%s Disabled robot %s in %s: its secret is refused until you enable it\n",
			cs.SuccessIcon(), cs.Bold(termtext.Line(r.Name)), termtext.Line(r.Organization))
		return err
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Enabled robot %s in %s\n", cs.SuccessIcon(), cs.Bold(termtext.Line(r.Name)), termtext.Line(r.Organization))
	return err
}
