// Package push implements `chartctl chart push`.
package push

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// ProgressThreshold is the archive size from which a progress bar is shown
// on a terminal.
const ProgressThreshold = 1 << 20

// PushOptions are the inputs of `chart push`.
type PushOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Path  string
	Repo  string
	Prov  string
	Force bool
}

// NewCmdPush returns the `chart push` command.
func NewCmdPush(f *cmdutil.Factory, runF func(*PushOptions) error) *cobra.Command {
	opts := &PushOptions{IO: f.IOStreams, Client: func() (*client.Client, error) {
		// In CI with no credential configured, a job's OIDC token is
		// exchanged for a robot's (trusted publishing).
		return f.ClientOrOIDC(context.Background())
	}}
	cmd := &cobra.Command{
		Use:   "push PATH --repo REPO",
		Short: "Upload a chart archive or chart directory",
		Long: `Upload a chart to a repository. PATH is a packaged chart (.tgz) or a chart
directory, which is packaged first exactly as 'helm package' does (files
matched by .helmignore are left out).

Pushing the same archive again succeeds, so a CI job may push blindly; the
same version with different content is refused unless --force is given and
the server allows overwrites.

In CI with no credential configured (no --token, CHARTCTL_TOKEN or login),
the job's OIDC ID token (CHARTCTL_OIDC_TOKEN, or GitHub Actions' with
"permissions: id-token: write") is exchanged for a short-lived credential of
the robot whose trusted publisher accepts it, so the pipeline holds no
secret (docs/ci.md). CHARTCTL_OIDC_ROBOT=ORG/NAME picks the robot when
several match; CHARTCTL_OIDC_AUDIENCE sets the audience asked of GitHub.`,
		Example: `  chartctl chart push ./mychart --repo stable
  chartctl chart push mychart-1.2.3.tgz --repo stable`,
		Args: cmdutil.ExactArgs(1, "a chart archive or directory is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			opts.JSON = f.WantsJSON()
			if opts.Repo == "" {
				return cmdutil.FlagErrorf("--repo is required")
			}
			if runF != nil {
				return runF(opts)
			}
			return pushRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Repo, "repo", "r", "", "repository to push to (required)")
	cmd.Flags().StringVar(&opts.Prov, "prov", "", "provenance file to upload with the chart")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace a stored version with different content (the server must allow it)")
	_ = cmd.RegisterFlagCompletionFunc("repo", cmdutil.CompleteRepositories(f))
	return cmd
}

func pushRun(ctx context.Context, opts *PushOptions) error {
	archive, cleanup, err := archivePath(opts.Path)
	if err != nil {
		return err
	}
	defer cleanup()
	c, err := opts.Client()
	if err != nil {
		return err
	}
	file, err := os.Open(archive)
	if err != nil {
		return fmt.Errorf("open chart: %w", err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return fmt.Errorf("open chart: %w", err)
	}
	uo := &client.UploadOptions{Force: opts.Force, Size: fi.Size(), Filename: filepath.Base(archive)}
	if opts.Prov != "" {
		prov, err := os.Open(opts.Prov)
		if err != nil {
			return fmt.Errorf("open provenance file: %w", err)
		}
		defer prov.Close()
		uo.Prov = prov
	}
	var bar *progressBar
	if opts.IO.IsStderrTTY() && fi.Size() >= ProgressThreshold {
		bar = &progressBar{w: opts.IO.ErrOut, width: 30}
		uo.Progress = bar.update
	}
	res, _, err := c.Charts.Upload(ctx, opts.Repo, file, uo)
	if bar != nil {
		bar.done()
	}
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("push %s to %s: %w", filepath.Base(archive), opts.Repo, err), cmdutil.HintRepoList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, res)
	}
	if opts.IO.IsStdoutTTY() {
		cs := opts.IO.ColorScheme()
		_, err = fmt.Fprintf(opts.IO.Out, "%s Pushed %s %s to %s\n  digest: %s\n", cs.SuccessIcon(),
			cs.Bold(termtext.Line(res.Name)), termtext.Line(res.Version), termtext.Line(opts.Repo), termtext.Line(res.Digest))
		return err
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s\t%s\t%s\n", termtext.Line(res.Name), termtext.Line(res.Version), termtext.Line(res.Digest))
	return err
}

// archivePath returns the archive to upload: path itself when it is a
// file, else the chart directory packaged into a temporary directory with
// chart.Package, which honours .helmignore with Helm's own rules.
func archivePath(path string) (string, func(), error) {
	nop := func() {}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nop, fmt.Errorf("no chart at %s: there is no such file or directory", path)
	}
	if err != nil {
		return "", nop, fmt.Errorf("open chart: %w", err)
	}
	if !fi.IsDir() {
		if !strings.HasSuffix(path, ".tgz") && !strings.HasSuffix(path, ".tar.gz") {
			return "", nop, cmdutil.FlagErrorf("%s is neither a chart directory nor a .tgz archive", path)
		}
		return path, nop, nil
	}
	tmp, err := os.MkdirTemp("", "chartctl-push-")
	if err != nil {
		return "", nop, fmt.Errorf("package chart: %w", err)
	}
	cleanup := func() { os.RemoveAll(tmp) }
	out, err := chart.Package(path, tmp, chart.DefaultLimits())
	if err != nil {
		cleanup()
		return "", nop, err
	}
	return out, cleanup, nil
}

// progressBar draws upload progress on one terminal line.
type progressBar struct {
	w     io.Writer
	width int
	drawn bool
	last  int
}

func (p *progressBar) update(sent, total int64) {
	if total <= 0 {
		return
	}
	pct := int(sent * 100 / total)
	if p.drawn && pct == p.last {
		return
	}
	p.drawn, p.last = true, pct
	filled := p.width * pct / 100
	// Erase the line before drawing: a shorter line ("1.0 MiB" after
	// "512.0 KiB") would otherwise leave the tail of the previous one.
	fmt.Fprintf(p.w, "\r\x1b[KUploading [%s%s] %3d%% %s / %s", strings.Repeat("=", filled), strings.Repeat(" ", p.width-filled), pct, humanBytes(sent), humanBytes(total))
}

func (p *progressBar) done() {
	if p.drawn {
		// Clear the line so what follows starts clean.
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// ArchivePath returns the archive a chart path stands for, as push sends
// it (a chart directory is packaged into a temporary directory that
// cleanup removes); `chart check` shares it.
func ArchivePath(path string) (archive string, cleanup func(), err error) {
	return archivePath(path)
}
