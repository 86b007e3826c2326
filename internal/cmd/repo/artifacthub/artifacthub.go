// Package artifacthub groups the `chartctl repo artifacthub` commands.
package artifacthub

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/repo/artifacthub/get"
	"github.com/chartctl/chartctl/internal/cmd/repo/artifacthub/set"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdArtifactHub returns the `repo artifacthub` command group.
func NewCmdArtifactHub(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "artifacthub <command>",
		Short: "Show and set a repository's artifacthub-repo.yml",
		Long: `Artifact Hub reads a repository's artifacthub-repo.yml to give its
publisher the verified-publisher badge (repositoryID), let its owners
claim it (owners) and leave packages out (ignore). chartctl serves it
beside index.yaml (/helm/REPOSITORY/artifacthub-repo.yml) and as the
artifacthub.io tag of each chart's OCI repository, where Artifact Hub
looks for it. Only the repository's admins set it.`,
		Example: `  chartctl repo artifacthub set public-charts artifacthub-repo.yml
  chartctl repo artifacthub set public-charts --repository-id 2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab --owner ada=ada@example.com
  chartctl repo artifacthub get public-charts`,
	}
	cmd.AddCommand(get.NewCmdGet(f, nil), set.NewCmdSet(f, nil))
	return cmd
}
