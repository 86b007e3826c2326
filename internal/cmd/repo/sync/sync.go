// Package sync implements `chartctl repo sync`.
package sync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// SyncOptions are the inputs of `repo sync`.
type SyncOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name string
	// Wait polls the repository until the sync has ended, at most
	// Timeout; Poll is the time between two looks.
	Wait    bool
	Timeout time.Duration
	Poll    time.Duration
}

// NewCmdSync returns the `repo sync` command; runF replaces the run
// function in tests.
func NewCmdSync(f *cmdutil.Factory, runF func(*SyncOptions) error) *cobra.Command {
	opts := &SyncOptions{IO: f.IOStreams, Client: f.Client, Poll: time.Second}
	cmd := &cobra.Command{
		Use:   "sync NAME",
		Short: "Sync a mirror repository from its upstream now",
		Long: `Ask the server to sync the mirror repository NAME from its upstream now,
without waiting for its interval: the versions the upstream added since the
last sync are copied. The sync runs on the server; with --wait the command
waits for it to end and fails (exit 1) when the sync fails, printing why.
You need the maintainer role in the repository (its owner for a personal
one).`,
		Example: `  chartctl repo sync bitnami
  chartctl repo sync bitnami --wait && helm repo update`,
		Args:              cmdutil.ExactArgs(1, "a repository name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteRepositories(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if opts.Timeout <= 0 {
				return cmdutil.FlagErrorf("--timeout must be positive")
			}
			if runF != nil {
				return runF(opts)
			}
			return syncRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Wait, "wait", "w", false, "wait for the sync to end and fail if it fails")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "longest --wait waits")
	return cmd
}

func syncRun(ctx context.Context, opts *SyncOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	repo, _, err := c.Repositories.Sync(ctx, opts.Name)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("sync repository %s: %w", opts.Name, err), cmdutil.HintRepoList)
	}
	cs := opts.IO.ColorScheme()
	if !opts.Wait {
		if opts.JSON {
			return cmdutil.PrintJSON(opts.IO.Out, repo)
		}
		_, err = fmt.Fprintf(opts.IO.Out, "%s Started a sync of %s from %s\n", cs.SuccessIcon(), cs.Bold(termtext.Line(repo.Name)), termtext.Line(mirrorURL(repo)))
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	for repo.Mirror != nil && repo.Mirror.Status == client.MirrorStatusSyncing {
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("the sync of %s did not end within %s; it goes on on the server (see chartctl repo view %s)", opts.Name, opts.Timeout, opts.Name)
		case <-time.After(opts.Poll):
		}
		if repo, _, err = c.Repositories.Get(ctx, opts.Name); err != nil {
			return fmt.Errorf("look at repository %s: %w", opts.Name, err)
		}
	}
	if opts.JSON {
		if err := cmdutil.PrintJSON(opts.IO.Out, repo); err != nil {
			return err
		}
	}
	if repo.Mirror != nil && repo.Mirror.Status == client.MirrorStatusError {
		if opts.JSON {
			return cmdutil.ErrSilent
		}
		return errors.New("the sync of " + opts.Name + " failed: " + termtext.Line(repo.Mirror.Error))
	}
	if !opts.JSON {
		_, err = fmt.Fprintf(opts.IO.Out, "%s Synced %s from %s\n", cs.SuccessIcon(), cs.Bold(termtext.Line(repo.Name)), termtext.Line(mirrorURL(repo)))
	}
	return err
}

func mirrorURL(r *client.Repository) string {
	if r.Mirror == nil {
		return "its upstream"
	}
	return r.Mirror.URL
}
