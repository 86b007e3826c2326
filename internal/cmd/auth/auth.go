// Package auth groups the `chartctl auth` commands.
package auth

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/auth/status"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdAuth returns the `auth` command group.
func NewCmdAuth(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "auth <command>",
		Short:   "Show the credential in use",
		Long:    "Sign in with `chartctl login`, out with `chartctl logout`; `chartctl auth status` shows who you are.",
		Example: `  chartctl auth status`,
	}
	cmd.AddCommand(status.NewCmdStatus(f, nil))
	return cmd
}
