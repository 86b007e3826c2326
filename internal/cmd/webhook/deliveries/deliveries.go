// Package deliveries implements `chartctl webhook deliveries`.
package deliveries

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// DeliveriesOptions are the inputs of `webhook deliveries`.
type DeliveriesOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Now    func() time.Time

	ID    string
	Limit int
}

// NewCmdDeliveries returns the `webhook deliveries` command.
func NewCmdDeliveries(f *cmdutil.Factory, runF func(*DeliveriesOptions) error) *cobra.Command {
	opts := &DeliveriesOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "deliveries ID",
		Short: "Show a webhook's latest deliveries and their attempts",
		Example: `  chartctl webhook deliveries wh_01JD8X2Q3R4S5T6V7W8X9Y0Z1A
  chartctl webhook deliveries wh_01JD8X2Q3R4S5T6V7W8X9Y0Z1A -o json`,
		Args: cmdutil.ExactArgs(1, "a webhook id is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return deliveriesRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.Limit, "limit", "L", 20, "most deliveries to show (1-100)")
	return cmd
}

func deliveriesRun(ctx context.Context, opts *DeliveriesOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	ds, _, err := c.Webhooks.Deliveries(ctx, opts.ID, opts.Limit)
	if err != nil {
		return fmt.Errorf("list deliveries: %w", err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, ds)
	}
	cs := opts.IO.ColorScheme()
	t := opts.Table()
	t.Header("id", "event", "state", "attempts", "status", "last response", "next attempt")
	t.KeepWhole(0)
	// On a narrow terminal: the next attempt, then the attempt count and
	// the last response go first; id, event, state and status stay.
	t.Optional(6, 3, 5)
	for _, d := range ds {
		t.AddField(d.ID, cs.Gray)
		t.AddField(d.EventType)
		t.AddField(d.State, cs.Bold)
		t.AddField(strconv.Itoa(d.Attempt))
		status, resp, next := "-", "", "-"
		if d.StatusCode != nil {
			status = strconv.Itoa(*d.StatusCode)
		}
		if d.ResponseExcerpt != nil {
			resp = termtext.Line(*d.ResponseExcerpt)
		}
		if d.NextAttemptAt != nil {
			next = cmdutil.FormatTime(opts.IO, opts.Now(), *d.NextAttemptAt)
		}
		t.AddField(status)
		t.AddField(resp)
		t.AddField(next)
		t.EndRow()
	}
	return t.Render()
}
