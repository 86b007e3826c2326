// Package version implements `chartctl version`.
package version

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/build"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// String describes the build: version, commit and date.
func String() string {
	return fmt.Sprintf("chartctl %s (commit %s, built %s)", build.Version, build.Commit, build.Date)
}

// NewCmdVersion returns the `version` command.
func NewCmdVersion(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Example: `  chartctl version
  chartctl version -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.Flags.Output == cmdutil.OutputJSON {
				return cmdutil.PrintJSON(f.IOStreams.Out, map[string]string{
					"version": build.Version, "commit": build.Commit, "date": build.Date,
				})
			}
			_, err := fmt.Fprintln(f.IOStreams.Out, String())
			return err
		},
	}
}
