// Package view implements `chartctl chart view`.
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

// ViewOptions are the inputs of `chart view`.
type ViewOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name    string
	Repo    string
	Version string
	// Devel lets pre-releases be the latest when no version is given.
	Devel bool
}

// NewCmdView returns the `chart view` command.
func NewCmdView(f *cmdutil.Factory, runF func(*ViewOptions) error) *cobra.Command {
	opts := &ViewOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "view NAME --repo REPO [--version VERSION | --devel]",
		Short: "Show a chart version and how to install it",
		Long: `Show a chart version's metadata and the commands that install it, both
from the classic Helm repository (helm repo add) and from the OCI registry
(oci://). Without --version the latest version is shown: the newest stable
one, as Helm picks it; --devel lets pre-releases (2.0.0-rc.1) count. A
chart with only pre-releases has no latest without --devel. --version
accepts any spelling of the same SemVer version (v1.0.0 finds 1.0.0).

The verdicts come first: "Signed by …, verified", "Not signed" or
"Signature not verified (reason)", and the admission policy's findings:
warnings kept at push, and the rules a version stored before a policy
change no longer meets (noncompliant versions stay installable).`,
		Example: `  chartctl chart view nginx --repo stable
  chartctl chart view nginx --repo stable --version 1.2.3 -o json
  chartctl chart view nginx --repo stable --devel`,
		Args: cmdutil.ExactArgs(1, "a chart name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if opts.Repo == "" {
				return cmdutil.FlagErrorf("--repo is required")
			}
			if runF != nil {
				return runF(opts)
			}
			return viewRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Repo, "repo", "r", "", "repository (required)")
	cmd.Flags().StringVar(&opts.Version, "version", "", "version to show, SemVer-equal accepted (v1.0.0 for 1.0.0; default: the latest stable)")
	cmd.Flags().BoolVar(&opts.Devel, "devel", false, "with no --version, take pre-releases too (2.0.0-rc.1), as helm --devel does")
	_ = cmd.RegisterFlagCompletionFunc("repo", cmdutil.CompleteRepositories(f))
	return cmd
}

// viewed is what `chart view -o json` prints: the version and its install
// lines.
type viewed struct {
	*client.Chart
	Repository string              `json:"repository"`
	Install    client.InstallLines `json:"install"`
}

func viewRun(ctx context.Context, opts *ViewOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	repo, _, err := c.Repositories.Get(ctx, opts.Repo)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("view repository %s: %w", opts.Repo, err), cmdutil.HintRepoList)
	}
	version, err := cmdutil.ResolveVersion(ctx, c, opts.Repo, opts.Name, opts.Version, opts.Devel)
	if err != nil {
		return err
	}
	ch, _, err := c.Charts.Get(ctx, opts.Repo, opts.Name, version)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("view %s %s: %w", opts.Name, version, err), cmdutil.HintChartList(opts.Repo))
	}
	lines := client.Install(c.BaseURL.String(), repo.Name, ch.Name, ch.Version, repo.Visibility != "public")
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, viewed{Chart: ch, Repository: repo.Name, Install: lines})
	}
	cs := opts.IO.ColorScheme()
	w := opts.IO.Out
	fmt.Fprintf(w, "%s %s\n", cs.Bold(termtext.Line(ch.Name)), termtext.Line(ch.Version))
	if ch.Description != "" {
		fmt.Fprintf(w, "%s\n", termtext.Sanitize(ch.Description))
	}
	fmt.Fprintln(w)
	field := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-13s %s\n", k+":", termtext.Line(v))
		}
	}
	field("repository", repo.Name)
	field("app version", ch.AppVersion)
	field("digest", ch.Digest)
	if ch.Size > 0 {
		field("size", fmt.Sprintf("%d bytes", ch.Size))
	}
	field("created", ch.CreatedAt.UTC().Format("2006-01-02 15:04:05 MST"))
	field("home", ch.Home)
	if len(ch.Keywords) > 0 {
		field("keywords", strings.Join(ch.Keywords, ", "))
	}
	for i, m := range ch.Maintainers {
		k := ""
		if i == 0 {
			k = "maintainers"
		}
		v := m.Name
		if m.Email != "" {
			v += " <" + m.Email + ">"
		}
		if k == "" {
			fmt.Fprintf(w, "%-13s %s\n", "", termtext.Line(v))
		} else {
			field(k, v)
		}
	}
	switch {
	case len(ch.Images) > 0:
		label := "images:"
		for _, im := range ch.Images {
			fmt.Fprintf(w, "%-13s %s\n", label, termtext.Line(im))
			label = ""
		}
	case ch.ImagesSource == "unrenderable":
		field("images", "not known: the chart cannot be rendered with its default values: "+ch.ImagesError)
	case ch.ImagesError != "":
		field("images", ch.ImagesError)
	case ch.ImagesSource == "pending":
		field("images", "not known yet (the server finds them by rendering the chart, shortly after the push)")
	case ch.ImagesSource == "rendered":
		field("images", "none (the chart's templates render no pod with its default values)")
	}
	// The verdicts: whether the archive's signer is known, and whether
	// the version meets its repository's admission policy now.
	if ch.Verification != nil {
		field("signature", ch.Verification.Summary())
	}
	if ch.Policy != nil {
		field("policy", ch.Policy.Summary())
		if len(ch.Policy.Findings) > 0 {
			fmt.Fprintln(w)
			t := text.NewTable(w, opts.IO.IsStdoutTTY(), opts.IO.TerminalWidth())
			t.Header("SEVERITY", "RULE", "FINDING")
			for _, fd := range ch.Policy.Findings {
				t.AddField(fd.Severity)
				t.AddField(fd.Rule)
				t.AddField(termtext.Line(fd.Message))
				t.EndRow()
			}
			if err := t.Render(); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(w, "\n%s\n", cs.Gray("Install from the Helm repository:"))
	fmt.Fprintf(w, "  %s\n  helm repo update\n  %s\n", termtext.Line(lines.RepoAdd), termtext.Line(lines.Install))
	if lines.OCIInstall != "" {
		fmt.Fprintf(w, "\n%s\n", cs.Gray("Install from the OCI registry:"))
		if lines.RegistryLogin != "" {
			fmt.Fprintf(w, "  %s\n", termtext.Line(lines.RegistryLogin))
		}
		fmt.Fprintf(w, "  %s\n", termtext.Line(lines.OCIInstall))
	}
	if lines.ChartRepoAdd != "" {
		fmt.Fprintf(w, "\n%s\n  %s\n", cs.Gray("Or add this chart alone (its own small index):"), termtext.Line(lines.ChartRepoAdd))
	}
	if repo.Visibility != "public" {
		fmt.Fprintf(w, "\n%s\n", cs.Gray(cmdutil.HelmKeyHint))
	}
	return nil
}
