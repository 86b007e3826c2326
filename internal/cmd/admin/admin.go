// Package admin implements `chartctl admin`: backup, restore and verify.
package admin

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/admin/backup"
	"github.com/chartctl/chartctl/internal/cmd/admin/restore"
	"github.com/chartctl/chartctl/internal/cmd/admin/verify"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdAdmin returns the `admin` command group.
func NewCmdAdmin(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "admin <command>",
		Short: "Back up, restore and verify a server's data",
		Long: `Operator commands. backup and verify (without --file) ask a running server
and need a server admin's credential with every scope; restore works offline
on a data directory.`,
		Example: `  chartctl admin backup chartctl.tar
  chartctl admin verify --file chartctl.tar
  chartctl admin restore chartctl.tar --data /var/lib/chartctl-new`,
	}
	cmd.AddCommand(backup.NewCmdBackup(f, nil), restore.NewCmdRestore(f, nil), verify.NewCmdVerify(f, nil))
	return cmd
}
