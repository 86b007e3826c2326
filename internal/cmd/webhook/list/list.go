// Package list implements `chartctl webhook list`.
package list

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// ListOptions are the inputs of `webhook list`.
type ListOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Now    func() time.Time

	Repo, Org string
}

// NewCmdList returns the `webhook list` command.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Now: time.Now}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the webhooks of a repository, an organization or the server",
		Example: `  chartctl webhook list --repo stable
  chartctl webhook list --org acme
  chartctl webhook list          # server-wide webhooks (admins)`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Repo != "" && opts.Org != "" {
				return cmdutil.FlagErrorf("use --repo or --org, not both")
			}
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "the repository's webhooks")
	cmd.Flags().StringVar(&opts.Org, "org", "", "the organization's webhooks")
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	hooks, _, err := c.Webhooks.List(ctx, client.WebhookScope{Repository: opts.Repo, Organization: opts.Org})
	if err != nil {
		return fmt.Errorf("list webhooks: %w", err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, hooks)
	}
	if len(hooks) == 0 && opts.IO.IsStdoutTTY() {
		fmt.Fprintln(opts.IO.ErrOut, "No webhooks. Create one with: chartctl webhook create --url URL")
		return nil
	}
	cs := opts.IO.ColorScheme()
	t := opts.Table()
	t.Header("id", "url", "events", "active", "created")
	t.KeepWhole(0)
	// On a narrow terminal the creation time, then the events, go first.
	t.Optional(4, 2)
	for _, h := range hooks {
		t.AddField(h.ID, cs.Gray)
		t.AddField(h.URL, cs.Bold)
		t.AddField(strings.Join(h.Events, ","))
		switch {
		case h.Active:
			t.AddField("yes")
		case h.DisabledReason != nil:
			t.AddField("no: " + *h.DisabledReason)
		default:
			t.AddField("no")
		}
		t.AddField(cmdutil.FormatTime(opts.IO, opts.Now(), h.CreatedAt))
		t.EndRow()
	}
	return t.Render()
}
