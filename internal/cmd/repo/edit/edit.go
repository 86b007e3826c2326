// Package edit implements `chartctl repo edit`.
package edit

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmd/repo/create"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// EditOptions are the inputs of `repo edit`; nil fields stay as they are.
type EditOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name        string
	Description *string
	Visibility  *string
	IndexFormat *string
	// ProxyTTL and ProxyRetention change a proxy repository's ttl and
	// retention.
	ProxyTTL       *string
	ProxyRetention *string
}

// NewCmdEdit returns the `repo edit` command; runF replaces the run
// function in tests.
func NewCmdEdit(f *cmdutil.Factory, runF func(*EditOptions) error) *cobra.Command {
	opts := &EditOptions{IO: f.IOStreams, Client: f.Client}
	var description, visibility, indexFormat, proxyTTL, proxyRetention string
	cmd := &cobra.Command{
		Use:   "edit NAME [--description D] [--visibility V] [--index-format F] [--proxy-ttl D] [--proxy-retention D]",
		Short: "Change a repository's description, visibility or index format",
		Long: `Change the settings of a repository you maintain; what you do not give
stays as it is. --visibility private keeps the repository to its
organization and those granted a role, internal opens it to every signed-in
user of the server, public also to anonymous Helm clients. An empty
--description "" removes the description. --index-format json serves
index.yaml as JSON, which every Helm reads and Helm 3.13+ loads several
times faster; yaml serves it as Helm itself writes it. On a proxy
repository, --proxy-ttl sets how long a fetched index is served before it
is revalidated, and --proxy-retention how long a cached version nobody
pulls is kept.`,
		Example: `  chartctl repo edit stable --visibility internal
  chartctl repo edit stable --description "Stable charts, reviewed"
  chartctl repo edit stable --index-format json
  chartctl repo edit ingress-nginx --proxy-retention 365d --proxy-ttl 1h`,
		Args:              cmdutil.ExactArgs(1, "a repository name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteRepositories(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if cmd.Flags().Changed("description") {
				opts.Description = &description
			}
			if cmd.Flags().Changed("visibility") {
				if !slices.Contains(create.Visibilities, visibility) {
					return cmdutil.FlagErrorf("invalid --visibility %q: want %s", visibility, strings.Join(create.Visibilities, ", "))
				}
				opts.Visibility = &visibility
			}
			if cmd.Flags().Changed("index-format") {
				if !slices.Contains(create.IndexFormats, indexFormat) {
					return cmdutil.FlagErrorf("invalid --index-format %q: want %s", indexFormat, strings.Join(create.IndexFormats, ", "))
				}
				opts.IndexFormat = &indexFormat
			}
			if cmd.Flags().Changed("proxy-ttl") {
				opts.ProxyTTL = &proxyTTL
			}
			if cmd.Flags().Changed("proxy-retention") {
				opts.ProxyRetention = &proxyRetention
			}
			if opts.Description == nil && opts.Visibility == nil && opts.IndexFormat == nil && opts.ProxyTTL == nil && opts.ProxyRetention == nil {
				return cmdutil.FlagErrorf("nothing to change: give --description, --visibility, --index-format, --proxy-ttl or --proxy-retention")
			}
			if runF != nil {
				return runF(opts)
			}
			return editRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&description, "description", "d", "", "new description (\"\" removes it)")
	cmd.Flags().StringVar(&visibility, "visibility", "", "who reads the repository: "+strings.Join(create.Visibilities, ", "))
	_ = cmd.RegisterFlagCompletionFunc("visibility", cobra.FixedCompletions(create.Visibilities, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().StringVar(&indexFormat, "index-format", "", "index.yaml format: "+strings.Join(create.IndexFormats, " or "))
	_ = cmd.RegisterFlagCompletionFunc("index-format", cobra.FixedCompletions(create.IndexFormats, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().StringVar(&proxyTTL, "proxy-ttl", "", "proxy repositories: how long a fetched index is served before it is revalidated (1s to 7d)")
	cmd.Flags().StringVar(&proxyRetention, "proxy-retention", "", "proxy repositories: how long a cached version nobody pulls is kept, e.g. 30d (1h to 3650d)")
	return cmd
}

func editRun(ctx context.Context, opts *EditOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	req := &client.UpdateRepositoryRequest{Description: opts.Description, Visibility: opts.Visibility, IndexFormat: opts.IndexFormat}
	if opts.ProxyTTL != nil || opts.ProxyRetention != nil {
		req.Proxy = &client.ProxyRequest{TTL: opts.ProxyTTL, Retention: opts.ProxyRetention}
	}
	repo, _, err := c.Repositories.Update(ctx, opts.Name, req)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("edit repository %s: %w", opts.Name, err), cmdutil.HintRepoList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, repo)
	}
	cs := opts.IO.ColorScheme()
	_, err = fmt.Fprintf(opts.IO.Out, "%s Updated %s repository %s\n", cs.SuccessIcon(),
		termtext.Line(repo.Visibility), cs.Bold(termtext.Line(repo.Name)))
	return err
}
