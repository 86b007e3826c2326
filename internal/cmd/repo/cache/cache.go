// Package cache groups the `chartctl repo cache` commands.
package cache

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/repo/cache/purge"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdCache returns the `repo cache` command group.
func NewCmdCache(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache <command>",
		Short: "Manage what a proxy repository has cached",
		Long: `A proxy repository (chartctl repo create NAME --proxy URL) keeps every chart
version pulled through it. These commands manage that cache.`,
		Example: `  chartctl repo cache purge bitnami
  chartctl repo cache purge bitnami nginx@15.0.1`,
	}
	cmd.AddCommand(purge.NewCmdPurge(f, nil))
	return cmd
}
