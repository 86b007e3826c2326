// Package ratelimit implements `chartctl rate-limit`.
package ratelimit

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// RateLimitOptions are the inputs of `rate-limit`.
type RateLimitOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Now    func() time.Time

	Repo string
}

// NewCmdRateLimit returns the `rate-limit` command.
func NewCmdRateLimit(f *cmdutil.Factory, runF func(*RateLimitOptions) error) *cobra.Command {
	opts := &RateLimitOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "rate-limit",
		Short: "Show your rate limits",
		Long: `Show your rate-limit buckets: global (every request of your credential),
search (per client address) and, with --repo, that repository's uploads.
Asking does not count against any of them.`,
		Example: `  chartctl rate-limit
  chartctl rate-limit --repo stable`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return rateLimitRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Repo, "repo", "r", "", "also show this repository's upload bucket")
	_ = cmd.RegisterFlagCompletionFunc("repo", cmdutil.CompleteRepositories(f))
	return cmd
}

func rateLimitRun(ctx context.Context, opts *RateLimitOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	rl, _, err := c.RateLimit.Get(ctx, opts.Repo)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("get rate limits: %w", err), cmdutil.HintRepoList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, rl)
	}
	names := make([]string, 0, len(rl.Resources))
	for n := range rl.Resources {
		names = append(names, n)
	}
	sort.Strings(names)
	cs := opts.IO.ColorScheme()
	now := opts.Now()
	t := opts.Table()
	t.Header("resource", "limit", "remaining", "used", "resets")
	// On a narrow terminal "used" (limit less remaining) goes first.
	t.Optional(3)
	for _, n := range names {
		r := rl.Resources[n]
		remaining := strconv.Itoa(r.Remaining)
		color := cs.Green
		if r.Limit > 0 && r.Remaining*10 < r.Limit {
			color = cs.Red
		}
		t.AddField(n, cs.Bold)
		t.AddField(strconv.Itoa(r.Limit))
		t.AddField(remaining, color)
		t.AddField(strconv.Itoa(r.Used))
		reset := ""
		if r.Reset > 0 {
			reset = cmdutil.FormatTime(opts.IO, now, time.Unix(r.Reset, 0))
		}
		t.AddField(reset, cs.Gray)
		t.EndRow()
	}
	return t.Render()
}
