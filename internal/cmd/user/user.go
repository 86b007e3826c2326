// Package user groups the `chartctl user` commands, a server admin's
// tools to onboard and offboard people: create, list, disable, enable,
// delete, reset-password.
package user

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/user/create"
	"github.com/chartctl/chartctl/internal/cmd/user/delete"
	"github.com/chartctl/chartctl/internal/cmd/user/disable"
	"github.com/chartctl/chartctl/internal/cmd/user/list"
	"github.com/chartctl/chartctl/internal/cmd/user/resetpassword"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdUser returns the `user` command group.
func NewCmdUser(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user <command>",
		Short: "Manage the server's users (server admins)",
		Long: `Server admins create, list, disable, enable and delete accounts and reset
passwords. Disabling or deleting a user ends their dashboard sessions,
OAuth access and API keys at once.

These commands need a credential with the admin scope: an API key that has
it, or "chartctl login --scopes repo:read,repo:write,team:read,team:write,org:read,org:write,keys:write,admin".`,
		Example: `  chartctl user create ada@example.com --password-stdin < password.txt
  chartctl user list
  chartctl user disable ada@example.com
  chartctl user delete ada@example.com --yes`,
	}
	cmd.AddCommand(
		create.NewCmdCreate(f, nil),
		list.NewCmdList(f, nil),
		disable.NewCmdDisable(f, nil),
		disable.NewCmdEnable(f, nil),
		delete.NewCmdDelete(f, nil),
		resetpassword.NewCmdResetPassword(f, nil),
	)
	return cmd
}
