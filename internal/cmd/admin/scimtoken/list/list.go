// Package list implements `chartctl admin scim-token list`.
package list

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// ListOptions are the inputs of `admin scim-token list`.
type ListOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
}

// NewCmdList returns the `admin scim-token list` command.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable}
	return &cobra.Command{
		Use:   "list",
		Short: "List SCIM tokens (never their values)",
		Example: `  chartctl admin scim-token list
  chartctl admin scim-token list -o json`,
		Args: cmdutil.ExactArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
}

func listRun(ctx context.Context, opts *ListOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	tokens, _, err := c.Admin.SCIMTokens(ctx, &client.ListOptions{Limit: 100})
	if err != nil {
		return fmt.Errorf("list SCIM tokens: %w", err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, tokens)
	}
	t := opts.Table()
	t.Header("id", "name", "created", "last used")
	for _, k := range tokens {
		t.AddField(k.ID)
		t.AddField(k.Name)
		t.AddField(k.CreatedAt.Format("2006-01-02"))
		last := "never"
		if k.LastUsedAt != nil {
			last = k.LastUsedAt.Format("2006-01-02 15:04")
		}
		t.AddField(last)
		t.EndRow()
	}
	return t.Render()
}
