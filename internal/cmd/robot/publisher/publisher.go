// Package publisher groups the `chartctl robot publisher` commands: the
// trusted publishers (keyless CI) of a robot account.
package publisher

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/robot/publisher/add"
	"github.com/chartctl/chartctl/internal/cmd/robot/publisher/list"
	"github.com/chartctl/chartctl/internal/cmd/robot/publisher/remove"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdPublisher returns the `robot publisher` command group.
func NewCmdPublisher(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "publisher <command>",
		Short: "Let CI jobs act as a robot without a secret (trusted publishing)",
		Long: `A trusted publisher lets a CI job exchange the OIDC ID token its CI system
gives it (GitHub Actions, GitLab CI, a Kubernetes service account) for a
credential of the robot that lives 15 minutes: the pipeline stores no secret.
It names the token's issuer, the audience the token must carry, and claim
conditions (--claim NAME=VALUE, exact or a glob where * does not cross /)
that every exchanged token must meet. Organization owners manage them. See
docs/ci.md for the workflows.`,
		Example: `  chartctl robot publisher add ci-push --org acme \
    --issuer https://token.actions.githubusercontent.com \
    --audience https://charts.example.com \
    --claim repository=acme/charts --claim ref=refs/heads/main
  chartctl robot publisher list ci-push --org acme
  chartctl robot publisher remove ci-push pub_01JD8X2Q3R4S5T6V7W8X9Y0Z1A --org acme`,
	}
	cmd.AddCommand(add.NewCmdAdd(f, nil), list.NewCmdList(f, nil), remove.NewCmdRemove(f, nil))
	return cmd
}
