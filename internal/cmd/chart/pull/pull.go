// Package pull implements `chartctl chart pull`.
package pull

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// PullOptions are the inputs of `chart pull`.
type PullOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name    string
	Repo    string
	Version string
	// Devel lets pre-releases be the latest when no version is given.
	Devel bool
	Dir   string
}

// NewCmdPull returns the `chart pull` command.
func NewCmdPull(f *cmdutil.Factory, runF func(*PullOptions) error) *cobra.Command {
	opts := &PullOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "pull NAME --repo REPO [--version VERSION | --devel]",
		Short: "Download a chart archive",
		Long: `Download a chart version's archive to NAME-VERSION.tgz in the current
directory (or -d DIR). Without --version the latest version is pulled: the
newest stable one, as 'helm pull' picks it; --devel lets pre-releases
(2.0.0-rc.1) count. --version accepts any spelling of the same SemVer
version (v1.0.0 finds 1.0.0). The archive's digest is checked against the
server's.`,
		Example: `  chartctl chart pull nginx --repo stable
  chartctl chart pull nginx --repo stable --version 1.2.3 -d ./charts`,
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
			return pullRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Repo, "repo", "r", "", "repository (required)")
	cmd.Flags().StringVar(&opts.Version, "version", "", "version to pull, SemVer-equal accepted (v1.0.0 for 1.0.0; default: the latest stable)")
	cmd.Flags().BoolVar(&opts.Devel, "devel", false, "with no --version, take pre-releases too (2.0.0-rc.1), as helm --devel does")
	cmd.Flags().StringVarP(&opts.Dir, "destination", "d", ".", "directory to write the archive to")
	_ = cmd.RegisterFlagCompletionFunc("repo", cmdutil.CompleteRepositories(f))
	return cmd
}

// pulled is what `chart pull -o json` prints.
type pulled struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Digest  string `json:"digest"`
	Path    string `json:"path"`
}

func pullRun(ctx context.Context, opts *PullOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	version, err := cmdutil.ResolveVersion(ctx, c, opts.Repo, opts.Name, opts.Version, opts.Devel)
	if err != nil {
		return err
	}
	if strings.ContainsAny(opts.Name+version, `/\`) || strings.Contains(opts.Name+version, "..") {
		return fmt.Errorf("refusing chart name %q version %q as a file name", opts.Name, version)
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", opts.Dir, err)
	}
	dest := filepath.Join(opts.Dir, opts.Name+"-"+version+".tgz")
	tmp, err := os.CreateTemp(opts.Dir, ".chartctl-pull-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", dest, err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600; the archive is no secret, and
	// `helm pull` writes 0644.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", dest, err)
	}
	h := sha256.New()
	resp, err := c.Charts.Download(ctx, opts.Repo, opts.Name, version, io.MultiWriter(tmp, h))
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("pull %s %s from %s: %w", opts.Name, version, opts.Repo, err), cmdutil.HintChartList(opts.Repo))
	}
	digest := "sha256:" + hex.EncodeToString(h.Sum(nil))
	if etag := strings.Trim(resp.Header.Get("ETag"), `"`); etag != "" {
		if !strings.HasPrefix(etag, "sha256:") {
			etag = "sha256:" + etag
		}
		if etag != digest {
			return fmt.Errorf("pull %s %s: the archive's digest %s is not the server's %s", opts.Name, version, digest, termtext.Line(etag))
		}
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return fmt.Errorf("write %s: %w", dest, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, pulled{Name: opts.Name, Version: version, Digest: digest, Path: dest})
	}
	if opts.IO.IsStdoutTTY() {
		_, err = fmt.Fprintf(opts.IO.Out, "%s Pulled %s %s to %s\n  digest: %s\n", opts.IO.ColorScheme().SuccessIcon(), termtext.Line(opts.Name), termtext.Line(version), dest, digest)
		return err
	}
	_, err = fmt.Fprintln(opts.IO.Out, dest)
	return err
}
