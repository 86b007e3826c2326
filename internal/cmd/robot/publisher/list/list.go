// Package list implements `chartctl robot publisher list`.
package list

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// ListOptions are the inputs of `robot publisher list`.
type ListOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Now    func() time.Time

	Robot, Org string
}

// NewCmdList returns the `robot publisher list` command.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Now: time.Now}
	cmd := &cobra.Command{
		Use:     "list ROBOT --org ORG",
		Aliases: []string{"ls"},
		Short:   "List a robot's trusted publishers",
		Example: `  chartctl robot publisher list ci-push --org acme
  chartctl robot publisher list ci-push --org acme -o json`,
		Args: cmdutil.ExactArgs(1, "the robot's name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Robot = args[0]
			opts.JSON = f.WantsJSON()
			if opts.Org == "" {
				return cmdutil.FlagErrorf("--org is required")
			}
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Org, "org", "", "organization of the robot (required)")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	pubs := []*client.Publisher{}
	for p, err := range c.Robots.AllPublishers(ctx, opts.Org, opts.Robot) {
		if err != nil {
			return cmdutil.HintNotFound(fmt.Errorf("list the trusted publishers of robot %s/%s: %w", opts.Org, opts.Robot, err), "List the robots with: chartctl robot list --org "+opts.Org)
		}
		pubs = append(pubs, p)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, pubs)
	}
	if len(pubs) == 0 && opts.IO.IsStdoutTTY() {
		fmt.Fprintf(opts.IO.ErrOut, "No trusted publishers. Add one with: chartctl robot publisher add %s --org %s --issuer URL --audience AUD --claim NAME=PATTERN\n", opts.Robot, opts.Org)
		return nil
	}
	cs := opts.IO.ColorScheme()
	t := opts.Table()
	t.Header("id", "issuer", "audience", "claims", "created")
	t.KeepWhole(0)
	t.Optional(4, 2)
	for _, p := range pubs {
		names := make([]string, 0, len(p.Claims))
		for k := range p.Claims {
			names = append(names, k)
		}
		sort.Strings(names)
		conds := make([]string, len(names))
		for n, k := range names {
			conds[n] = k + "=" + p.Claims[k]
		}
		t.AddField(p.ID, cs.Gray)
		t.AddField(p.Issuer, cs.Bold)
		t.AddField(p.Audience)
		t.AddField(strings.Join(conds, ","))
		t.AddField(cmdutil.FormatTime(opts.IO, opts.Now(), p.CreatedAt))
		t.EndRow()
	}
	return t.Render()
}
