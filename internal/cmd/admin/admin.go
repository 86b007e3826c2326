// Package admin groups the `chartctl admin` commands: server maintenance
// for operators and server admins (backup, restore, verify, gc).
package admin

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/admin/backup"
	"github.com/chartctl/chartctl/internal/cmd/admin/gc"
	"github.com/chartctl/chartctl/internal/cmd/admin/restore"
	"github.com/chartctl/chartctl/internal/cmd/admin/verify"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdAdmin returns the `admin` command group.
func NewCmdAdmin(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "admin <command>",
		Short: "Back up, restore, verify and clean up a server's data",
		Long: `Operator commands. backup, verify (without --file) and gc ask a running
server and need a server admin's credential with the admin scope; restore
works offline on a data directory.`,
		Example: `  chartctl admin backup chartctl.tar
  chartctl admin verify --file chartctl.tar
  chartctl admin restore chartctl.tar --data /var/lib/chartctl-new
  chartctl admin gc --dry-run`,
	}
	cmd.AddCommand(backup.NewCmdBackup(f, nil), restore.NewCmdRestore(f, nil), verify.NewCmdVerify(f, nil), gc.NewCmdGC(f, nil))
	return cmd
}
