// Package redeliver implements `chartctl webhook redeliver`.
package redeliver

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// RedeliverOptions are the inputs of `webhook redeliver`.
type RedeliverOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)

	ID, Delivery string
}

// NewCmdRedeliver returns the `webhook redeliver` command.
func NewCmdRedeliver(f *cmdutil.Factory, runF func(*RedeliverOptions) error) *cobra.Command {
	opts := &RedeliverOptions{IO: f.IOStreams, Client: f.Client}
	return &cobra.Command{
		Use:     "redeliver ID DELIVERY",
		Short:   "Send a delivery's event again",
		Example: `  chartctl webhook redeliver wh_01JD8X2Q3R4S5T6V7W8X9Y0Z1A dlv_000000000000002a`,
		Args:    cmdutil.ExactArgs(2, "a webhook id and a delivery id are required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID, opts.Delivery = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			c, err := opts.Client()
			if err != nil {
				return err
			}
			d, _, err := c.Webhooks.Redeliver(cmd.Context(), opts.ID, opts.Delivery)
			if err != nil {
				return fmt.Errorf("redeliver: %w", err)
			}
			if f.WantsJSON() {
				return cmdutil.PrintJSON(opts.IO.Out, d)
			}
			return report(opts.IO, d)
		},
	}
}

func report(ios *iostreams.IOStreams, d *client.Delivery) error {
	_, err := fmt.Fprintf(ios.Out, "%s Queued %s as delivery %s\n", ios.ColorScheme().SuccessIcon(), termtext.Line(d.EventType), termtext.Line(d.ID))
	return err
}
