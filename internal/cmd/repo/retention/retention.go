// Package retention groups the `chartctl repo retention` commands.
package retention

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/repo/retention/get"
	"github.com/chartctl/chartctl/internal/cmd/repo/retention/run"
	"github.com/chartctl/chartctl/internal/cmd/repo/retention/set"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdRetention returns the `repo retention` command group.
func NewCmdRetention(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "retention <command>",
		Short: "Show, set and run a repository's retention policy",
		Long: `A retention policy deletes old chart versions: when any keep rule is set
(--keep-latest, --keep-pushed-within, --keep-downloaded-within), every
version none of them keeps; and pre-releases older than
--delete-prereleases-after. Versions matching --keep-matching are never
deleted. Run it with --dry-run first to see what would go and why.`,
		Example: `  chartctl repo retention set stable --keep-latest 10 --keep-downloaded-within 30d --keep-matching '>=1.0.0 <1.1.0'
  chartctl repo retention run stable --dry-run
  chartctl repo retention get stable`,
	}
	cmd.AddCommand(get.NewCmdGet(f, nil), set.NewCmdSet(f, nil), run.NewCmdRun(f, nil))
	return cmd
}
