// Package admin groups the `chartctl admin` commands: server maintenance
// for server admins.
package admin

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/admin/gc"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdAdmin returns the `admin` command group.
func NewCmdAdmin(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "admin <command>",
		Short: "Server maintenance (server admins)",
		Long: `Server maintenance. These commands need a server admin's credential
carrying every scope.`,
		Example: `  chartctl admin gc --dry-run`,
	}
	cmd.AddCommand(gc.NewCmdGC(f, nil))
	return cmd
}
