// Package access groups the `chartctl repo access` commands: repository
// roles granted to teams and users.
package access

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/repo/access/explain"
	"github.com/chartctl/chartctl/internal/cmd/repo/access/grant"
	"github.com/chartctl/chartctl/internal/cmd/repo/access/list"
	"github.com/chartctl/chartctl/internal/cmd/repo/access/revoke"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdAccess returns the `repo access` command group.
func NewCmdAccess(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "access <command>",
		Short: "Grant, list, revoke and explain roles on a repository",
		Long: `A repository role is read, write (push and delete versions), maintain
(also the repository's settings: policy, retention, webhooks) or admin (also
its grants and deleting it). Grant one to a team of the repository's
organization or to any user. A user's role is the strongest of their
organization role (member reads, maintainer maintains, owner is admin) and
their grants; ` + "`explain`" + ` shows where it comes from. Listing, granting and
explaining need the admin role on the repository.`,
		Example: `  chartctl repo access grant web-charts --team web --role write
  chartctl repo access grant web-charts --user ada@example.com --role admin
  chartctl repo access list web-charts
  chartctl repo access explain web-charts --user bob@example.com
  chartctl repo access revoke web-charts --team web`,
	}
	cmd.AddCommand(
		list.NewCmdList(f, nil),
		grant.NewCmdGrant(f, nil),
		revoke.NewCmdRevoke(f, nil),
		explain.NewCmdExplain(f, nil),
	)
	return cmd
}
