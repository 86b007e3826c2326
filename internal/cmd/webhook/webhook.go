// Package webhook groups the `chartctl webhook` commands.
package webhook

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/webhook/create"
	"github.com/chartctl/chartctl/internal/cmd/webhook/delete"
	"github.com/chartctl/chartctl/internal/cmd/webhook/deliveries"
	"github.com/chartctl/chartctl/internal/cmd/webhook/list"
	"github.com/chartctl/chartctl/internal/cmd/webhook/ping"
	"github.com/chartctl/chartctl/internal/cmd/webhook/redeliver"
	"github.com/chartctl/chartctl/internal/cmd/webhook/update"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdWebhook returns the `webhook` command group.
func NewCmdWebhook(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "webhook <command>",
		Short: "Send events to other systems when charts, repositories, teams or keys change",
		Long: `A webhook POSTs a signed CloudEvent to a URL on every event it asks for:
chart.pushed, chart.deleted, repository.created/updated/deleted,
team.member_added/removed/role_changed, api_key.created/revoked.
Webhooks belong to a repository (--repo, maintainers), an organization
(--org, owners) or the whole server (neither, admins). Receivers verify the
webhook-signature header with the secret shown once, on create (Standard
Webhooks).`,
		Example: `  chartctl webhook create --repo stable --url https://ci.example.com/hook --events chart.pushed
  chartctl webhook list --repo stable
  chartctl webhook update WEBHOOK_ID --active=true
  chartctl webhook deliveries WEBHOOK_ID
  chartctl webhook redeliver WEBHOOK_ID DELIVERY_ID`,
	}
	cmd.AddCommand(list.NewCmdList(f, nil), create.NewCmdCreate(f, nil), update.NewCmdUpdate(f, nil), delete.NewCmdDelete(f, nil),
		deliveries.NewCmdDeliveries(f, nil), redeliver.NewCmdRedeliver(f, nil), ping.NewCmdPing(f, nil))
	return cmd
}
