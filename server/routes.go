package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/helmrepo"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/scim"
)

// routes registers every route of the service. Each /v1 route states the
// scope it needs in its handler; authentication and rate limiting wrap the
// whole /v1 group.
func (s *Server) routes(e *echo.Echo) {
	if len(s.Config.CORSOrigins) > 0 {
		e.Pre(corsV1(s.Config.CORSOrigins))
	}
	e.Use(s.observe)

	// The probes answer HEAD too: uptime monitors probe with it.
	getHead := []string{http.MethodGet, http.MethodHead}
	e.Match(getHead, "/healthz", s.handleHealthz)
	e.Match(getHead, "/livez", s.handleLivez)
	e.Match(getHead, "/readyz", s.handleReadyz)
	e.GET("/metrics", s.handleMetrics)

	// The API's own description, for OpenAPI tools: no credential.
	e.GET("/v1/openapi.json", handleOpenAPI)

	// The token exchange of trusted publishing takes no credential (the
	// CI's OIDC token is its proof) and has its own per-address bucket.
	e.POST("/v1/oidc/token", s.handleOIDCToken)

	v1 := e.Group("/v1", httpx.UnescapePathParams, s.authenticate)
	v1.GET("/rate-limit", s.handleRateLimit)

	api := v1.Group("", s.rateLimit)
	s.api = api
	api.GET("/user", s.handleGetUser)
	api.GET("/user/api-keys", s.handleListAPIKeys)
	api.POST("/user/api-keys", s.handleCreateAPIKey)
	api.DELETE("/user/api-keys/:id", s.handleDeleteAPIKey)
	api.GET("/users", s.handleListUsers)
	api.POST("/users", s.handleCreateUser)
	api.PATCH("/users/:email", s.handleUpdateUser)
	api.DELETE("/users/:email", s.handleDeleteUser)
	api.GET("/users/:email/api-keys", s.handleListUserAPIKeys)
	api.POST("/users/:email/api-keys", s.handleCreateUserAPIKey)
	api.DELETE("/users/:email/api-keys/:id", s.handleDeleteUserAPIKey)

	api.GET("/repositories", s.handleListRepositories)
	api.POST("/repositories", s.handleCreateRepository)
	api.GET("/repositories/:repo", s.handleGetRepository)
	api.PATCH("/repositories/:repo", s.handleUpdateRepository)
	api.DELETE("/repositories/:repo", s.handleDeleteRepository)
	api.POST("/repositories/:repo/sync", s.handleSyncRepository)
	api.DELETE("/repositories/:repo/cache", s.handlePurgeCache)
	api.GET("/repositories/:repo/charts", s.handleListCharts)
	api.POST("/repositories/:repo/charts", s.handleUploadChart)
	api.GET("/repositories/:repo/charts/:name", s.handleChartVersions)
	api.GET("/repositories/:repo/charts/:name/diff", s.handleChartDiff)
	api.GET("/repositories/:repo/charts/:name/:version", s.handleGetChartVersion)
	api.DELETE("/repositories/:repo/charts/:name/:version", s.handleDeleteChartVersion)
	api.GET("/repositories/:repo/charts/:name/:version/archive", s.handleDownloadChart)
	api.HEAD("/repositories/:repo/charts/:name/:version/archive", s.handleDownloadChart)

	api.GET("/search", s.handleSearch)

	api.GET("/admin/backup", s.handleBackup)
	api.POST("/admin/verify", s.handleVerify)

	api.GET("/organizations", s.handleListOrganizations)
	api.POST("/organizations", s.handleCreateOrganization)
	api.DELETE("/organizations/:org", s.handleDeleteOrganization)

	// Repository grants (CONTRACT §18 "Access").
	api.GET("/repositories/:repo/access", s.handleListAccess)
	api.POST("/repositories/:repo/access", s.handleGrantAccess)
	api.DELETE("/repositories/:repo/access/:kind/:name", s.handleRevokeAccess)
	api.GET("/repositories/:repo/permissions", s.handleExplainAccess)

	api.GET("/repositories/:repo/webhooks", s.handleListWebhooks)
	api.POST("/repositories/:repo/webhooks", s.handleCreateWebhook)
	api.GET("/organizations/:org/webhooks", s.handleListWebhooks)
	api.POST("/organizations/:org/webhooks", s.handleCreateWebhook)
	api.GET("/admin/webhooks", s.handleListWebhooks)
	api.POST("/admin/webhooks", s.handleCreateWebhook)
	api.GET("/replications", s.handleListReplications)
	api.POST("/replications", s.handleCreateReplication)
	api.GET("/replications/:name", s.handleGetReplication)
	api.DELETE("/replications/:name", s.handleDeleteReplication)
	api.POST("/replications/:name/run", s.handleRunReplication)
	api.GET("/replications/:name/status", s.handleReplicationStatus)
	api.GET("/webhooks/:id", s.handleGetWebhook)
	api.PATCH("/webhooks/:id", s.handleUpdateWebhook)
	api.DELETE("/webhooks/:id", s.handleDeleteWebhook)
	api.POST("/webhooks/:id/ping", s.handlePingWebhook)
	api.GET("/webhooks/:id/deliveries", s.handleListDeliveries)
	api.POST("/webhooks/:id/deliveries/:delivery/redeliver", s.handleRedeliver)
	api.GET("/audit", s.handleAudit)
	api.GET("/repositories/:repo/quota", s.handleGetRepoQuota)
	api.PUT("/repositories/:repo/quota", s.handlePutRepoQuota)
	api.GET("/repositories/:repo/policy", s.handleGetRepoPolicy)
	api.PUT("/repositories/:repo/policy", s.handlePutRepoPolicy)
	api.GET("/repositories/:repo/artifacthub", s.handleGetArtifactHub)
	api.PUT("/repositories/:repo/artifacthub", s.handlePutArtifactHub)
	api.GET("/repositories/:repo/retention", s.handleGetRetention)
	api.PUT("/repositories/:repo/retention", s.handlePutRetention)
	api.POST("/repositories/:repo/retention/run", s.handleRunRetention)
	api.GET("/organizations/:org/robots", s.handleListRobots)
	api.POST("/organizations/:org/robots", s.handleCreateRobot)
	api.GET("/organizations/:org/robots/:name", s.handleGetRobot)
	api.PATCH("/organizations/:org/robots/:name", s.handleUpdateRobot)
	api.DELETE("/organizations/:org/robots/:name", s.handleDeleteRobot)
	api.POST("/organizations/:org/robots/:name/rotate", s.handleRotateRobot)
	api.GET("/organizations/:org/policy", s.handleGetOrgPolicy)
	api.PUT("/organizations/:org/policy", s.handlePutOrgPolicy)
	api.GET("/organizations/:org/quota", s.handleGetOrgQuota)
	api.PUT("/organizations/:org/quota", s.handlePutOrgQuota)

	api.GET("/organizations/:org/robots/:name/publishers", s.handleListPublishers)
	api.POST("/organizations/:org/robots/:name/publishers", s.handleAddPublisher)
	api.DELETE("/organizations/:org/robots/:name/publishers/:id", s.handleRemovePublisher)

	api.GET("/repositories/:repo/trust", s.handleListTrust)
	api.POST("/repositories/:repo/trust", s.handleAddTrust)
	api.DELETE("/repositories/:repo/trust/:name", s.handleRemoveTrust)
	api.GET("/organizations/:org/trust", s.handleListTrust)
	api.POST("/organizations/:org/trust", s.handleAddTrust)
	api.DELETE("/organizations/:org/trust/:name", s.handleRemoveTrust)

	api.GET("/teams", s.handleListTeams)
	api.POST("/teams", s.handleCreateTeam)
	api.GET("/teams/:team", s.handleGetTeam)
	api.PATCH("/teams/:team", s.handleUpdateTeam)
	api.GET("/teams/:team/members", s.handleListMembers)
	api.POST("/teams/:team/members", s.handleAddMember)
	api.PATCH("/teams/:team/members/:member", s.handleUpdateMember)
	api.DELETE("/teams/:team/members/:member", s.handleRemoveMember)

	// SCIM tokens (CONTRACT §18 "Sign-in", decision 14).
	api.GET("/admin/scim-tokens", s.handleListSCIMTokens)
	api.POST("/admin/scim-tokens", s.handleCreateSCIMToken)
	api.DELETE("/admin/scim-tokens/:id", s.handleRevokeSCIMToken)

	// The Helm repository protocol (§8) and ChartMuseum's API for
	// `helm cm-push`; credentials are optional for public repositories.
	(&helmrepo.Handler{App: s.app, Auth: s, Limits: s, Uploads: s, Logger: s.Logger, UploadBucket: bucketUpload}).Register(e)

	// SCIM 2.0 provisioning from the identity provider, with its own
	// bearer tokens.
	(&scim.Handler{App: s.app, Invalidate: s.creds.invalidate, Logger: s.Logger}).Register(e)
}
