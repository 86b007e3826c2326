// Package importcmd implements `chartctl import`.
package importcmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/importer"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// ImportOptions are the inputs of `import`.
type ImportOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Source        string
	Repo          string
	Username      string
	PasswordStdin bool
	SourceToken   string
	PlainHTTP     bool
	NoKeepCreated bool
	// IndexMaxSize bounds a Helm repository source's index.yaml.
	IndexMaxSize int64
}

// NewCmdImport returns the `import` command.
func NewCmdImport(f *cmdutil.Factory, runF func(*ImportOptions) error) *cobra.Command {
	opts := &ImportOptions{IO: f.IOStreams, Client: f.Client}
	var indexMaxSize string
	cmd := &cobra.Command{
		Use:   "import SOURCE --repo REPO",
		Short: "Copy every chart version of another repository into a repository",
		Long: `Copy every chart version of SOURCE into REPO through the API. SOURCE is

  https://… or http://…   a Helm repository (its index.yaml; chart URLs may be
                          relative or absolute)
  DIR                     a ChartMuseum storage directory (*.tgz, *.tgz.prov)
  oci://HOST/PATH         an OCI registry: one chart's repository, or a path
                          whose child repositories are charts

Versions REPO already holds are skipped, so running the import again copies
only what is new, and an interrupted import picks up where it stopped.
Provenance files come along. With a server admin's credential (the admin
scope) each version keeps its created time from the source; otherwise it is
stamped with the time of the import, and the summary says so.

The source's credential (--username with --password-stdin, or
--source-token) is sent only to the source's own host. A Helm repository's
index.yaml larger than --index-max-size is refused.`,
		Example: `  chartctl import https://charts.example.com --repo stable
  chartctl import /var/lib/chartmuseum --repo stable
  echo "$PASS" | chartctl import https://harbor.example.com/chartrepo/lib --repo lib --username robot --password-stdin
  chartctl import oci://ghcr.io/acme/charts --repo acme --source-token "$GHCR_TOKEN"`,
		Args: cmdutil.ExactArgs(1, "a source to import from is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Source = args[0]
			opts.JSON = f.WantsJSON()
			if opts.Repo == "" {
				return cmdutil.FlagErrorf("--repo is required")
			}
			if opts.PasswordStdin && opts.Username == "" {
				return cmdutil.FlagErrorf("--password-stdin needs --username")
			}
			if opts.SourceToken != "" && opts.Username != "" {
				return cmdutil.FlagErrorf("give either --username/--password-stdin or --source-token, not both")
			}
			n, err := text.ParseBytes(indexMaxSize)
			if err != nil || n == 0 {
				return cmdutil.FlagErrorf("invalid --index-max-size %q: use a size such as 64MiB or 512MiB", indexMaxSize)
			}
			opts.IndexMaxSize = n
			if runF != nil {
				return runF(opts)
			}
			return importRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Repo, "repo", "r", "", "repository to import into (required)")
	fl.StringVar(&opts.Username, "username", "", "user name for the source (basic auth)")
	fl.BoolVar(&opts.PasswordStdin, "password-stdin", false, "read the source's password from standard input")
	fl.StringVar(&opts.SourceToken, "source-token", "", "bearer token for the source")
	fl.BoolVar(&opts.PlainHTTP, "plain-http", false, "talk plain HTTP to an oci:// source")
	fl.BoolVar(&opts.NoKeepCreated, "no-keep-created", false, "stamp versions with the import time instead of the source's created time")
	fl.StringVar(&indexMaxSize, "index-max-size", text.ExactBytes(importer.DefaultMaxIndexSize), "largest index.yaml of a Helm repository source read (e.g. 256MiB)")
	_ = cmd.RegisterFlagCompletionFunc("repo", cmdutil.CompleteRepositories(f))
	return cmd
}

func importRun(ctx context.Context, opts *ImportOptions) error {
	auth := importer.Auth{Username: opts.Username, Token: opts.SourceToken}
	if opts.PasswordStdin {
		pw, err := cmdutil.ReadStdinSecret(opts.IO.In, "--password-stdin")
		if err != nil {
			return err
		}
		auth.Password = pw
	}
	src, err := importer.OpenSource(opts.Source, importer.SourceOptions{Auth: auth, PlainHTTP: opts.PlainHTTP, MaxIndexSize: opts.IndexMaxSize})
	if err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	im := &importer.Importer{Client: c, Repo: opts.Repo, KeepCreated: !opts.NoKeepCreated}
	var line *progressLine
	if opts.IO.IsStderrTTY() {
		line = &progressLine{w: opts.IO.ErrOut}
		im.Progress = line.update
	}
	res, err := im.Run(ctx, src)
	if line != nil {
		line.done()
	}
	if err != nil && res == nil {
		return err
	}
	if perr := printResult(opts, res); perr != nil {
		return perr
	}
	if err != nil {
		return fmt.Errorf("import stopped: %w (run the same command again to resume)", err)
	}
	if len(res.Failed) > 0 {
		return cmdutil.ErrSilent
	}
	return nil
}

// summary is the JSON form of a result.
type summary struct {
	Source string `json:"source"`
	Repo   string `json:"repository"`
	Counts struct {
		Imported int `json:"imported"`
		Skipped  int `json:"skipped"`
		Failed   int `json:"failed"`
	} `json:"counts"`
	*importer.Result
}

func printResult(opts *ImportOptions, res *importer.Result) error {
	if opts.JSON {
		s := summary{Source: opts.Source, Repo: opts.Repo, Result: res}
		s.Counts.Imported, s.Counts.Skipped, s.Counts.Failed = len(res.Imported), len(res.Skipped), len(res.Failed)
		return cmdutil.PrintJSON(opts.IO.Out, s)
	}
	out := opts.IO.Out
	cs := opts.IO.ColorScheme()
	for _, it := range res.Imported {
		fmt.Fprintf(out, "imported\t%s\t%s\n", termtext.Line(it.Name), termtext.Line(it.Version))
	}
	for _, it := range res.Failed {
		fmt.Fprintf(out, "failed\t%s\t%s\t%s\n", termtext.Line(it.Name), termtext.Line(it.Version), termtext.Line(it.Reason))
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(opts.IO.ErrOut, "%s %s\n", cs.WarningIcon(), w)
	}
	icon := cs.SuccessIcon()
	if len(res.Failed) > 0 {
		icon = cs.Red("X")
	}
	_, err := fmt.Fprintf(opts.IO.ErrOut, "%s Imported %d, skipped %d (already present), failed %d into %s\n",
		icon, len(res.Imported), len(res.Skipped), len(res.Failed), termtext.Line(opts.Repo))
	return err
}

// progressLine shows the version being imported on one terminal line.
type progressLine struct {
	w     io.Writer
	drawn bool
}

func (p *progressLine) update(ev importer.Event) {
	if ev.State != importer.StateImporting {
		return
	}
	p.drawn = true
	fmt.Fprintf(p.w, "\r\x1b[KImporting [%d/%d] %s %s", ev.N, ev.Total, termtext.Line(ev.Item.Name), termtext.Line(ev.Item.Version))
}

func (p *progressLine) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
