// Package create implements `chartctl replication create`.
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

// Ops are the operations a replication can copy.
var Ops = []string{"push", "delete"}

// CreateOptions are the inputs of `replication create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name          string
	From, To      string
	Filter        *client.ReplicationFilter
	On            []string
	Username      string
	PasswordStdin bool
}

// NewCmdCreate returns the `replication create` command; runF replaces
// the run function in tests.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IOStreams, Client: f.Client}
	var filters []string
	cmd := &cobra.Command{
		Use:   "create NAME --from REPO --to URL [--filter name=GLOB,version=RANGE] [--on push,delete] [--username U --password-stdin]",
		Short: "Replicate a repository to another registry",
		Long: `Create a replication of repository --from to --to, which is an OCI
registry namespace (oci://HOST/PATH: chart web 1.2.0 goes to
HOST/PATH/web:1.2.0) or another chartctl repository
(https://HOST/helm/REPO). Versions pushed from now on are copied; run
` + "`chartctl replication run NAME`" + ` to copy what is already there.

--filter narrows what goes: name=GLOB over chart names, version=RANGE a
SemVer range (name=web-*,version=>=1.0.0). --on lists push (the default)
and delete. The target's credential is --username with the password on
standard input (--password-stdin); it is stored encrypted and never shown.`,
		Example: `  chartctl replication create acme-dr --from acme-charts --to oci://registry.example.com/acme --on push,delete
  echo "$B_KEY" | chartctl replication create to-b --from acme-charts --to https://b.example.com/helm/acme-charts --username replicator --password-stdin
  chartctl replication create web-only --from acme-charts --to oci://ghcr.io/acme/charts --filter 'name=web-*,version=>=1.0.0'`,
		Args: cmdutil.ExactArgs(1, "a replication name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if opts.From == "" {
				return cmdutil.FlagErrorf("--from is required: the repository to replicate")
			}
			if opts.To == "" {
				return cmdutil.FlagErrorf("--to is required: oci://HOST/PATH or a chartctl https://HOST/helm/REPO")
			}
			if !strings.HasPrefix(opts.To, "oci://") && !strings.HasPrefix(opts.To, "https://") && !strings.HasPrefix(opts.To, "http://") {
				return cmdutil.FlagErrorf("invalid --to %q: use oci://HOST/PATH for an OCI registry or https://HOST/helm/REPO for another chartctl", opts.To)
			}
			filter, err := ParseFilters(filters)
			if err != nil {
				return err
			}
			opts.Filter = filter
			for _, o := range opts.On {
				if !slices.Contains(Ops, o) {
					return cmdutil.FlagErrorf("invalid --on %q: want push, delete or push,delete", o)
				}
			}
			if opts.PasswordStdin && opts.Username == "" {
				return cmdutil.FlagErrorf("--password-stdin goes with --username: the target's user name")
			}
			if runF != nil {
				return runF(opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.From, "from", "", "repository to replicate (required)")
	cmd.Flags().StringVar(&opts.To, "to", "", "target: oci://HOST/PATH or https://HOST/helm/REPO (required)")
	cmd.Flags().StringArrayVar(&filters, "filter", nil, "what goes: name=GLOB and/or version=RANGE, comma-separated")
	cmd.Flags().StringSliceVar(&opts.On, "on", []string{"push"}, "operations to copy: push, delete (comma-separated)")
	cmd.Flags().StringVar(&opts.Username, "username", "", "user name at the target")
	cmd.Flags().BoolVar(&opts.PasswordStdin, "password-stdin", false, "read the target's password (or API key) from standard input")
	_ = cmd.RegisterFlagCompletionFunc("from", cmdutil.CompleteRepositories(f))
	_ = cmd.RegisterFlagCompletionFunc("on", cobra.FixedCompletions(Ops, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
	_ = cmd.RegisterFlagCompletionFunc("filter", cobra.FixedCompletions([]string{"name=", "version="}, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
	return cmd
}

// ParseFilters reads --filter values: name=GLOB and version=RANGE,
// comma-separated or in separate flags. A SemVer range may hold commas
// itself (">=1.0.0, <2"): a part that starts with no key continues the
// value before it. Returns nil when no filter is given.
func ParseFilters(values []string) (*client.ReplicationFilter, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := &client.ReplicationFilter{}
	var last *string
	for _, v := range values {
		last = nil
		for _, part := range strings.Split(v, ",") {
			key, val, ok := strings.Cut(part, "=")
			key = strings.TrimSpace(key)
			switch {
			case ok && key == "name":
				out.Name, last = strings.TrimSpace(val), &out.Name
			case ok && key == "version":
				out.Version, last = strings.TrimSpace(val), &out.Version
			case last == &out.Version:
				// A comma inside a SemVer range (">=1.0.0, <2").
				out.Version += "," + part
			default:
				return nil, cmdutil.FlagErrorf("invalid --filter %q: use name=GLOB and/or version=RANGE, such as name=web-*,version=>=1.0.0", v)
			}
		}
	}
	if out.Name == "" && out.Version == "" {
		return nil, cmdutil.FlagErrorf("--filter needs a value: name=GLOB and/or version=RANGE")
	}
	return out, nil
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	req := &client.ReplicationRequest{Name: opts.Name, Source: opts.From, Target: opts.To, Username: opts.Username,
		Filter: opts.Filter, On: opts.On}
	if opts.PasswordStdin {
		pw, err := cmdutil.ReadStdinSecret(opts.IO.In, "--password-stdin")
		if err != nil {
			return err
		}
		req.Password = pw
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	r, _, err := c.Replications.Create(ctx, req)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("create replication %s: %w", opts.Name, err), cmdutil.HintRepoList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, r)
	}
	cs := opts.IO.ColorScheme()
	fmt.Fprintf(opts.IO.Out, "%s Created replication %s of %s to %s (%s)\n", cs.SuccessIcon(), cs.Bold(termtext.Line(r.Name)),
		termtext.Line(r.Source), termtext.Line(r.Target), termtext.Line(Describe(r)))
	if opts.IO.IsStdoutTTY() {
		fmt.Fprintf(opts.IO.ErrOut, "To copy the versions %s holds now, run: chartctl replication run %s\n",
			termtext.Line(r.Source), termtext.Line(r.Name))
	}
	return nil
}

// Describe says in a few words what a replication copies: its
// operations and filter ("push,delete of web-* >=1.0.0").
func Describe(r *client.Replication) string {
	s := strings.Join(r.On, ",")
	if r.Filter != nil && r.Filter.Name != "" {
		s += " of " + r.Filter.Name
	} else {
		s += " of every chart"
	}
	if r.Filter != nil && r.Filter.Version != "" {
		s += " " + r.Filter.Version
	}
	return s
}
