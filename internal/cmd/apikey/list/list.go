// Package list implements `chartctl api-key list`.
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

// ListOptions are the inputs of `api-key list`.
type ListOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Now    func() time.Time
}

// NewCmdList returns the `api-key list` command.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Now: time.Now}
	return &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List your API keys (without their values)",
		Example: `  chartctl api-key list
  chartctl api-key list -o json`,
		Args: cmdutil.NoArgs,
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
	keys, err := client.Collect(c.APIKeys.All(ctx))
	if err != nil {
		return fmt.Errorf("list API keys: %w", err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, keys)
	}
	if len(keys) == 0 && opts.IO.IsStdoutTTY() {
		fmt.Fprintln(opts.IO.ErrOut, "No API keys. Create one with: chartctl api-key create --name NAME --scopes repo:read")
		return nil
	}
	cs := opts.IO.ColorScheme()
	now := opts.Now()
	t := opts.Table()
	t.Header("id", "name", "scopes", "repositories", "created", "last used", "expires")
	t.KeepWhole(0)
	// On a narrow terminal the creation time, then the last use, then the
	// expiry go first: the id (to revoke), name, scopes and the
	// repositories a key is limited to stay.
	t.Optional(4, 5, 6)
	opt := func(p *time.Time, none string) string {
		if p == nil {
			return none
		}
		return cmdutil.FormatTime(opts.IO, now, *p)
	}
	for _, k := range keys {
		t.AddField(k.ID, cs.Gray)
		t.AddField(k.Name, cs.Bold)
		t.AddField(strings.Join(k.Scopes, ","))
		// A key without patterns reaches every repository its scopes do.
		repos := "all"
		if len(k.Repositories) > 0 {
			repos = strings.Join(k.Repositories, " ")
		}
		t.AddField(repos)
		t.AddField(cmdutil.FormatTime(opts.IO, now, k.CreatedAt))
		t.AddField(opt(k.LastUsedAt, "never"))
		t.AddField(opt(k.ExpiresAt, "never"))
		t.EndRow()
	}
	return t.Render()
}
