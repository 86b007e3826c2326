// Package replication groups the `chartctl replication` commands.
package replication

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/replication/create"
	"github.com/chartctl/chartctl/internal/cmd/replication/delete"
	"github.com/chartctl/chartctl/internal/cmd/replication/list"
	"github.com/chartctl/chartctl/internal/cmd/replication/run"
	"github.com/chartctl/chartctl/internal/cmd/replication/status"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdReplication returns the `replication` command group.
func NewCmdReplication(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "replication <command>",
		Short: "Keep another registry in step with a repository",
		Long: `A replication copies what a repository receives to a target: any OCI
registry (oci://HOST/PATH: Distribution, Harbor, GHCR, another chartctl),
with signatures and SBOMs, or another chartctl repository
(https://HOST/helm/REPO) with provenance files. Pushes (and, with
--on delete, deletions) are copied as they happen; a target that is down
gets them when it is back. Admins of the source repository manage its
replications.`,
		Example: `  chartctl replication create acme-dr --from acme-charts --to oci://registry.example.com/acme --filter 'name=web-*' --on push,delete
  chartctl replication run acme-dr
  chartctl replication status acme-dr
  chartctl replication list`,
	}
	cmd.AddCommand(create.NewCmdCreate(f, nil), list.NewCmdList(f, nil), status.NewCmdStatus(f, nil),
		run.NewCmdRun(f, nil), delete.NewCmdDelete(f, nil))
	return cmd
}
