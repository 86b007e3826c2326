package backup

import (
	"fmt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// checkReferences reports, as problems of kind "reference", the records
// of a dump that refer to a record the dump lacks, where loading the dump
// would fail on it: an API key without its user, a repository or team
// without its organization, a member without its team, a chart version
// without its repository, a quota or retention policy of a repository or
// organization that is not there, a webhook of a repository (with that
// repository's ID) or organization that is not there, an OCI manifest whose blobs are not
// linked in its name, whose listed manifests are missing or whose chart
// version is gone, a tag pointing at no manifest, a grant whose
// repository, team or user is not there (by ID), a robot without its
// organization (by ID) and a trusted publisher without its robot.
func checkReferences(records []chartctl.DumpRecord, res *Result) {
	type nameDigest struct{ name, digest string }
	var (
		users   = map[string]bool{}
		orgs    = map[string]bool{}
		repos   = map[string]bool{}
		repoIDs = map[string]string{}
		teams   = map[string]bool{}
		// By ID, as grants, robots and publishers refer to them.
		repoByID  = map[string]bool{}
		teamByID  = map[string]bool{}
		orgByID   = map[string]bool{}
		robotByID = map[string]bool{}
		charts    = map[string]bool{}
		links     = map[nameDigest]bool{}
		manifests = map[nameDigest]bool{}
	)
	chartKey := func(repo, name, version string) string { return repo + "\x00" + name + "\x00" + version }
	for _, r := range records {
		switch {
		case r.User != nil:
			users[r.User.ID] = true
		case r.Organization != nil:
			orgs[r.Organization.Name] = true
			orgByID[r.Organization.ID] = true
		case r.Repository != nil:
			repos[r.Repository.Name] = true
			repoIDs[r.Repository.Name] = r.Repository.ID
			repoByID[r.Repository.ID] = true
		case r.Team != nil:
			teams[r.Team.Name] = true
			teamByID[r.Team.ID] = true
		case r.Robot != nil:
			robotByID[r.Robot.ID] = true
		case r.ChartVersion != nil:
			cv := r.ChartVersion
			charts[chartKey(cv.Repository, cv.Name, cv.Version)] = true
		case r.OCIBlobLink != nil:
			links[nameDigest{r.OCIBlobLink.Name, r.OCIBlobLink.Digest}] = true
		case r.OCIManifest != nil:
			manifests[nameDigest{r.OCIManifest.Name, r.OCIManifest.Digest}] = true
		}
	}
	missing := func(target, format string, args ...any) {
		res.add("reference", target, format, args...)
	}
	for _, r := range records {
		switch {
		case r.APIKey != nil:
			if !users[r.APIKey.UserID] {
				missing("api_key "+r.APIKey.ID, "The key belongs to user %s, whom the records lack.", r.APIKey.UserID)
			}
		case r.Repository != nil:
			if o := r.Repository.Organization; o != "" && !orgs[o] {
				missing("repository "+r.Repository.Name, "The repository belongs to organization %q, which the records lack.", o)
			}
		case r.Team != nil:
			if !orgs[r.Team.Organization] {
				missing("team "+r.Team.Name, "The team belongs to organization %q, which the records lack.", r.Team.Organization)
			}
		case r.Member != nil:
			if !teams[r.Member.Team] {
				missing("member "+r.Member.Email, "The member belongs to team %q, which the records lack.", r.Member.Team)
			}
		case r.ChartVersion != nil:
			cv := r.ChartVersion
			if !repos[cv.Repository] {
				missing(fmt.Sprintf("%s/%s@%s", cv.Repository, cv.Name, cv.Version), "The chart version's repository is not in the records.")
			}
		case r.Quota != nil:
			q := r.Quota
			ok := (q.Scope == chartctl.QuotaRepository && repos[q.Name]) || (q.Scope == chartctl.QuotaOrganization && orgs[q.Name])
			if !ok {
				missing("quota "+q.Scope+" "+q.Name, "A quota of a %s the records lack.", q.Scope)
			}
		case r.Retention != nil:
			if !repos[r.Retention.Repository] {
				missing("retention_policy "+r.Retention.Repository, "A retention policy of a repository the records lack.")
			}
		case r.Webhook != nil:
			w := r.Webhook
			switch {
			case w.Repository != "" && !repos[w.Repository]:
				missing("webhook "+w.ID, "A webhook of repository %q, which the records lack.", w.Repository)
			case w.Repository != "" && w.RepositoryID != "" && w.RepositoryID != repoIDs[w.Repository]:
				missing("webhook "+w.ID, "A webhook of repository %s, which the records lack (they hold another repository named %q).", w.RepositoryID, w.Repository)
			case w.Organization != "" && !orgs[w.Organization]:
				missing("webhook "+w.ID, "A webhook of organization %q, which the records lack.", w.Organization)
			}
		case r.OCIManifest != nil:
			m := r.OCIManifest
			target := m.Name + "@" + m.Digest
			for _, d := range m.Blobs {
				if !links[nameDigest{m.Name, d}] {
					missing(target, "The manifest refers to blob %s, which is not linked in %s.", d, m.Name)
				}
			}
			for _, d := range m.Manifests {
				if !manifests[nameDigest{m.Name, d}] {
					missing(target, "The index lists manifest %s, which %s does not hold.", d, m.Name)
				}
			}
			if c := m.Chart; c != nil && !charts[chartKey(c.Repository, c.Name, c.Version)] {
				missing(target, "The manifest stands for chart %s %s in %s, which the records lack.", c.Name, c.Version, c.Repository)
			}
		case r.OCITag != nil:
			t := r.OCITag
			if !manifests[nameDigest{t.Name, t.Digest}] {
				missing(t.Name+":"+t.Tag, "The tag points at manifest %s, which %s does not hold.", t.Digest, t.Name)
			}
		case r.Grant != nil:
			g := r.Grant
			switch {
			case !repoByID[g.RepositoryID]:
				missing("grant "+g.ID, "A grant of repository %s (%q), which the records lack.", g.RepositoryID, g.Repository)
			case g.Kind == chartctl.GrantTeam && !teamByID[g.SubjectID]:
				missing("grant "+g.ID, "A grant to team %s (%q), which the records lack.", g.SubjectID, g.Subject)
			case g.Kind == chartctl.GrantUser && !users[g.SubjectID]:
				missing("grant "+g.ID, "A grant to user %s, whom the records lack.", g.SubjectID)
			}
		case r.Robot != nil:
			if !orgByID[r.Robot.OrganizationID] {
				missing("robot "+r.Robot.FullName(), "The robot belongs to organization %s, which the records lack.", r.Robot.OrganizationID)
			}
		case r.Publisher != nil:
			if !robotByID[r.Publisher.RobotID] {
				missing("trusted_publisher "+r.Publisher.ID, "The trusted publisher belongs to robot %s, which the records lack.", r.Publisher.RobotID)
			}
		}
	}
}
