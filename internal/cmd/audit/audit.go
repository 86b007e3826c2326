// Package audit implements `chartctl audit`.
package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// AuditOptions are the inputs of `audit`.
type AuditOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Now    func() time.Time

	Actor, Action, Target string
	Since, Until          string
	Limit                 int
}

// NewCmdAudit returns the `audit` command.
func NewCmdAudit(f *cmdutil.Factory, runF func(*AuditOptions) error) *cobra.Command {
	opts := &AuditOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show who did what: the audit log",
		Long: `Show the audit log, newest first: every change and every refused or
failed attempt, with the actor, credential, client address and request id.
Server admins see everything; organization owners their organization's
entries. --since and --until take an RFC 3339 time or an age (24h, 7d).`,
		Example: `  chartctl audit --action chart.delete --target stable/nginx/1.2.3
  chartctl audit --actor dev@example.com --since 7d
  chartctl audit --action chart -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Limit < 1 || opts.Limit > 1000 {
				return cmdutil.FlagErrorf("--limit must be from 1 to 1000")
			}
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return auditRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Actor, "actor", "", "entries of this user (email or id)")
	cmd.Flags().StringVar(&opts.Action, "action", "", "entries of this action (chart.delete) or resource (chart)")
	cmd.Flags().StringVar(&opts.Target, "target", "", "entries about this target (repo/chart/version, a team, a key id)")
	cmd.Flags().StringVar(&opts.Since, "since", "", "entries at or after this time or age")
	cmd.Flags().StringVar(&opts.Until, "until", "", "entries before this time or age")
	cmd.Flags().IntVarP(&opts.Limit, "limit", "L", 50, "most entries to show")
	return cmd
}

func auditRun(ctx context.Context, opts *AuditOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	entries := []*client.AuditEntry{}
	q := &client.AuditOptions{Actor: opts.Actor, Action: opts.Action, Target: opts.Target, Limit: min(opts.Limit, 100)}
	for _, tm := range []struct {
		flag, v string
		dst     *time.Time
	}{{"--since", opts.Since, &q.Since}, {"--until", opts.Until, &q.Until}} {
		if tm.v == "" {
			continue
		}
		t, err := parseTime(tm.v, opts.Now())
		if err != nil {
			return cmdutil.FlagErrorf("invalid %s %q: use an RFC 3339 time or an age such as 24h or 7d", tm.flag, tm.v)
		}
		*tm.dst = t
	}
	for len(entries) < opts.Limit {
		page, resp, err := c.Audit.List(ctx, q)
		if err != nil {
			return fmt.Errorf("read audit log: %w", err)
		}
		entries = append(entries, page...)
		if resp.Meta == nil || resp.Meta.NextCursor == "" {
			break
		}
		q.Cursor = resp.Meta.NextCursor
	}
	if len(entries) > opts.Limit {
		entries = entries[:opts.Limit]
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, entries)
	}
	if len(entries) == 0 && opts.IO.IsStdoutTTY() {
		fmt.Fprintln(opts.IO.ErrOut, "No audit entries match.")
		return nil
	}
	cs := opts.IO.ColorScheme()
	t := opts.Table()
	t.Header("time", "actor", "action", "target", "outcome", "client", "request")
	t.KeepWhole(0)
	// On a narrow terminal the request id, then the client address, go
	// first: who did what to what, and how it went, stay.
	t.Optional(6, 5)
	for _, e := range entries {
		actor := "anonymous"
		if e.Actor.Email != nil {
			actor = *e.Actor.Email
		}
		t.AddField(e.Time.UTC().Format(time.RFC3339))
		t.AddField(termtext.Line(actor), cs.Bold)
		t.AddField(e.Action)
		t.AddField(termtext.Line(e.Target))
		t.AddField(e.Outcome)
		t.AddField(e.ClientIP, cs.Gray)
		t.AddField(e.RequestID, cs.Gray)
		t.EndRow()
	}
	return t.Render()
}

// parseTime reads an RFC 3339 time or an age before now ("24h", "7d").
func parseTime(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	var n int
	if _, err := fmt.Sscanf(v, "%dd", &n); err == nil && n >= 0 && fmt.Sprintf("%dd", n) == v {
		return now.Add(-time.Duration(n) * 24 * time.Hour), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("invalid time %q", v)
	}
	return now.Add(-d), nil
}
