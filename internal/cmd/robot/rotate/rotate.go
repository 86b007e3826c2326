// Package rotate implements `chartctl robot rotate`.
package rotate

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmd/robot/create"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// MaxGrace is the longest grace the server allows the old secret.
const MaxGrace = 7 * 24 * time.Hour

// RotateOptions are the inputs of `robot rotate`.
type RotateOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name         string
	Organization string
	// Grace is how long the old secret keeps working (0: it stops at once).
	Grace time.Duration
}

// NewCmdRotate returns the `robot rotate` command; runF replaces the run
// function in tests.
func NewCmdRotate(f *cmdutil.Factory, runF func(*RotateOptions) error) *cobra.Command {
	opts := &RotateOptions{IO: f.IOStreams, Client: f.Client}
	var grace string
	cmd := &cobra.Command{
		Use:   "rotate NAME --org ORG [--grace DURATION]",
		Short: "Give a robot account a new secret and print it once",
		Long: `Give a robot a new secret, printed this once. The old secret stops at
once, or after --grace (such as 10m or 1h; at most 7d) so that running jobs
can finish while you replace it in CI.`,
		Example: `  chartctl robot rotate ci-push --org acme
  chartctl robot rotate ci-push --org acme --grace 10m`,
		Args: cmdutil.ExactArgs(1, "a robot name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if opts.Organization == "" {
				return cmdutil.FlagErrorf("--org is required: robots belong to an organization")
			}
			d, err := text.ParseDuration(grace)
			if err != nil {
				return cmdutil.FlagErrorf("invalid --grace: %s", err)
			}
			if d > MaxGrace {
				return cmdutil.FlagErrorf("invalid --grace %s: at most 7d", grace)
			}
			opts.Grace = d
			if runF != nil {
				return runF(opts)
			}
			return rotateRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Organization, "org", "", "organization of the robot (required)")
	cmd.Flags().StringVar(&grace, "grace", "0s", "how long the old secret keeps working, such as 10m (default: it stops at once)")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	return cmd
}

func rotateRun(ctx context.Context, opts *RotateOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	req := &client.RotateRobotRequest{}
	if opts.Grace > 0 {
		// A Go duration the server parses as it is ("24h0m0s" for 1d).
		req.Grace = opts.Grace.String()
	}
	r, _, err := c.Robots.Rotate(ctx, opts.Organization, opts.Name, req)
	if err != nil {
		hint := "To see the robots of " + opts.Organization + ", run: chartctl robot list --org " + opts.Organization
		return cmdutil.HintNotFound(fmt.Errorf("rotate the secret of robot %s in %s: %w", opts.Name, opts.Organization, err), hint)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, r)
	}
	if opts.IO.IsStdoutTTY() {
		cs := opts.IO.ColorScheme()
		old := "the old one stops working now"
		if opts.Grace > 0 {
			old = "the old one keeps working for " + opts.Grace.String()
		}
		fmt.Fprintf(opts.IO.Out, "%s Rotated the secret of robot %s in %s: %s\n", cs.SuccessIcon(),
			cs.Bold(termtext.Line(r.Name)), termtext.Line(r.Organization), old)
	}
	return create.PrintSecret(opts.IO, c, r)
}
