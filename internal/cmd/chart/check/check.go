// Package check implements `chartctl chart check`.
package check

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmd/chart/push"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// CheckOptions are the inputs of `chart check`.
type CheckOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool
	Path   string
	Repo   string
	Prov   string
}

// NewCmdCheck returns the `chart check` command.
func NewCmdCheck(f *cmdutil.Factory, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "check PATH --repo REPOSITORY",
		Short: "Check a chart against a repository's admission policy without pushing it",
		Long: `Send the chart (a directory, packaged as push does, or a .tgz) to the
repository's admission policy and print what it finds; nothing is stored.
It exits 1 when the policy would refuse the chart, naming every rule.`,
		Example: `  chartctl chart check ./mychart --repo prod-charts`,
		Args:    cmdutil.ExactArgs(1, "a chart directory or archive is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path, opts.JSON = args[0], f.WantsJSON()
			if opts.Repo == "" {
				return cmdutil.FlagErrorf("--repo is required")
			}
			if runF != nil {
				return runF(opts)
			}
			return checkRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "repository whose policy to check against (required)")
	cmd.Flags().StringVar(&opts.Prov, "prov", "", "provenance file to send with the chart")
	_ = cmd.RegisterFlagCompletionFunc("repo", cmdutil.CompleteRepositories(f))
	return cmd
}

func checkRun(ctx context.Context, opts *CheckOptions) error {
	archive, cleanup, err := push.ArchivePath(opts.Path)
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
	uo := &client.UploadOptions{Filename: filepath.Base(archive)}
	if opts.Prov != "" {
		prov, err := os.Open(opts.Prov)
		if err != nil {
			return fmt.Errorf("open provenance file: %w", err)
		}
		defer prov.Close()
		uo.Prov = prov
	}
	res, _, err := c.Charts.Check(ctx, opts.Repo, file, uo)
	if err != nil {
		var ce *client.Error
		if errors.As(err, &ce) && len(ce.Violations) > 0 && !opts.JSON {
			for _, v := range ce.Violations {
				fmt.Fprintf(opts.IO.Out, "error\t%s\t%s\n", termtext.Line(v.Rule), termtext.Line(v.Message))
			}
			return cmdutil.ErrSilent
		}
		return cmdutil.HintNotFound(fmt.Errorf("check %s against %s: %w", filepath.Base(archive), opts.Repo, err), cmdutil.HintRepoList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, res)
	}
	for _, fd := range res.Findings {
		fmt.Fprintf(opts.IO.Out, "%s\t%s\t%s\n", termtext.Line(fd.Severity), termtext.Line(fd.Rule), termtext.Line(fd.Message))
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s %s %s meets the policy of %s; nothing was stored\n", opts.IO.ColorScheme().SuccessIcon(),
		termtext.Line(res.Name), termtext.Line(res.Version), termtext.Line(opts.Repo))
	return err
}
