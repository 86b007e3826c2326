// Package ping implements `chartctl webhook ping`.
package ping

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// PingOptions are the inputs of `webhook ping`.
type PingOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)

	ID string
}

// NewCmdPing returns the `webhook ping` command.
func NewCmdPing(f *cmdutil.Factory, runF func(*PingOptions) error) *cobra.Command {
	opts := &PingOptions{IO: f.IOStreams, Client: f.Client}
	return &cobra.Command{
		Use:   "ping ID",
		Short: "Send a ping event to a webhook",
		Long: `Queue a ping event to the webhook; see how the receiver answered with
'chartctl webhook deliveries ID'.`,
		Example: `  chartctl webhook ping wh_01JD8X2Q3R4S5T6V7W8X9Y0Z1A`,
		Args:    cmdutil.ExactArgs(1, "a webhook id is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			c, err := opts.Client()
			if err != nil {
				return err
			}
			d, _, err := c.Webhooks.Ping(cmd.Context(), opts.ID)
			if err != nil {
				return fmt.Errorf("ping webhook %s: %w", opts.ID, err)
			}
			if f.WantsJSON() {
				return cmdutil.PrintJSON(opts.IO.Out, d)
			}
			_, err = fmt.Fprintf(opts.IO.Out, "%s Queued ping as delivery %s; check it with: chartctl webhook deliveries %s\n",
				opts.IO.ColorScheme().SuccessIcon(), termtext.Line(d.ID), termtext.Line(opts.ID))
			return err
		},
	}
}
