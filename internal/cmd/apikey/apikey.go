// Package apikey groups the `chartctl api-key` commands.
package apikey

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/apikey/create"
	"github.com/chartctl/chartctl/internal/cmd/apikey/list"
	"github.com/chartctl/chartctl/internal/cmd/apikey/revoke"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdAPIKey returns the `api-key` command group.
func NewCmdAPIKey(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "api-key <command>",
		Short: "Create, list and revoke your API keys",
		Long: `API keys are credentials for scripts and CI: set CHARTCTL_TOKEN to one.
A key's scopes never exceed yours; its value is shown once, when created.`,
		Example: `  chartctl api-key create --name ci --scopes repo:read,repo:write --expires 90d
  chartctl api-key list
  chartctl api-key revoke KEY_ID`,
	}
	cmd.AddCommand(create.NewCmdCreate(f, nil), list.NewCmdList(f, nil), revoke.NewCmdRevoke(f, nil))
	return cmd
}
