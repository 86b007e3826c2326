// Package admin groups the `chartctl admin` commands: server maintenance
// for operators and server admins (backup, restore, verify, gc, migrate).
package admin

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/admin/backup"
	"github.com/chartctl/chartctl/internal/cmd/admin/gc"
	"github.com/chartctl/chartctl/internal/cmd/admin/migrate"
	"github.com/chartctl/chartctl/internal/cmd/admin/restore"
	"github.com/chartctl/chartctl/internal/cmd/admin/scimtoken"
	"github.com/chartctl/chartctl/internal/cmd/admin/verify"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdAdmin returns the `admin` command group.
func NewCmdAdmin(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "admin <command>",
		Short: "Back up, restore, verify, migrate and clean up a server's data",
		Long: `Operator commands. backup, verify (without --file) and gc ask a running
server and need a server admin's credential with the admin scope; restore
fills an empty store offline (a data directory, or PostgreSQL and an
S3-compatible store: a backup of either restores into either), and migrate
copies a stopped single node's data directory to PostgreSQL and S3.`,
		Example: `  chartctl admin backup chartctl.tar
  chartctl admin verify --file chartctl.tar
  chartctl admin restore chartctl.tar --data /var/lib/chartctl-new
  chartctl admin restore chartctl.tar --database postgres://… --blob-store s3://…
  chartctl admin gc --dry-run`,
	}
	cmd.AddCommand(backup.NewCmdBackup(f, nil), restore.NewCmdRestore(f, nil), verify.NewCmdVerify(f, nil), gc.NewCmdGC(f, nil),
		migrate.NewCmdMigrate(f, nil), scimtoken.NewCmdSCIMToken(f))
	return cmd
}
