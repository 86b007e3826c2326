// Package get implements `chartctl repo retention get`.
package get

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// GetOptions are the inputs of `repo retention get`.
type GetOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool
	Repo   string
}

// NewCmdGet returns the `repo retention get` command.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f.IOStreams, Client: f.Client}
	return &cobra.Command{
		Use:     "get REPOSITORY",
		Short:   "Show a repository's retention policy",
		Example: `  chartctl repo retention get stable`,
		Args:    cmdutil.ExactArgs(1, "a repository name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repo, opts.JSON = args[0], f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			c, err := opts.Client()
			if err != nil {
				return err
			}
			p, _, err := c.Repositories.Retention(cmd.Context(), opts.Repo)
			if err != nil {
				return fmt.Errorf("get retention policy of %s: %w", opts.Repo, err)
			}
			if opts.JSON {
				return cmdutil.PrintJSON(opts.IO.Out, p)
			}
			show := func(name string, v *string) {
				if v != nil && *v != "" {
					fmt.Fprintf(opts.IO.Out, "%s:\t%s\n", name, *v)
				}
			}
			if p.KeepLatest != nil {
				s := strconv.Itoa(*p.KeepLatest)
				show("keep latest", &s)
			}
			show("keep pushed within", p.KeepPushedWithin)
			show("keep downloaded within", p.KeepDownloadedWithin)
			show("keep matching", p.KeepMatching)
			show("delete pre-releases after", p.DeletePrereleasesAfter)
			show("schedule", p.Schedule)
			return nil
		},
	}
}
