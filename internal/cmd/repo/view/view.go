// Package view implements `chartctl repo view`.
package view

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// ViewOptions are the inputs of `repo view`.
type ViewOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name string
}

// NewCmdView returns the `repo view` command.
func NewCmdView(f *cmdutil.Factory, runF func(*ViewOptions) error) *cobra.Command {
	opts := &ViewOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "view NAME",
		Short: "Show a repository and how to use it with Helm",
		Example: `  chartctl repo view stable
  chartctl repo view stable -o json`,
		Args:              cmdutil.ExactArgs(1, "a repository name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteRepositories(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return viewRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func viewRun(ctx context.Context, opts *ViewOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	repo, _, err := c.Repositories.Get(ctx, opts.Name)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("view repository %s: %w", opts.Name, err), cmdutil.HintRepoList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, repo)
	}
	org := ""
	if repo.Organization != nil {
		org = *repo.Organization
	}
	helmURL := strings.TrimSuffix(c.BaseURL.String(), "/") + "/helm/" + repo.Name
	cs := opts.IO.ColorScheme()
	w := opts.IO.Out
	fmt.Fprintf(w, "%s\n", cs.Bold(termtext.Line(repo.Name)))
	if repo.Description != "" {
		fmt.Fprintf(w, "%s\n", termtext.Sanitize(repo.Description))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "id:           %s\n", termtext.Line(repo.ID))
	fmt.Fprintf(w, "visibility:   %s\n", termtext.Line(repo.Visibility))
	fmt.Fprintf(w, "index format: %s\n", termtext.Line(repo.IndexFormat))
	fmt.Fprintf(w, "organization: %s\n", termtext.Line(org))
	fmt.Fprintf(w, "created:      %s\n", repo.CreatedAt.UTC().Format("2006-01-02 15:04:05 MST"))
	fmt.Fprintf(w, "helm url:     %s\n", termtext.Line(helmURL))
	fmt.Fprintf(w, "oci url:      oci://%s/%s\n", termtext.Line(c.BaseURL.Host+strings.TrimRight(c.BaseURL.Path, "/")), termtext.Line(repo.Name))
	if repo.Proxy != nil {
		// Usage is counted for quotas, and a proxy's cache has none: the
		// stored records say 0 whatever is cached (retention bounds it).
		fmt.Fprintf(w, "usage:        not counted (a proxy's cache is bounded by its retention, not a quota)\n")
	} else if q, _, err := c.Repositories.Quota(ctx, repo.Name); err == nil {
		fmt.Fprintf(w, "usage:        %s\n", quotaLine(q))
	}
	if m := repo.Mirror; m != nil {
		fmt.Fprintf(w, "mirror of:    %s (every %s%s)\n", termtext.Line(m.URL), termtext.Line(m.Interval), userPart(m.Username))
		last := "never"
		if m.LastSyncAt != nil {
			last = m.LastSyncAt.UTC().Format("2006-01-02 15:04:05 MST")
		}
		status := m.Status
		switch m.Status {
		case client.MirrorStatusOK:
			status = cs.Green(status)
		case client.MirrorStatusError:
			status = cs.Red(status)
		}
		fmt.Fprintf(w, "sync status:  %s\n", status)
		fmt.Fprintf(w, "last sync:    %s\n", last)
		if m.Error != "" {
			fmt.Fprintf(w, "sync error:   %s\n", termtext.Line(m.Error))
		}
	}
	if p := repo.Proxy; p != nil {
		fmt.Fprintf(w, "proxy of:     %s (ttl %s%s)\n", termtext.Line(p.URL), termtext.Line(p.TTL), userPart(p.Username))
		if p.Retention != "" {
			fmt.Fprintf(w, "retention:    cached versions not pulled for %s are dropped\n", termtext.Line(p.Retention))
		}
		if len(p.Include) > 0 || len(p.Exclude) > 0 {
			fmt.Fprintf(w, "charts:       include %s; exclude %s\n", globs(p.Include, "all"), globs(p.Exclude, "none"))
		}
		fmt.Fprintf(w, "cache:        %d hits, %d misses\n", p.Hits, p.Misses)
		status := p.UpstreamStatus
		switch status {
		case client.ProxyUpstreamOK:
			status = cs.Green(status)
		case client.ProxyUpstreamUnreachable:
			status = cs.Red(status)
		}
		if p.CheckedAt != nil {
			status += " (" + p.CheckedAt.UTC().Format("2006-01-02 15:04:05 MST") + ")"
		}
		fmt.Fprintf(w, "upstream:     %s\n", status)
		if p.UpstreamError != "" {
			fmt.Fprintf(w, "upstream err: %s\n", termtext.Line(p.UpstreamError))
		}
	}
	if opts.IO.IsStdoutTTY() {
		// A public repository needs no credential; a private one an API
		// key (not the CLI's own token, which may be an hour-long OAuth
		// token, or unset after `chartctl login`).
		add := "helm repo add " + termtext.Line(repo.Name) + " " + termtext.Line(helmURL)
		if repo.Visibility != "public" {
			add += ` --username x --password "$KEY"`
		}
		fmt.Fprintf(w, "\n%s\n  %s\n", cs.Gray("Use it with Helm:"), add)
		if repo.Visibility != "public" {
			fmt.Fprintf(w, "\n%s\n", cs.Gray(cmdutil.HelmKeyHint))
		}
	}
	return nil
}

func userPart(u string) string {
	if u == "" {
		return ""
	}
	return ", as " + termtext.Line(u)
}

// quotaLine describes usage against the quota: "1.2 MiB of 10 MiB, 3
// versions (no limit)".
func quotaLine(q *client.Quota) string {
	line := text.Usage(q.UsedBytes, q.MaxBytes, q.UsedVersions, q.MaxVersions)
	if q.MaxBytes == nil && q.MaxVersions == nil {
		return line + " (no quota)"
	}
	return line
}

// globs lists patterns for the proxy's line, none given as def.
func globs(g []string, def string) string {
	if len(g) == 0 {
		return def
	}
	return termtext.Line(strings.Join(g, ", "))
}
