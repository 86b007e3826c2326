// Package run implements `chartctl repo retention run`.
package run

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// RunOptions are the inputs of `repo retention run`.
type RunOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Repo   string
	DryRun bool
	Yes    bool
}

// NewCmdRun returns the `repo retention run` command.
func NewCmdRun(f *cmdutil.Factory, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable}
	cmd := &cobra.Command{
		Use:   "run REPOSITORY",
		Short: "Apply a repository's retention policy now",
		Long: `Delete the chart versions the policy does not keep, and list them with
the reason. With --dry-run nothing is deleted; the real run that follows
deletes the same versions. Without --dry-run, a terminal asks to confirm;
elsewhere --yes is required.`,
		Example: `  chartctl repo retention run stable --dry-run
  chartctl repo retention run stable --yes`,
		Args: cmdutil.ExactArgs(1, "a repository name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repo, opts.JSON = args[0], f.WantsJSON()
			if !opts.DryRun {
				if err := cmdutil.RequireYes(opts.IO, opts.Yes); err != nil {
					return err
				}
				if !opts.Yes {
					if err := cmdutil.Confirm(cmd.Context(), opts.IO, fmt.Sprintf("Delete the versions of %s the retention policy does not keep?", termtext.Line(opts.Repo)), "Nothing deleted"); err != nil {
						return err
					}
				}
			}
			if runF != nil {
				return runF(opts)
			}
			c, err := opts.Client()
			if err != nil {
				return err
			}
			res, _, err := c.Repositories.RunRetention(cmd.Context(), opts.Repo, opts.DryRun)
			if err != nil {
				return fmt.Errorf("run retention of %s: %w", opts.Repo, err)
			}
			if opts.JSON {
				return cmdutil.PrintJSON(opts.IO.Out, res)
			}
			verb := "Deleted"
			if res.DryRun {
				verb = "Would delete"
			}
			fmt.Fprintf(opts.IO.ErrOut, "%s %s of %s\n", verb, text.Count(int64(len(res.Deleted)), "chart version", "chart versions"), termtext.Line(opts.Repo))
			t := opts.Table()
			t.Header("name", "version", "reason")
			for _, d := range res.Deleted {
				t.AddField(d.Name)
				t.AddField(d.Version)
				t.AddField(d.Reason)
				t.EndRow()
			}
			return t.Render()
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "list what would be deleted, delete nothing")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "delete without asking")
	return cmd
}
