// Package update implements `chartctl webhook update`.
package update

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// UpdateOptions are the inputs of `webhook update`.
type UpdateOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	ID     string
	URL    string
	Events []string
	// Active is set when --active was given.
	Active      *bool
	SecretStdin bool
}

// NewCmdUpdate returns the `webhook update` command.
func NewCmdUpdate(f *cmdutil.Factory, runF func(*UpdateOptions) error) *cobra.Command {
	opts := &UpdateOptions{IO: f.IOStreams, Client: f.Client}
	var active bool
	cmd := &cobra.Command{
		Use:   "update ID [--url URL] [--events TYPES] [--active=BOOL] [--secret-stdin]",
		Short: "Change a webhook's URL, events, state or signing secret",
		Long: `Change what the flags name and leave the rest as it is (PATCH
/v1/webhooks/:id). --active=true turns a webhook the dispatcher disabled
back on, once its receiver works again; --active=false pauses it (its
events are not queued meanwhile). --secret-stdin reads a new signing secret
(whsec_ and the base64 of 16 to 64 bytes) from standard input, so it shows
neither in the process list nor in the shell history.`,
		Example: `  chartctl webhook update wh_01JD8X2Q3R4S5T6V7W8X9Y0Z1A --active=true
  chartctl webhook update wh_01JD8X2Q3R4S5T6V7W8X9Y0Z1A --url https://ci.example.com/v2/hook --events chart.pushed,chart.deleted
  printf '%s\n' "$WEBHOOK_SECRET" | chartctl webhook update wh_01JD8X2Q3R4S5T6V7W8X9Y0Z1A --secret-stdin`,
		Args: cmdutil.ExactArgs(1, "a webhook id is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			flags := cmd.Flags()
			if flags.Changed("active") {
				opts.Active = &active
			}
			if flags.Changed("url") && opts.URL == "" {
				return cmdutil.FlagErrorf("--url must not be empty")
			}
			if flags.Changed("events") && len(opts.Events) == 0 {
				return cmdutil.FlagErrorf("--events must list event types, or '*' for all")
			}
			if !flags.Changed("url") && !flags.Changed("events") && opts.Active == nil && !opts.SecretStdin {
				return cmdutil.FlagErrorf("nothing to change: give --url, --events, --active or --secret-stdin")
			}
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return updateRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.URL, "url", "", "where events are POSTed from now on (http or https)")
	cmd.Flags().StringSliceVar(&opts.Events, "events", nil, "event types to send, comma-separated, or '*' for all")
	_ = cmd.RegisterFlagCompletionFunc("events", cmdutil.CompleteEventTypes)
	cmd.Flags().BoolVar(&active, "active", true, "whether the webhook is sent events (--active=false pauses it)")
	cmd.Flags().BoolVar(&opts.SecretStdin, "secret-stdin", false, "read a new signing secret (whsec_…) from standard input")
	return cmd
}

func updateRun(ctx context.Context, opts *UpdateOptions) error {
	req := &client.WebhookRequest{URL: opts.URL, Events: opts.Events, Active: opts.Active}
	if opts.SecretStdin {
		secret, err := cmdutil.ReadStdinSecret(opts.IO.In, "--secret-stdin")
		if err != nil {
			return err
		}
		req.Secret = secret
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	h, _, err := c.Webhooks.Update(ctx, opts.ID, req)
	if err != nil {
		return fmt.Errorf("update webhook %s: %w", opts.ID, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, h)
	}
	state := "active"
	if !h.Active {
		state = "inactive"
	}
	cs := opts.IO.ColorScheme()
	_, err = fmt.Fprintf(opts.IO.Out, "%s Updated webhook %s: %s (%s), %s\n", cs.SuccessIcon(), termtext.Line(h.ID),
		termtext.Line(h.URL), termtext.Line(strings.Join(h.Events, ",")), state)
	if err == nil && opts.SecretStdin {
		fmt.Fprintln(opts.IO.ErrOut, "The new signing secret applies to the next delivery: give it to the receiver.")
	}
	return err
}
