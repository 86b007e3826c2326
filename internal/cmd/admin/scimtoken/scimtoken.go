// Package scimtoken groups the `chartctl admin scim-token` commands.
package scimtoken

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/admin/scimtoken/create"
	"github.com/chartctl/chartctl/internal/cmd/admin/scimtoken/list"
	"github.com/chartctl/chartctl/internal/cmd/admin/scimtoken/revoke"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdSCIMToken returns the `admin scim-token` command group.
func NewCmdSCIMToken(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scim-token <command>",
		Short: "Manage the bearer tokens of SCIM clients (server admin)",
		Long: `An identity provider (Okta, Entra ID, …) provisions and deactivates users and
pushes groups through SCIM 2.0 at {server}/scim/v2, with a bearer token made here.`,
		Example: `  chartctl admin scim-token create --name okta
  chartctl admin scim-token list
  chartctl admin scim-token revoke scim_01J…`,
	}
	cmd.AddCommand(create.NewCmdCreate(f, nil), list.NewCmdList(f, nil), revoke.NewCmdRevoke(f, nil))
	return cmd
}
