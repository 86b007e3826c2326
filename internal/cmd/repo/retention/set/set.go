// Package set implements `chartctl repo retention set`.
package set

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// SetOptions are the inputs of `repo retention set`.
type SetOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Repo   string
	Policy client.RetentionPolicy
}

// NewCmdSet returns the `repo retention set` command.
func NewCmdSet(f *cmdutil.Factory, runF func(*SetOptions) error) *cobra.Command {
	opts := &SetOptions{IO: f.IOStreams, Client: f.Client}
	var (
		keepLatest                              int
		pushed, downloaded, matching, pre, cron string
	)
	cmd := &cobra.Command{
		Use:   "set REPOSITORY",
		Short: "Replace a repository's retention policy",
		Long: `Replace the whole policy: flags not given are unset. Durations are like
30d or 12h; --keep-matching is a SemVer constraint; --schedule a cron
expression for runs without you (e.g. "0 3 * * *").`,
		Example: `  chartctl repo retention set stable --keep-latest 10 --delete-prereleases-after 14d --schedule "0 3 * * *"`,
		Args:    cmdutil.ExactArgs(1, "a repository name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repo = args[0]
			fl := cmd.Flags()
			if fl.Changed("keep-latest") {
				opts.Policy.KeepLatest = &keepLatest
			}
			for name, v := range map[string]struct {
				val string
				dst **string
			}{"keep-pushed-within": {pushed, &opts.Policy.KeepPushedWithin}, "keep-downloaded-within": {downloaded, &opts.Policy.KeepDownloadedWithin},
				"keep-matching": {matching, &opts.Policy.KeepMatching}, "delete-prereleases-after": {pre, &opts.Policy.DeletePrereleasesAfter},
				"schedule": {cron, &opts.Policy.Schedule}} {
				if fl.Changed(name) {
					s := v.val
					*v.dst = &s
				}
			}
			if runF != nil {
				return runF(opts)
			}
			c, err := opts.Client()
			if err != nil {
				return err
			}
			p, _, err := c.Repositories.SetRetention(cmd.Context(), opts.Repo, &opts.Policy)
			if err != nil {
				return fmt.Errorf("set retention policy of %s: %w", opts.Repo, err)
			}
			if f.WantsJSON() {
				return cmdutil.PrintJSON(opts.IO.Out, p)
			}
			_, err = fmt.Fprintf(opts.IO.Out, "%s Set the retention policy of %s; see what it would delete with: chartctl repo retention run %s --dry-run\n",
				opts.IO.ColorScheme().SuccessIcon(), termtext.Line(opts.Repo), termtext.Line(opts.Repo))
			return err
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&keepLatest, "keep-latest", 0, "keep the newest N versions of each chart")
	fs.StringVar(&pushed, "keep-pushed-within", "", "keep versions pushed within this long (e.g. 30d)")
	fs.StringVar(&downloaded, "keep-downloaded-within", "", "keep versions downloaded within this long (e.g. 30d)")
	fs.StringVar(&matching, "keep-matching", "", "never delete versions matching this SemVer constraint")
	fs.StringVar(&pre, "delete-prereleases-after", "", "delete pre-releases older than this (e.g. 14d)")
	fs.StringVar(&cron, "schedule", "", "cron expression of scheduled runs (e.g. \"0 3 * * *\")")
	return cmd
}
