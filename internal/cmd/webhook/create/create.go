// Package create implements `chartctl webhook create`.
package create

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

// CreateOptions are the inputs of `webhook create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Repo, Org string
	URL       string
	Events    []string
	Secret    string
	Inactive  bool
}

// NewCmdCreate returns the `webhook create` command.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "create --url URL",
		Short: "Create a webhook",
		Long: `Create a webhook of a repository (--repo), an organization (--org) or,
for admins, of the whole server. The signing secret is generated unless
--secret gives one, and shown only now: give it to the receiver.`,
		Example: `  chartctl webhook create --repo stable --url https://ci.example.com/hook --events chart.pushed
  chartctl webhook create --org acme --url https://chat.example.com/hook --events '*'`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.URL == "" {
				return cmdutil.FlagErrorf("--url is required")
			}
			if opts.Repo != "" && opts.Org != "" {
				return cmdutil.FlagErrorf("use --repo or --org, not both")
			}
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "a webhook of this repository")
	cmd.Flags().StringVar(&opts.Org, "org", "", "a webhook of this organization")
	cmd.Flags().StringVar(&opts.URL, "url", "", "where events are POSTed (http or https)")
	cmd.Flags().StringSliceVar(&opts.Events, "events", []string{"*"}, "event types to send, comma-separated, or '*' for all")
	_ = cmd.RegisterFlagCompletionFunc("events", cmdutil.CompleteEventTypes)
	cmd.Flags().StringVar(&opts.Secret, "secret", "", "signing secret (whsec_…; default: generated)")
	cmd.Flags().BoolVar(&opts.Inactive, "inactive", false, "create it disabled")
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	active := !opts.Inactive
	h, _, err := c.Webhooks.Create(ctx, client.WebhookScope{Repository: opts.Repo, Organization: opts.Org},
		&client.WebhookRequest{URL: opts.URL, Events: opts.Events, Secret: opts.Secret, Active: &active})
	if err != nil {
		return fmt.Errorf("create webhook: %w", err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, h)
	}
	cs := opts.IO.ColorScheme()
	fmt.Fprintf(opts.IO.ErrOut, "%s Created webhook %s for %s (%s)\n", cs.SuccessIcon(), termtext.Line(h.ID), termtext.Line(h.URL), strings.Join(h.Events, ","))
	fmt.Fprintln(opts.IO.ErrOut, "Signing secret (shown once; receivers verify webhook-signature with it):")
	_, err = fmt.Fprintln(opts.IO.Out, h.Secret)
	return err
}
