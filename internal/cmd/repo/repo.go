// Package repo groups the `chartctl repo` commands.
package repo

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/quota"
	"github.com/chartctl/chartctl/internal/cmd/repo/access"
	"github.com/chartctl/chartctl/internal/cmd/repo/artifacthub"
	"github.com/chartctl/chartctl/internal/cmd/repo/cache"
	"github.com/chartctl/chartctl/internal/cmd/repo/create"
	"github.com/chartctl/chartctl/internal/cmd/repo/delete"
	"github.com/chartctl/chartctl/internal/cmd/repo/edit"
	"github.com/chartctl/chartctl/internal/cmd/repo/list"
	"github.com/chartctl/chartctl/internal/cmd/repo/policy"
	"github.com/chartctl/chartctl/internal/cmd/repo/retention"
	reposync "github.com/chartctl/chartctl/internal/cmd/repo/sync"
	"github.com/chartctl/chartctl/internal/cmd/repo/view"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdRepo returns the `repo` command group.
func NewCmdRepo(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "repo <command>",
		Short: "Create, list, view, edit, sync and delete chart repositories; their access, quotas and retention",
		Long: `Chart repositories hold charts. Each is also a plain Helm repository at
SERVER/helm/NAME. A repository created with --mirror is a read-only mirror of
an upstream Helm repository, synced by the server; one created with --proxy is
a read-only pull-through cache of an upstream, fetching each chart version
when it is first pulled.`,
		Example: `  chartctl repo create stable --description "Stable charts"
  chartctl repo list
  chartctl repo view stable
  chartctl repo edit stable --visibility internal
  chartctl repo access grant stable --team web --role write`,
	}
	cmd.AddCommand(
		create.NewCmdCreate(f, nil),
		list.NewCmdList(f, nil),
		view.NewCmdView(f, nil),
		edit.NewCmdEdit(f, nil),
		delete.NewCmdDelete(f, nil),
		retention.NewCmdRetention(f),
		policy.NewCmdPolicy(f),
		artifacthub.NewCmdArtifactHub(f),
		reposync.NewCmdSync(f, nil),
		quota.NewCmdQuota(f, quota.Repository(f)),
		access.NewCmdAccess(f),
		cache.NewCmdCache(f),
	)
	return cmd
}
