package chartctl

import "context"

// DumpRecord is one record of a store's logical dump: exactly one field is
// set. Dumps are engine-neutral: a dump of one engine restores into
// another through the Store methods (internal/backup holds the archive
// format).
type DumpRecord struct {
	User         *User
	APIKey       *APIKey
	OAuthClient  *OAuthClient
	Organization *Organization
	Repository   *Repository
	Team         *Team
	Member       *Member
	// ChartVersion carries its Metadata and IndexEntry.
	ChartVersion *ChartVersion
}

// Exporter is a store that can dump every record it keeps from one read
// transaction, so the dump is a consistent snapshot even while writes go
// on. Records come in dependency order: users, API keys, OAuth clients,
// organizations, repositories, teams, members, chart versions. snapshot,
// if set, is called once the transaction has begun (before the first
// record), when the snapshot's content is fixed.
type Exporter interface {
	Export(ctx context.Context, snapshot func(), fn func(DumpRecord) error) error
}
