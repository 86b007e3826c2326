// Package list implements `chartctl user list`.
package list

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// ListOptions are the inputs of `user list`.
type ListOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Now    func() time.Time
}

// NewCmdList returns the `user list` command.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Now: time.Now}
	return &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List every user of the server",
		Example: `  chartctl user list
  chartctl user list -o json`,
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
	users, err := client.Collect(c.Users.All(ctx))
	if err != nil {
		return fmt.Errorf("list users: %w", err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, users)
	}
	cs := opts.IO.ColorScheme()
	now := opts.Now()
	t := opts.Table()
	t.Header("email", "admin", "status", "sign-in", "created", "last seen")
	t.KeepWhole(0)
	// On a narrow terminal the creation time, then the last sign-in, go
	// first.
	t.Optional(4, 5)
	for _, u := range users {
		t.AddField(u.Email, cs.Bold)
		admin := "no"
		if u.Admin {
			admin = "yes"
		}
		t.AddField(admin)
		if u.Disabled {
			t.AddField("disabled", cs.Red)
		} else {
			t.AddField("active", cs.Green)
		}
		// How the user signs in: local (a password, or none) or the
		// identity provider (oidc).
		t.AddField(u.Identity.Provider)
		t.AddField(cmdutil.FormatTime(opts.IO, now, u.CreatedAt))
		if u.LastSeenAt == nil {
			t.AddField("never")
		} else {
			t.AddField(cmdutil.FormatTime(opts.IO, now, *u.LastSeenAt))
		}
		t.EndRow()
	}
	return t.Render()
}
