// Package create implements `chartctl repo create`.
package create

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// Visibilities are the values of --visibility, most restricted first.
var Visibilities = []string{client.VisibilityPrivate, client.VisibilityInternal, client.VisibilityPublic}

// IndexFormats are the values of --index-format.
var IndexFormats = []string{client.IndexFormatJSON, client.IndexFormatYAML}

// CreateOptions are the inputs of `repo create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name         string
	Description  string
	Organization string
	// Visibility is private, internal or public ("": the server's
	// default, private); --public sets it to public.
	Visibility string
	// IndexFormat is json or yaml ("": the server's default).
	IndexFormat string
	Public      bool

	// Mirror, if set, makes the repository a read-only mirror of this
	// upstream Helm repository.
	Mirror              string
	MirrorInterval      string
	MirrorUsername      string
	MirrorPasswordStdin bool

	// Proxy, if set, makes the repository a read-only pull-through cache
	// of this upstream Helm repository (https://…).
	Proxy    string
	ProxyTTL string
	// ProxyRetention is how long a cached version nobody pulls is kept.
	ProxyRetention string
	Include        []string
	Exclude        []string
	// Username and PasswordStdin are the proxy upstream's credential.
	Username      string
	PasswordStdin bool
}

// NewCmdCreate returns the `repo create` command; runF replaces the run
// function in tests.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a chart repository",
		Long: `Create a chart repository. Without --org it belongs to you; with --org it
belongs to that organization (you need the maintainer role there).
--visibility says who reads it: private (the default: its organization's
members and those granted a role), internal (also every signed-in user of
the server) or public (also anonymous Helm clients). --public is short for
--visibility public.

With --mirror the repository is a read-only mirror of an upstream Helm
repository or OCI registry path (oci://HOST/PATH/CHART: every tag of one
chart; oci://HOST/PATH: every chart repository the registry's catalog
lists under PATH; registries without a catalog, such as GHCR, take the
first form): the server copies every chart version the upstream lists, at
once and then every --mirror-interval (a duration such as 30m, 12h or 7d;
at least 5m), and refuses uploads and deletes. Give the upstream's
credential with --mirror-username and --mirror-password-stdin; the server
stores the password encrypted and never shows it. See its state with
` + "`chartctl repo view`" + ` and sync it at once with ` + "`chartctl repo sync`" + `.

With --proxy the repository is a read-only pull-through cache of an
upstream: an https Helm repository (http only for hosts the server's
--plain-http-upstreams lists), or an OCI registry's oci://HOST/PATH whose
charts are at HOST/PATH/<chart>. A chart version is
fetched from the upstream the first time someone pulls it, then served
from this server; the upstream's index (for an OCI upstream, a pulled tag,
with one HEAD request) is revalidated after --proxy-ttl (default 10m). A
cached version nobody pulls for --proxy-retention (default 30d) is dropped,
and fetched again when next asked for. --include and --exclude (repeatable globs on
chart names) choose what is proxied. Give the upstream's credential with
--username and --password-stdin. See hits, misses and the upstream's
health with ` + "`chartctl repo view`" + `; drop what is cached with
` + "`chartctl repo cache purge`" + `.`,
		Example: `  chartctl repo create stable --description "Stable charts"
  chartctl repo create platform --org acme --public
  chartctl repo create shared --org acme --visibility internal
  chartctl repo create bitnami --mirror https://charts.bitnami.com/bitnami --mirror-interval 6h --public
  echo "$PASS" | chartctl repo create vendor --mirror https://charts.vendor.example --mirror-username robot --mirror-password-stdin
  chartctl repo create podinfo --mirror oci://ghcr.io/stefanprodan/charts/podinfo --public
  chartctl repo create ingress --proxy https://kubernetes.github.io/ingress-nginx --public
  chartctl repo create jetstack --proxy https://charts.jetstack.io --proxy-ttl 1h --include 'cert-manager*'
  chartctl repo create ghcr-cache --proxy oci://ghcr.io/acme/charts --public
  chartctl repo create ingress-airgap --proxy https://kubernetes.github.io/ingress-nginx --proxy-retention 365d
  echo "$PASS" | chartctl repo create vendor-cache --proxy https://charts.vendor.example --username robot --password-stdin`,
		Args: cmdutil.ExactArgs(1, "a repository name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if opts.Public && opts.Visibility != "" {
				return cmdutil.FlagErrorf("--public and --visibility go one at a time: --public is --visibility public")
			}
			if opts.IndexFormat != "" && !slices.Contains(IndexFormats, opts.IndexFormat) {
				return cmdutil.FlagErrorf("invalid --index-format %q: want %s", opts.IndexFormat, strings.Join(IndexFormats, ", "))
			}
			if opts.Visibility != "" && !slices.Contains(Visibilities, opts.Visibility) {
				return cmdutil.FlagErrorf("invalid --visibility %q: want %s", opts.Visibility, strings.Join(Visibilities, ", "))
			}
			if opts.Public {
				opts.Visibility = client.VisibilityPublic
			}
			if opts.Mirror == "" && (cmd.Flags().Changed("mirror-interval") || opts.MirrorUsername != "" || opts.MirrorPasswordStdin) {
				return cmdutil.FlagErrorf("--mirror-interval, --mirror-username and --mirror-password-stdin go with --mirror URL")
			}
			if opts.Proxy != "" && opts.Mirror != "" {
				return cmdutil.FlagErrorf("--proxy and --mirror go one at a time: a repository is a proxy or a mirror")
			}
			if opts.Proxy == "" && (cmd.Flags().Changed("proxy-ttl") || cmd.Flags().Changed("proxy-retention") || len(opts.Include) > 0 || len(opts.Exclude) > 0 || opts.Username != "" || opts.PasswordStdin) {
				return cmdutil.FlagErrorf("--proxy-ttl, --proxy-retention, --include, --exclude, --username and --password-stdin go with --proxy URL")
			}
			if runF != nil {
				return runF(opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Description, "description", "d", "", "description of the repository")
	cmd.Flags().StringVar(&opts.Organization, "org", "", "organization that owns the repository")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	cmd.Flags().StringVar(&opts.Visibility, "visibility", "", "who reads the repository: "+strings.Join(Visibilities, ", ")+" (default private)")
	_ = cmd.RegisterFlagCompletionFunc("visibility", cobra.FixedCompletions(Visibilities, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().StringVar(&opts.IndexFormat, "index-format", "", "index.yaml format: json (Helm 3.13+ loads it faster; every Helm reads it) or yaml (default: the server's, json unless set)")
	_ = cmd.RegisterFlagCompletionFunc("index-format", cobra.FixedCompletions(IndexFormats, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().BoolVar(&opts.Public, "public", false, "make the repository readable by everyone (--visibility public)")
	cmd.Flags().StringVar(&opts.Mirror, "mirror", "", "make the repository a read-only mirror of this upstream Helm repository URL or oci://HOST/PATH")
	cmd.Flags().StringVar(&opts.MirrorInterval, "mirror-interval", "1h", "time between syncs of the mirror, e.g. 30m, 12h or 7d (at least 5m)")
	cmd.Flags().StringVar(&opts.MirrorUsername, "mirror-username", "", "user name for the upstream (basic auth)")
	cmd.Flags().BoolVar(&opts.MirrorPasswordStdin, "mirror-password-stdin", false, "read the upstream's password from standard input")
	cmd.Flags().StringVar(&opts.Proxy, "proxy", "", "make the repository a read-only pull-through cache of this upstream Helm repository (https://…) or OCI registry (oci://HOST/PATH)")
	cmd.Flags().StringVar(&opts.ProxyTTL, "proxy-ttl", "10m", "how long the proxy serves a fetched index before revalidating it with the upstream (at least 1s)")
	cmd.Flags().StringVar(&opts.ProxyRetention, "proxy-retention", "30d", "how long the proxy keeps a cached version nobody pulls before dropping it, e.g. 30d or 72h (1h to 3650d)")
	cmd.Flags().StringArrayVar(&opts.Include, "include", nil, "proxy only charts whose name matches this glob (repeatable)")
	cmd.Flags().StringArrayVar(&opts.Exclude, "exclude", nil, "never proxy charts whose name matches this glob (repeatable)")
	cmd.Flags().StringVar(&opts.Username, "username", "", "user name for the proxy's upstream")
	cmd.Flags().BoolVar(&opts.PasswordStdin, "password-stdin", false, "read the proxy upstream's password from standard input")
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	req := &client.CreateRepositoryRequest{
		Name:         opts.Name,
		Description:  opts.Description,
		Organization: opts.Organization,
		Visibility:   opts.Visibility,
		IndexFormat:  opts.IndexFormat,
	}
	if opts.Mirror != "" {
		m := &client.MirrorRequest{URL: &opts.Mirror, Interval: &opts.MirrorInterval}
		if opts.MirrorUsername != "" {
			m.Username = &opts.MirrorUsername
		}
		if opts.MirrorPasswordStdin {
			pw, err := cmdutil.ReadStdinSecret(opts.IO.In, "--mirror-password-stdin")
			if err != nil {
				return err
			}
			m.Password = &pw
		}
		req.Mirror = m
	}
	if opts.Proxy != "" {
		p := &client.ProxyRequest{URL: &opts.Proxy, TTL: &opts.ProxyTTL, Retention: &opts.ProxyRetention}
		if len(opts.Include) > 0 {
			p.Include = &opts.Include
		}
		if len(opts.Exclude) > 0 {
			p.Exclude = &opts.Exclude
		}
		if opts.Username != "" {
			p.Username = &opts.Username
		}
		if opts.PasswordStdin {
			pw, err := cmdutil.ReadStdinSecret(opts.IO.In, "--password-stdin")
			if err != nil {
				return err
			}
			p.Password = &pw
		}
		req.Proxy = p
	}
	repo, _, err := c.Repositories.Create(ctx, req)
	if err != nil {
		return fmt.Errorf("create repository %s: %w", opts.Name, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, repo)
	}
	cs := opts.IO.ColorScheme()
	owner := "you"
	if repo.Organization != nil {
		owner = *repo.Organization
	}
	if repo.Mirror != nil {
		_, err = fmt.Fprintf(opts.IO.Out, "%s Created %s repository %s (owner: %s), a mirror of %s synced every %s; the first sync has started\n",
			cs.SuccessIcon(), termtext.Line(repo.Visibility), cs.Bold(termtext.Line(repo.Name)), termtext.Line(owner),
			termtext.Line(repo.Mirror.URL), termtext.Line(repo.Mirror.Interval))
		return err
	}
	if repo.Proxy != nil {
		// An OCI upstream has no index: each pulled tag is revalidated.
		what := "index"
		if strings.HasPrefix(repo.Proxy.URL, "oci://") {
			what = "tags"
		}
		_, err = fmt.Fprintf(opts.IO.Out, "%s Created %s repository %s (owner: %s), a proxy of %s (%s revalidated after %s); charts are fetched when first pulled\n",
			cs.SuccessIcon(), termtext.Line(repo.Visibility), cs.Bold(termtext.Line(repo.Name)), termtext.Line(owner),
			termtext.Line(repo.Proxy.URL), what, termtext.Line(repo.Proxy.TTL))
		return err
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Created %s repository %s (owner: %s)\n",
		cs.SuccessIcon(), termtext.Line(repo.Visibility), cs.Bold(termtext.Line(repo.Name)), termtext.Line(owner))
	return err
}
