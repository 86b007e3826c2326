// Package list implements `chartctl robot list`.
package list

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// ListOptions are the inputs of `robot list`.
type ListOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Now    func() time.Time

	Organization string
}

// NewCmdList returns the `robot list` command; runF replaces the run
// function in tests.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Now: time.Now}
	cmd := &cobra.Command{
		Use:     "list --org ORG",
		Aliases: []string{"ls"},
		Short:   "List an organization's robot accounts",
		Long: `List the robot accounts of an organization: a table on a terminal, JSON
in pipes or with -o json. Secrets are never shown after creation.`,
		Example: `  chartctl robot list --org acme
  chartctl robot list --org acme -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.WantsJSON()
			if opts.Organization == "" {
				return cmdutil.FlagErrorf("--org is required: robots belong to an organization")
			}
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Organization, "org", "", "organization whose robots to list (required)")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	return cmd
}

// Status is a robot's state in a word: disabled, expired or active.
func Status(r *client.Robot, now time.Time) string {
	switch {
	case r.Disabled:
		return "disabled"
	case r.ExpiresAt != nil && !r.ExpiresAt.After(now):
		return "expired"
	}
	return "active"
}

func listRun(ctx context.Context, opts *ListOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	robots, err := client.Collect(c.Robots.All(ctx, opts.Organization))
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("list the robots of %s: %w", opts.Organization, err), cmdutil.HintOrgList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, robots)
	}
	if len(robots) == 0 {
		if opts.IO.IsStdoutTTY() {
			fmt.Fprintf(opts.IO.ErrOut, "No robots in %s. Create one with: chartctl robot create NAME --org %s --repo 'PATTERN' --permission pull,push\n",
				termtext.Line(opts.Organization), termtext.Line(opts.Organization))
		}
		return nil
	}
	cs := opts.IO.ColorScheme()
	now := opts.Now()
	t := opts.Table()
	t.Header("name", "repositories", "permissions", "status", "last used", "expires")
	t.KeepWhole(0)
	// On a narrow terminal the times go first: the name (for the next
	// command), what it reaches and whether it works stay.
	t.Optional(4, 5)
	for _, r := range robots {
		t.AddField(r.Name, cs.Bold)
		t.AddField(strings.Join(r.Repositories, " "))
		t.AddField(strings.Join(r.Permissions, ","))
		status := Status(r, now)
		if status == "active" {
			t.AddField(status, cs.Green)
		} else {
			t.AddField(status, cs.Red)
		}
		t.AddField(optTime(opts.IO, now, r.LastUsedAt))
		t.AddField(optTime(opts.IO, now, r.ExpiresAt))
		t.EndRow()
	}
	return t.Render()
}

// optTime formats a time that may be absent ("never").
func optTime(ios *iostreams.IOStreams, now time.Time, p *time.Time) string {
	if p == nil {
		return "never"
	}
	return cmdutil.FormatTime(ios, now, *p)
}
