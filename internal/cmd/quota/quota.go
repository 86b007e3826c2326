// Package quota implements `chartctl repo quota get|set` and `chartctl org
// quota get|set`. The two nouns differ only in the endpoint they call
// (CONTRACT §15: GET, PUT /v1/repositories/:repo/quota and
// /v1/organizations/:org/quota), so one implementation serves both,
// parameterized by a Target.
package quota

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// Target is what a quota belongs to: a repository or an organization.
type Target struct {
	// Noun names it in messages ("repository", "organization").
	Noun string
	// Arg names the positional argument in usage ("REPOSITORY", "ORG").
	Arg string
	// Get and Set call the SDK.
	Get func(ctx context.Context, c *client.Client, name string) (*client.Quota, error)
	Set func(ctx context.Context, c *client.Client, name string, r *client.SetQuotaRequest) (*client.Quota, error)
	// Complete completes the positional argument.
	Complete func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)
	// Who says who may set it, for the help text.
	Who string
}

// Repository is the Target of `chartctl repo quota`.
func Repository(f *cmdutil.Factory) Target {
	return Target{
		Noun: "repository", Arg: "REPOSITORY",
		Get: func(ctx context.Context, c *client.Client, name string) (*client.Quota, error) {
			q, _, err := c.Repositories.Quota(ctx, name)
			return q, err
		},
		Set: func(ctx context.Context, c *client.Client, name string, r *client.SetQuotaRequest) (*client.Quota, error) {
			q, _, err := c.Repositories.SetQuota(ctx, name, r)
			return q, err
		},
		Complete: cmdutil.FirstArgOnly(cmdutil.CompleteRepositories(f)),
		Who:      "Server admins set any repository's quota; an organization's owners set\nthe quotas of its repositories.",
	}
}

// Organization is the Target of `chartctl org quota`.
func Organization(f *cmdutil.Factory) Target {
	return Target{
		Noun: "organization", Arg: "ORG",
		Get: func(ctx context.Context, c *client.Client, name string) (*client.Quota, error) {
			q, _, err := c.Organizations.Quota(ctx, name)
			return q, err
		},
		Set: func(ctx context.Context, c *client.Client, name string, r *client.SetQuotaRequest) (*client.Quota, error) {
			q, _, err := c.Organizations.SetQuota(ctx, name, r)
			return q, err
		},
		Complete: cmdutil.FirstArgOnly(cmdutil.CompleteOrganizations(f)),
		Who:      "Only server admins set an organization's quota; it bounds all of its\nrepositories together.",
	}
}

// NewCmdQuota returns the `quota` command group of t.
func NewCmdQuota(f *cmdutil.Factory, t Target) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quota <command>",
		Short: fmt.Sprintf("Show and set a%s %s's quota", article(t.Noun), t.Noun),
		Long: fmt.Sprintf(`A quota bounds the bytes (chart archives and provenance files, before any
deduplication) and the number of chart versions a%s %s holds. An upload
over it is refused with HTTP 507, and a message naming the quota, its limit
and the current use.

%s`, article(t.Noun), t.Noun, t.Who),
		Example: fmt.Sprintf(`  chartctl %[1]s quota get %[2]s
  chartctl %[1]s quota set %[2]s --max-bytes 10GiB --max-versions 500
  chartctl %[1]s quota set %[2]s --max-bytes none --max-versions none`, cmdName(t), example(t)),
	}
	cmd.AddCommand(NewCmdGet(f, t, nil), NewCmdSet(f, t, nil))
	return cmd
}

func article(noun string) string {
	if strings.IndexByte("aeiou", noun[0]) >= 0 {
		return "n"
	}
	return ""
}

func cmdName(t Target) string {
	if t.Noun == "organization" {
		return "org"
	}
	return "repo"
}

func example(t Target) string {
	if t.Noun == "organization" {
		return "acme"
	}
	return "stable"
}

// GetOptions are the inputs of `quota get`.
type GetOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Target Target
	Name   string
}

// NewCmdGet returns the `quota get` command of t.
func NewCmdGet(f *cmdutil.Factory, t Target, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Target: t}
	return &cobra.Command{
		Use:               "get " + t.Arg,
		Short:             fmt.Sprintf("Show a%s %s's quota and what it uses", article(t.Noun), t.Noun),
		Example:           fmt.Sprintf("  chartctl %s quota get %s\n  chartctl %s quota get %s -o json", cmdName(t), example(t), cmdName(t), example(t)),
		Args:              cmdutil.ExactArgs(1, "a"+article(t.Noun)+" "+t.Noun+" name is required"),
		ValidArgsFunction: t.Complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.JSON = args[0], f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return getRun(cmd.Context(), opts)
		},
	}
}

func getRun(ctx context.Context, opts *GetOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	q, err := opts.Target.Get(ctx, c, opts.Name)
	if err != nil {
		return fmt.Errorf("get quota of %s %s: %w", opts.Target.Noun, opts.Name, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, q)
	}
	return printQuota(opts.Table(), q)
}

// printQuota writes the quota as a table: a row for bytes and one for
// versions, each with its use and its limit.
func printQuota(t *text.Table, q *client.Quota) error {
	t.Header("", "used", "limit")
	t.AddField("bytes")
	t.AddField(text.HumanBytes(q.UsedBytes))
	t.AddField(limitBytes(q.MaxBytes))
	t.EndRow()
	t.AddField("versions")
	t.AddField(strconv.FormatInt(q.UsedVersions, 10))
	t.AddField(limitCount(q.MaxVersions))
	t.EndRow()
	return t.Render()
}

func limitBytes(n *int64) string {
	if n == nil {
		return "none"
	}
	return text.HumanBytes(*n)
}

func limitCount(n *int64) string {
	if n == nil {
		return "none"
	}
	return strconv.FormatInt(*n, 10)
}

// SetOptions are the inputs of `quota set`.
type SetOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool
	Target Target
	Name   string
	// Request is the whole new quota: a nil limit is unlimited.
	Request client.SetQuotaRequest
}

// NewCmdSet returns the `quota set` command of t.
func NewCmdSet(f *cmdutil.Factory, t Target, runF func(*SetOptions) error) *cobra.Command {
	opts := &SetOptions{IO: f.IOStreams, Client: f.Client, Target: t}
	var maxBytes, maxVersions string
	cmd := &cobra.Command{
		Use:   "set " + t.Arg,
		Short: fmt.Sprintf("Replace a%s %s's quota", article(t.Noun), t.Noun),
		Long: fmt.Sprintf(`Replace the whole quota: a limit not given is unlimited, as is one given as
"none". Sizes are bytes or a size such as 500MiB, 10GiB or 2GB.

%s`, t.Who),
		Example: fmt.Sprintf(`  chartctl %[1]s quota set %[2]s --max-bytes 10GiB
  chartctl %[1]s quota set %[2]s --max-bytes 10GiB --max-versions 500
  chartctl %[1]s quota set %[2]s --max-bytes none --max-versions none`, cmdName(t), example(t)),
		Args:              cmdutil.ExactArgs(1, "a"+article(t.Noun)+" "+t.Noun+" name is required"),
		ValidArgsFunction: t.Complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.JSON = args[0], f.WantsJSON()
			fl := cmd.Flags()
			if !fl.Changed("max-bytes") && !fl.Changed("max-versions") {
				// PUT replaces the whole quota: saying nothing would lift
				// every limit, which should be said out loud.
				return cmdutil.FlagErrorf("give --max-bytes and/or --max-versions (\"none\" lifts a limit; one not given is lifted too)")
			}
			var err error
			if fl.Changed("max-bytes") {
				if opts.Request.MaxBytes, err = parseLimit(maxBytes, text.ParseBytes); err != nil {
					return cmdutil.FlagErrorf("--max-bytes: %v", err)
				}
			}
			if fl.Changed("max-versions") {
				if opts.Request.MaxVersions, err = parseLimit(maxVersions, parseCount); err != nil {
					return cmdutil.FlagErrorf("--max-versions: %v", err)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return setRun(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&maxBytes, "max-bytes", "", `most bytes stored (e.g. 10GiB), or "none"`)
	fs.StringVar(&maxVersions, "max-versions", "", `most chart versions stored, or "none"`)
	return cmd
}

// parseLimit reads "none" (or "unlimited") as no limit and anything else
// with parse.
func parseLimit(s string, parse func(string) (int64, error)) (*int64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "unlimited":
		return nil, nil
	}
	n, err := parse(s)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

func parseCount(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid count %q: use a whole number (0 or more) or none", s)
	}
	return n, nil
}

func setRun(ctx context.Context, opts *SetOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	q, err := opts.Target.Set(ctx, c, opts.Name, &opts.Request)
	if err != nil {
		return fmt.Errorf("set quota of %s %s: %w", opts.Target.Noun, opts.Name, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, q)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Set the quota of %s %s: %s; in use: %s\n", opts.IO.ColorScheme().SuccessIcon(),
		opts.Target.Noun, termtext.Line(opts.Name), limits(q), text.Usage(q.UsedBytes, q.MaxBytes, q.UsedVersions, q.MaxVersions))
	return err
}

// limits says in words what the quota allows: "at most 10 GiB and 500
// versions", "at most 10 GiB, any number of versions", "no limits".
func limits(q *client.Quota) string {
	switch {
	case q.MaxBytes == nil && q.MaxVersions == nil:
		return "no limits"
	case q.MaxVersions == nil:
		return "at most " + text.HumanBytes(*q.MaxBytes) + ", any number of versions"
	case q.MaxBytes == nil:
		return "at most " + versions(*q.MaxVersions) + ", any size"
	}
	return "at most " + text.HumanBytes(*q.MaxBytes) + " and " + versions(*q.MaxVersions)
}

func versions(n int64) string {
	if n == 1 {
		return "1 version"
	}
	return strconv.FormatInt(n, 10) + " versions"
}
