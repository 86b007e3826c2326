// Package create implements `chartctl api-key create`.
package create

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// Scopes are the scopes an API key can carry.
var Scopes = []string{"repo:read", "repo:write", "team:read", "team:write", "org:read", "org:write", "keys:write", "admin"}

// LoginScopes are what `chartctl login` asks for unless --scopes says
// otherwise: every scope but admin (CONTRACT §13), so that `chartctl
// api-key create` works after a login and admin is asked for explicitly.
var LoginScopes = []string{"repo:read", "repo:write", "team:read", "team:write", "org:read", "org:write", "keys:write"}

// CreateOptions are the inputs of `api-key create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool
	Now    func() time.Time

	Name   string
	Scopes []string
	// Repositories, when set, limits the key to the repositories these
	// names or patterns match, on top of its scopes.
	Repositories []string
	// Expires is the --expires value, resolved against Now when the key is
	// created ("": never expires).
	Expires string
}

// NewCmdCreate returns the `api-key create` command.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IOStreams, Client: f.Client, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "create --name NAME --scopes SCOPE,...",
		Short: "Create an API key and print its value once",
		Long: `Create an API key with the given scopes (repo:read, repo:write,
team:read, team:write, org:read, org:write). Its value is printed this
once: store it now, e.g. as a CI secret named CHARTCTL_TOKEN.

--repo limits the key to repositories, by name or pattern ('acme-*';
repeat the flag for more): it reaches nothing else, whatever its scopes.
--expires takes a duration (90d, 2w, 12h) or a date (2027-01-31).`,
		Example: `  chartctl api-key create --name ci --scopes repo:read,repo:write --expires 90d
  chartctl api-key create --name deploy --scopes repo:read --repo acme-charts --repo 'web-*'`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.WantsJSON()
			if opts.Name == "" {
				return cmdutil.FlagErrorf("--name is required")
			}
			if len(opts.Scopes) == 0 {
				return cmdutil.FlagErrorf("--scopes is required (e.g. --scopes repo:read,repo:write)")
			}
			if opts.Expires != "" {
				if _, err := ParseExpiry(time.Now(), opts.Expires); err != nil {
					return cmdutil.FlagErrorf("invalid --expires: %s", err)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "name of the key, to recognize it later (required)")
	cmd.Flags().StringSliceVar(&opts.Scopes, "scopes", nil, "comma-separated scopes (required)")
	cmd.Flags().StringArrayVar(&opts.Repositories, "repo", nil, "limit the key to this repository name or pattern, such as 'acme-*' (repeatable)")
	_ = cmd.RegisterFlagCompletionFunc("repo", cmdutil.CompleteRepositories(f))
	cmd.Flags().StringVar(&opts.Expires, "expires", "", "expiry: a duration such as 90d or a date such as 2027-01-31 (default: never)")
	_ = cmd.RegisterFlagCompletionFunc("scopes", cobra.FixedCompletions(Scopes, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
	return cmd
}

// ParseExpiry turns an --expires value into an instant: a number of days
// ("90d"), weeks ("2w"), a Go duration ("36h"), a date ("2027-01-31",
// midnight UTC) or an RFC 3339 time. It must lie in the future.
func ParseExpiry(now time.Time, s string) (time.Time, error) {
	var at time.Time
	switch {
	case strings.HasSuffix(s, "d") || strings.HasSuffix(s, "w"):
		n, err := strconv.Atoi(s[:len(s)-1])
		if err != nil || n <= 0 {
			return time.Time{}, fmt.Errorf("%q is not a positive number of days or weeks", s)
		}
		days := n
		if strings.HasSuffix(s, "w") {
			days = 7 * n
		}
		at = now.AddDate(0, 0, days)
	default:
		if d, err := time.ParseDuration(s); err == nil {
			at = now.Add(d)
			break
		}
		if t, err := time.Parse("2006-01-02", s); err == nil {
			at = t
			break
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q is neither a duration (90d, 12h) nor a date (2027-01-31)", s)
		}
		at = t
	}
	if !at.After(now) {
		return time.Time{}, fmt.Errorf("%q is not in the future", s)
	}
	return at.UTC().Truncate(time.Second), nil
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	req := &client.CreateAPIKeyRequest{Name: opts.Name, Scopes: opts.Scopes, Repositories: opts.Repositories}
	if opts.Expires != "" {
		at, err := ParseExpiry(opts.Now(), opts.Expires)
		if err != nil {
			return cmdutil.FlagErrorf("invalid --expires: %s", err)
		}
		req.ExpiresAt = &at
	}
	key, _, err := c.APIKeys.Create(ctx, req)
	if err != nil {
		return fmt.Errorf("create API key %s: %w", opts.Name, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, key)
	}
	if !opts.IO.IsStdoutTTY() {
		// Piped with -o table: just the value, for `KEY=$(chartctl ...)`.
		_, err = fmt.Fprintln(opts.IO.Out, termtext.Line(key.Key))
		return err
	}
	cs := opts.IO.ColorScheme()
	expires := "never"
	if key.ExpiresAt != nil {
		expires = key.ExpiresAt.UTC().Format(time.RFC3339)
	}
	limited := ""
	if len(key.Repositories) > 0 {
		limited = ", repositories " + strings.Join(key.Repositories, " ")
	}
	fmt.Fprintf(opts.IO.Out, "%s Created API key %s (id %s, scopes %s%s, expires %s)\n\n",
		cs.SuccessIcon(), cs.Bold(termtext.Line(key.Name)), termtext.Line(key.ID), termtext.Line(strings.Join(key.Scopes, ",")), termtext.Line(limited), expires)
	fmt.Fprintf(opts.IO.Out, "    %s\n\n", termtext.Line(key.Key))
	_, err = fmt.Fprintf(opts.IO.Out, "%s Copy it now: it will not be shown again.\n", cs.WarningIcon())
	return err
}
