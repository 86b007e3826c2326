package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"sort"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// ID prefixes of the access records (issue #29).
const (
	prefixGrant     = "grant_"
	prefixRobot     = "robot_"
	prefixPublisher = "pub_"
	prefixExchanged = "exc_"
)

type grantRecord struct {
	ID           string `json:"id"`
	RepositoryID string `json:"repository_id"`
	Kind         string `json:"kind"`
	SubjectID    string `json:"subject_id"`
	Role         string `json:"role"`
	CreatedBy    string `json:"created_by,omitempty"`
	// CreatedAt is when the subject was first granted a role here.
	CreatedAt time.Time `json:"created_at"`
}

type robotRecord struct {
	ID                      string     `json:"id"`
	OrganizationID          string     `json:"organization_id"`
	Organization            string     `json:"organization"`
	Name                    string     `json:"name"`
	Description             string     `json:"description,omitempty"`
	Repositories            []string   `json:"repositories"`
	Permissions             []string   `json:"permissions"`
	SecretHash              []byte     `json:"secret_hash"`
	PreviousSecretHash      []byte     `json:"previous_secret_hash,omitempty"`
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at,omitempty"`
	Disabled                bool       `json:"disabled,omitempty"`
	ExpiresAt               *time.Time `json:"expires_at,omitempty"`
	LastUsedAt              *time.Time `json:"last_used_at,omitempty"`
	CreatedBy               string     `json:"created_by,omitempty"`
	CreatedAt               time.Time  `json:"created_at"`
}

type publisherRecord struct {
	ID        string            `json:"id"`
	RobotID   string            `json:"robot_id"`
	Issuer    string            `json:"issuer"`
	Audience  string            `json:"audience"`
	Claims    map[string]string `json:"claims,omitempty"`
	CreatedBy string            `json:"created_by,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
}

type exchangedRecord struct {
	ID          string    `json:"id"`
	RobotID     string    `json:"robot_id"`
	PublisherID string    `json:"publisher_id,omitempty"`
	Hash        []byte    `json:"hash"`
	ExpiresAt   time.Time `json:"expires_at"`
	CreatedAt   time.Time `json:"created_at"`
}

func newRobotRecord(r *chartctl.Robot) *robotRecord {
	return &robotRecord{
		ID: r.ID, OrganizationID: r.OrganizationID, Organization: r.Organization, Name: r.Name,
		Description: r.Description, Repositories: r.Repositories, Permissions: r.Permissions.Strings(),
		SecretHash: r.SecretHash, PreviousSecretHash: r.PreviousSecretHash,
		PreviousSecretExpiresAt: r.PreviousSecretExpiresAt, Disabled: r.Disabled, ExpiresAt: r.ExpiresAt,
		LastUsedAt: r.LastUsedAt, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt,
	}
}

func (r *robotRecord) domain() *chartctl.Robot {
	perms := make(chartctl.RobotPermissions, len(r.Permissions))
	for i, p := range r.Permissions {
		perms[i] = chartctl.RobotPermission(p)
	}
	var repos []string
	if len(r.Repositories) > 0 {
		repos = r.Repositories
	}
	return &chartctl.Robot{
		ID: r.ID, OrganizationID: r.OrganizationID, Organization: r.Organization, Name: r.Name,
		Description: r.Description, Repositories: repos, Permissions: perms,
		SecretHash: r.SecretHash, PreviousSecretHash: r.PreviousSecretHash,
		PreviousSecretExpiresAt: r.PreviousSecretExpiresAt, Disabled: r.Disabled, ExpiresAt: r.ExpiresAt,
		LastUsedAt: r.LastUsedAt, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt,
	}
}

func (p *publisherRecord) domain() *chartctl.TrustedPublisher {
	return &chartctl.TrustedPublisher{ID: p.ID, RobotID: p.RobotID, Issuer: p.Issuer, Audience: p.Audience,
		Claims: p.Claims, CreatedBy: p.CreatedBy, CreatedAt: p.CreatedAt}
}

func (c *exchangedRecord) domain() *chartctl.ExchangedCredential {
	return &chartctl.ExchangedCredential{ID: c.ID, RobotID: c.RobotID, PublisherID: c.PublisherID,
		Hash: c.Hash, ExpiresAt: c.ExpiresAt, CreatedAt: c.CreatedAt}
}

func nanos(t time.Time) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(t.UnixNano()))
	return b[:]
}

func fromNanos(b []byte) time.Time {
	if len(b) != 8 {
		return time.Time{}
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b))).UTC()
}

// PutGrant implements chartctl.AccessStore.
func (db *DB) PutGrant(ctx context.Context, g *chartctl.Grant) (*chartctl.Grant, error) {
	if !g.Kind.Valid() {
		return nil, chartctl.Invalid("kind", "Invalid grant kind %q: use team or user.", g.Kind)
	}
	if !g.Role.Valid() {
		return nil, chartctl.Invalid("role", "Invalid role %q: use read, write, maintain or admin.", g.Role)
	}
	if g.ID == "" {
		id, err := db.newID(prefixGrant)
		if err != nil {
			return nil, err
		}
		g.ID = id
	}
	if g.CreatedAt.IsZero() {
		g.CreatedAt = db.now()
	}
	var out *chartctl.Grant
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		repo, err := repoByID(tx, g.RepositoryID)
		if err != nil {
			return err
		}
		if err := subjectExists(tx, g.Kind, g.SubjectID); err != nil {
			return err
		}
		k := key(g.RepositoryID, string(g.Kind), g.SubjectID)
		grants := bucket(tx, grantsBucket)
		rec := &grantRecord{ID: g.ID, RepositoryID: g.RepositoryID, Kind: string(g.Kind), SubjectID: g.SubjectID,
			Role: string(g.Role), CreatedBy: g.CreatedBy, CreatedAt: g.CreatedAt}
		// Replacing keeps the grant's identity; only the role changes.
		if v := grants.Get(k); v != nil {
			old, err := decode[grantRecord](v)
			if err != nil {
				return err
			}
			old.Role = rec.Role
			rec = old
		}
		v, err := encode(rec)
		if err != nil {
			return err
		}
		if err := grants.Put(k, v); err != nil {
			return err
		}
		if err := bucket(tx, subjectGrantsBucket).Put(key(g.SubjectID, g.RepositoryID), []byte(g.Kind)); err != nil {
			return err
		}
		out, err = grantDomain(tx, rec, repo.Name)
		return err
	})
	return out, wrap("put grant", err)
}

// repoByID finds a repository by ID. Repositories are keyed by name, so
// this reads them all; grants are written rarely.
func repoByID(tx *bbolt.Tx, id string) (*repoRecord, error) {
	return recordByID(tx, reposBucket, id, "Repository", func(r *repoRecord) string { return r.ID })
}

// recordByID finds the record of bucket whose ID is id by reading them all
// (the bucket is keyed by name); what names the kind in the ENOTFOUND
// error. Records not mentioning id are not decoded.
func recordByID[T any](tx *bbolt.Tx, name, id, what string, idOf func(*T) string) (*T, error) {
	var found *T
	if id != "" {
		err := bucket(tx, name).ForEach(func(_, v []byte) error {
			if found != nil || !bytes.Contains(v, []byte(id)) {
				return nil
			}
			r, err := decode[T](v)
			if err != nil {
				return err
			}
			if idOf(r) == id {
				found = r
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if found == nil {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "%s %q not found.", what, id)
	}
	return found, nil
}

// teamByID finds a team by ID among all teams (keyed by name).
func teamByID(tx *bbolt.Tx, id string) (*teamRecord, error) {
	return recordByID(tx, teamsBucket, id, "Team", func(r *teamRecord) string { return r.ID })
}

func subjectExists(tx *bbolt.Tx, kind chartctl.GrantKind, id string) error {
	if kind == chartctl.GrantTeam {
		_, err := teamByID(tx, id)
		return err
	}
	_, err := getUserRecord(tx, id)
	return err
}

// grantDomain fills the grant's names from the current records: repo is
// the repository's name.
func grantDomain(tx *bbolt.Tx, r *grantRecord, repo string) (*chartctl.Grant, error) {
	g := &chartctl.Grant{ID: r.ID, RepositoryID: r.RepositoryID, Repository: repo, Kind: chartctl.GrantKind(r.Kind),
		SubjectID: r.SubjectID, Role: chartctl.RepoRole(r.Role), CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt}
	if g.Kind == chartctl.GrantTeam {
		t, err := teamByID(tx, r.SubjectID)
		if err != nil {
			return nil, err
		}
		g.Subject = t.Name
	} else {
		u, err := getUserRecord(tx, r.SubjectID)
		if err != nil {
			return nil, err
		}
		g.Subject = u.Email
	}
	return g, nil
}

// Grants implements chartctl.AccessStore.
func (db *DB) Grants(ctx context.Context, repositoryID string) ([]*chartctl.Grant, error) {
	var out []*chartctl.Grant
	err := db.db.View(func(tx *bbolt.Tx) error {
		var repo string
		return scanPrefix(bucket(tx, grantsBucket), prefix(repositoryID), func(_, v []byte) error {
			r, err := decode[grantRecord](v)
			if err != nil {
				return err
			}
			if repo == "" {
				rr, err := repoByID(tx, repositoryID)
				if err != nil {
					return err
				}
				repo = rr.Name
			}
			g, err := grantDomain(tx, r, repo)
			if err != nil {
				return err
			}
			out = append(out, g)
			return nil
		})
	})
	if err != nil {
		return nil, wrap("list grants", err)
	}
	sortGrants(out)
	return out, nil
}

// sortGrants orders grants teams first, then by subject name.
func sortGrants(gs []*chartctl.Grant) {
	sort.Slice(gs, func(i, j int) bool {
		if gs[i].Kind != gs[j].Kind {
			return gs[i].Kind == chartctl.GrantTeam
		}
		return gs[i].Subject < gs[j].Subject
	})
}

// DeleteGrant implements chartctl.AccessStore.
func (db *DB) DeleteGrant(ctx context.Context, repositoryID string, kind chartctl.GrantKind, subjectID string) error {
	return wrap("delete grant", db.update(ctx, func(tx *bbolt.Tx) error {
		k := key(repositoryID, string(kind), subjectID)
		if bucket(tx, grantsBucket).Get(k) == nil {
			return chartctl.Errorf(chartctl.ENOTFOUND, "The repository has no grant to that %s.", kind)
		}
		return deleteGrant(tx, repositoryID, string(kind), subjectID)
	}))
}

func deleteGrant(tx *bbolt.Tx, repositoryID, kind, subjectID string) error {
	if err := bucket(tx, grantsBucket).Delete(key(repositoryID, kind, subjectID)); err != nil {
		return err
	}
	return bucket(tx, subjectGrantsBucket).Delete(key(subjectID, repositoryID))
}

// deleteSubjectGrants deletes every grant to the user or team id.
func deleteSubjectGrants(tx *bbolt.Tx, id string) error {
	type ref struct{ repo, kind string }
	var refs []ref
	pfx := prefix(id)
	if err := scanPrefix(bucket(tx, subjectGrantsBucket), pfx, func(k, v []byte) error {
		refs = append(refs, ref{string(k[len(pfx):]), string(v)})
		return nil
	}); err != nil {
		return err
	}
	for _, r := range refs {
		if err := deleteGrant(tx, r.repo, r.kind, id); err != nil {
			return err
		}
	}
	return nil
}

// deleteRepoGrants deletes every grant of the repository id.
func deleteRepoGrants(tx *bbolt.Tx, id string) error {
	var recs []*grantRecord
	if err := scanPrefix(bucket(tx, grantsBucket), prefix(id), func(_, v []byte) error {
		r, err := decode[grantRecord](v)
		if err != nil {
			return err
		}
		recs = append(recs, r)
		return nil
	}); err != nil {
		return err
	}
	for _, r := range recs {
		if err := deleteGrant(tx, r.RepositoryID, r.Kind, r.SubjectID); err != nil {
			return err
		}
	}
	return nil
}

// GrantsFor implements chartctl.AccessStore.
func (db *DB) GrantsFor(ctx context.Context, userID, email string) (map[string]chartctl.RepoRole, error) {
	roles := map[string]chartctl.RepoRole{}
	err := db.db.View(func(tx *bbolt.Tx) error {
		subjects := []string{}
		if userID != "" {
			subjects = append(subjects, userID)
		}
		if email := lowerEmail(email); email != "" {
			teams := bucket(tx, teamsBucket)
			pfx := prefix(email)
			if err := scanPrefix(bucket(tx, emailTeamsBucket), pfx, func(k, _ []byte) error {
				v := teams.Get(k[len(pfx):])
				if v == nil {
					return nil
				}
				t, err := decode[teamRecord](v)
				if err != nil {
					return err
				}
				subjects = append(subjects, t.ID)
				return nil
			}); err != nil {
				return err
			}
		}
		grants := bucket(tx, grantsBucket)
		for _, s := range subjects {
			pfx := prefix(s)
			if err := scanPrefix(bucket(tx, subjectGrantsBucket), pfx, func(k, kind []byte) error {
				repo := string(k[len(pfx):])
				v := grants.Get(key(repo, string(kind), s))
				if v == nil {
					return nil
				}
				r, err := decode[grantRecord](v)
				if err != nil {
					return err
				}
				roles[repo] = roles[repo].Max(chartctl.RepoRole(r.Role))
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap("get grants", err)
	}
	return roles, nil
}

func robotNotFound() error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Robot account not found.")
}

// CreateRobot implements chartctl.AccessStore.
func (db *DB) CreateRobot(ctx context.Context, r *chartctl.Robot) error {
	if err := chartctl.ValidateName("name", r.Name); err != nil {
		return err
	}
	if len(r.SecretHash) == 0 {
		return chartctl.Invalid("secret", "A robot account needs a secret hash.")
	}
	if err := db.fill(&r.ID, prefixRobot, &r.CreatedAt); err != nil {
		return err
	}
	return wrap("create robot", db.update(ctx, func(tx *bbolt.Tx) error {
		org, err := orgByID(tx, r.OrganizationID)
		if err != nil {
			return err
		}
		r.Organization = org.Name
		names := bucket(tx, robotNamesBucket)
		if names.Get(key(org.ID, r.Name)) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "The organization already has a robot account named %q; choose another name.", r.Name)
		}
		if bucket(tx, robotsBucket).Get([]byte(r.ID)) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "A robot account with ID %q already exists.", r.ID)
		}
		if bucket(tx, robotSecretsBucket).Get(r.SecretHash) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "A robot account with this secret already exists.")
		}
		if err := names.Put(key(org.ID, r.Name), []byte(r.ID)); err != nil {
			return err
		}
		return putRobot(tx, nil, newRobotRecord(r))
	}))
}

// orgByID finds an organization by ID among all of them (keyed by name).
func orgByID(tx *bbolt.Tx, id string) (*orgRecord, error) {
	return recordByID(tx, orgsBucket, id, "Organization", func(r *orgRecord) string { return r.ID })
}

// putRobot writes r and keeps the secret index in step with it: the
// hashes old had and r has not are dropped.
func putRobot(tx *bbolt.Tx, old, r *robotRecord) error {
	secrets := bucket(tx, robotSecretsBucket)
	if old != nil {
		for _, h := range [][]byte{old.SecretHash, old.PreviousSecretHash} {
			if len(h) > 0 && !bytes.Equal(h, r.SecretHash) && !bytes.Equal(h, r.PreviousSecretHash) {
				if err := secrets.Delete(h); err != nil {
					return err
				}
			}
		}
	}
	for _, h := range [][]byte{r.SecretHash, r.PreviousSecretHash} {
		if len(h) > 0 {
			if err := secrets.Put(h, []byte(r.ID)); err != nil {
				return err
			}
		}
	}
	v, err := encode(r)
	if err != nil {
		return err
	}
	return bucket(tx, robotsBucket).Put([]byte(r.ID), v)
}

func getRobot(tx *bbolt.Tx, id string) (*robotRecord, error) {
	v := bucket(tx, robotsBucket).Get([]byte(id))
	if v == nil || id == "" {
		return nil, robotNotFound()
	}
	return decode[robotRecord](v)
}

// Robot implements chartctl.AccessStore.
func (db *DB) Robot(ctx context.Context, org, name string) (*chartctl.Robot, error) {
	return db.robotBy(func(tx *bbolt.Tx) ([]byte, error) {
		v := bucket(tx, orgsBucket).Get([]byte(org))
		if v == nil {
			return nil, robotNotFound()
		}
		o, err := decode[orgRecord](v)
		if err != nil {
			return nil, err
		}
		return bucket(tx, robotNamesBucket).Get(key(o.ID, name)), nil
	})
}

// RobotByID implements chartctl.AccessStore.
func (db *DB) RobotByID(ctx context.Context, id string) (*chartctl.Robot, error) {
	return db.robotBy(func(*bbolt.Tx) ([]byte, error) { return []byte(id), nil })
}

// RobotBySecretHash implements chartctl.AccessStore.
func (db *DB) RobotBySecretHash(ctx context.Context, h []byte) (*chartctl.Robot, error) {
	return db.robotBy(func(tx *bbolt.Tx) ([]byte, error) {
		if len(h) == 0 {
			return nil, nil
		}
		return bucket(tx, robotSecretsBucket).Get(h), nil
	})
}

// robotBy reads the robot whose ID find returns, in one read transaction;
// a nil ID is ENOTFOUND.
func (db *DB) robotBy(find func(tx *bbolt.Tx) ([]byte, error)) (*chartctl.Robot, error) {
	var out *chartctl.Robot
	err := db.db.View(func(tx *bbolt.Tx) error {
		id, err := find(tx)
		if err != nil {
			return err
		}
		if id == nil {
			return robotNotFound()
		}
		r, err := getRobot(tx, string(id))
		if err != nil {
			return err
		}
		out = r.domain()
		return nil
	})
	return out, wrap("get robot", err)
}

// Robots implements chartctl.AccessStore.
func (db *DB) Robots(ctx context.Context, org string) ([]*chartctl.Robot, error) {
	var out []*chartctl.Robot
	err := db.db.View(func(tx *bbolt.Tx) error {
		v := bucket(tx, orgsBucket).Get([]byte(org))
		if v == nil {
			return nil
		}
		o, err := decode[orgRecord](v)
		if err != nil {
			return err
		}
		return scanPrefix(bucket(tx, robotNamesBucket), prefix(o.ID), func(_, id []byte) error {
			r, err := getRobot(tx, string(id))
			if err != nil {
				return err
			}
			out = append(out, r.domain())
			return nil
		})
	})
	if err != nil {
		return nil, wrap("list robots", err)
	}
	return out, nil
}

// UpdateRobot implements chartctl.AccessStore.
func (db *DB) UpdateRobot(ctx context.Context, id string, upd chartctl.RobotUpdate) (*chartctl.Robot, error) {
	var out *chartctl.Robot
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		r, err := getRobot(tx, id)
		if err != nil {
			return err
		}
		old := *r
		if upd.Description != nil {
			r.Description = *upd.Description
		}
		if upd.Repositories != nil {
			r.Repositories = upd.Repositories
		}
		if upd.Permissions != nil {
			r.Permissions = upd.Permissions.Strings()
		}
		if upd.Disabled != nil {
			r.Disabled = *upd.Disabled
		}
		if upd.ClearExpiry {
			r.ExpiresAt = nil
		} else if upd.ExpiresAt != nil {
			t := upd.ExpiresAt.UTC().Round(0)
			r.ExpiresAt = &t
		}
		if r.Disabled {
			// A disabled robot's exchanged credentials end at once, not
			// when they expire (chartctl.AccessStore.UpdateRobot).
			if err := deleteRobotExchanged(tx, id); err != nil {
				return err
			}
		}
		if err := putRobot(tx, &old, r); err != nil {
			return err
		}
		out = r.domain()
		return nil
	})
	return out, wrap("update robot", err)
}

// RotateRobot implements chartctl.AccessStore.
func (db *DB) RotateRobot(ctx context.Context, id string, secretHash []byte, previousUntil *time.Time) (*chartctl.Robot, error) {
	if len(secretHash) == 0 {
		return nil, chartctl.Invalid("secret", "A robot account needs a secret hash.")
	}
	var out *chartctl.Robot
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		r, err := getRobot(tx, id)
		if err != nil {
			return err
		}
		if id := bucket(tx, robotSecretsBucket).Get(secretHash); id != nil && string(id) != r.ID {
			return chartctl.Errorf(chartctl.ECONFLICT, "A robot account with this secret already exists.")
		}
		old := *r
		if previousUntil != nil {
			t := previousUntil.UTC().Round(0)
			r.PreviousSecretHash, r.PreviousSecretExpiresAt = r.SecretHash, &t
		} else {
			r.PreviousSecretHash, r.PreviousSecretExpiresAt = nil, nil
		}
		r.SecretHash = secretHash
		if err := putRobot(tx, &old, r); err != nil {
			return err
		}
		out = r.domain()
		return nil
	})
	return out, wrap("rotate robot", err)
}

// DeleteRobot implements chartctl.AccessStore.
func (db *DB) DeleteRobot(ctx context.Context, id string) error {
	return wrap("delete robot", db.update(ctx, func(tx *bbolt.Tx) error {
		r, err := getRobot(tx, id)
		if err != nil {
			return err
		}
		return deleteRobot(tx, r)
	}))
}

// deleteRobot deletes r with its indexes, publishers and exchanged
// credentials.
func deleteRobot(tx *bbolt.Tx, r *robotRecord) error {
	if err := deleteRobotExchanged(tx, r.ID); err != nil {
		return err
	}
	var pubs []string
	pfx := prefix(r.ID)
	if err := scanPrefix(bucket(tx, robotPublishersBucket), pfx, func(k, _ []byte) error {
		pubs = append(pubs, string(k[len(pfx):]))
		return nil
	}); err != nil {
		return err
	}
	for _, p := range pubs {
		if err := deletePublisher(tx, p); err != nil {
			return err
		}
	}
	secrets := bucket(tx, robotSecretsBucket)
	for _, h := range [][]byte{r.SecretHash, r.PreviousSecretHash} {
		if len(h) > 0 {
			if err := secrets.Delete(h); err != nil {
				return err
			}
		}
	}
	if err := bucket(tx, robotNamesBucket).Delete(key(r.OrganizationID, r.Name)); err != nil {
		return err
	}
	return bucket(tx, robotsBucket).Delete([]byte(r.ID))
}

// deleteRobotExchanged deletes the credentials exchanged for robot id.
// They are few and short-lived, so this reads them all.
func deleteRobotExchanged(tx *bbolt.Tx, id string) error {
	dead, err := keysMatching(bucket(tx, exchangedBucket), func(_ []byte, c exchangedRecord) bool { return c.RobotID == id })
	if err != nil {
		return err
	}
	for _, k := range dead {
		if err := bucket(tx, exchangedBucket).Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// TouchRobots implements chartctl.AccessStore. Like TouchAPIKeys it is
// bookkeeping, not a change: it writes no audit entry.
func (db *DB) TouchRobots(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	return wrap("touch robots", db.db.Update(func(tx *bbolt.Tx) error {
		for id, at := range used {
			r, err := getRobot(tx, id)
			if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
				continue
			} else if err != nil {
				return err
			}
			at = at.UTC().Round(0)
			if r.LastUsedAt != nil && !at.After(*r.LastUsedAt) {
				continue
			}
			r.LastUsedAt = &at
			v, err := encode(r)
			if err != nil {
				return err
			}
			if err := bucket(tx, robotsBucket).Put([]byte(id), v); err != nil {
				return err
			}
		}
		return nil
	}))
}

// AddPublisher implements chartctl.AccessStore.
func (db *DB) AddPublisher(ctx context.Context, p *chartctl.TrustedPublisher) error {
	if err := db.fill(&p.ID, prefixPublisher, &p.CreatedAt); err != nil {
		return err
	}
	return wrap("add publisher", db.update(ctx, func(tx *bbolt.Tx) error {
		if _, err := getRobot(tx, p.RobotID); err != nil {
			return err
		}
		if bucket(tx, publishersBucket).Get([]byte(p.ID)) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "A trusted publisher with ID %q already exists.", p.ID)
		}
		v, err := encode(&publisherRecord{ID: p.ID, RobotID: p.RobotID, Issuer: p.Issuer, Audience: p.Audience,
			Claims: p.Claims, CreatedBy: p.CreatedBy, CreatedAt: p.CreatedAt})
		if err != nil {
			return err
		}
		if err := bucket(tx, publishersBucket).Put([]byte(p.ID), v); err != nil {
			return err
		}
		if err := bucket(tx, robotPublishersBucket).Put(key(p.RobotID, p.ID), nil); err != nil {
			return err
		}
		return bucket(tx, issuerPublishersBucket).Put(key(p.Issuer, p.ID), nil)
	}))
}

// publishersUnder reads the publishers whose IDs follow pfx in index b,
// oldest first.
func publishersUnder(tx *bbolt.Tx, b string, pfx []byte) ([]*chartctl.TrustedPublisher, error) {
	var out []*chartctl.TrustedPublisher
	pubs := bucket(tx, publishersBucket)
	err := scanPrefix(bucket(tx, b), pfx, func(k, _ []byte) error {
		v := pubs.Get(k[len(pfx):])
		if v == nil {
			return nil
		}
		r, err := decode[publisherRecord](v)
		if err != nil {
			return err
		}
		out = append(out, r.domain())
		return nil
	})
	// IDs are ULIDs, so key order is creation order within a process;
	// sort by time too, for publishers restored from elsewhere.
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, err
}

// Publishers implements chartctl.AccessStore.
func (db *DB) Publishers(ctx context.Context, robotID string) ([]*chartctl.TrustedPublisher, error) {
	var out []*chartctl.TrustedPublisher
	err := db.db.View(func(tx *bbolt.Tx) error {
		var err error
		out, err = publishersUnder(tx, robotPublishersBucket, prefix(robotID))
		return err
	})
	return out, wrap("list publishers", err)
}

// PublishersByIssuer implements chartctl.AccessStore.
func (db *DB) PublishersByIssuer(ctx context.Context, issuer string) ([]*chartctl.TrustedPublisher, error) {
	var out []*chartctl.TrustedPublisher
	err := db.db.View(func(tx *bbolt.Tx) error {
		var err error
		out, err = publishersUnder(tx, issuerPublishersBucket, prefix(issuer))
		return err
	})
	return out, wrap("list publishers", err)
}

// DeletePublisher implements chartctl.AccessStore.
func (db *DB) DeletePublisher(ctx context.Context, robotID, id string) error {
	return wrap("delete publisher", db.update(ctx, func(tx *bbolt.Tx) error {
		if bucket(tx, robotPublishersBucket).Get(key(robotID, id)) == nil ||
			bucket(tx, publishersBucket).Get([]byte(id)) == nil {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Trusted publisher %q not found.", id)
		}
		return deletePublisher(tx, id)
	}))
}

func deletePublisher(tx *bbolt.Tx, id string) error {
	pubs := bucket(tx, publishersBucket)
	v := pubs.Get([]byte(id))
	if v == nil {
		return nil
	}
	r, err := decode[publisherRecord](v)
	if err != nil {
		return err
	}
	if err := bucket(tx, robotPublishersBucket).Delete(key(r.RobotID, id)); err != nil {
		return err
	}
	if err := bucket(tx, issuerPublishersBucket).Delete(key(r.Issuer, id)); err != nil {
		return err
	}
	return pubs.Delete([]byte(id))
}

// CreateExchangedCredential implements chartctl.AccessStore.
func (db *DB) CreateExchangedCredential(ctx context.Context, c *chartctl.ExchangedCredential) error {
	if len(c.Hash) == 0 {
		return chartctl.Invalid("hash", "An exchanged credential needs a hash.")
	}
	if err := db.fill(&c.ID, prefixExchanged, &c.CreatedAt); err != nil {
		return err
	}
	now := db.now()
	return wrap("create exchanged credential", db.update(ctx, func(tx *bbolt.Tx) error {
		if _, err := getRobot(tx, c.RobotID); err != nil {
			return err
		}
		ex := bucket(tx, exchangedBucket)
		dead, err := keysMatching(ex, func(_ []byte, r exchangedRecord) bool { return !now.Before(r.ExpiresAt) })
		if err != nil {
			return err
		}
		for _, k := range dead {
			if err := ex.Delete(k); err != nil {
				return err
			}
		}
		if ex.Get(c.Hash) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "An exchanged credential with that hash already exists.")
		}
		v, err := encode(&exchangedRecord{ID: c.ID, RobotID: c.RobotID, PublisherID: c.PublisherID, Hash: c.Hash,
			ExpiresAt: c.ExpiresAt.UTC().Round(0), CreatedAt: c.CreatedAt})
		if err != nil {
			return err
		}
		return ex.Put(c.Hash, v)
	}))
}

// ExchangedCredentialByHash implements chartctl.AccessStore. An expired
// credential not pruned yet is not found either.
func (db *DB) ExchangedCredentialByHash(ctx context.Context, h []byte) (*chartctl.ExchangedCredential, error) {
	var out *chartctl.ExchangedCredential
	now := db.now()
	err := db.db.View(func(tx *bbolt.Tx) error {
		var v []byte
		if len(h) > 0 {
			v = bucket(tx, exchangedBucket).Get(h)
		}
		if v == nil {
			return exchangedNotFound()
		}
		r, err := decode[exchangedRecord](v)
		if err != nil {
			return err
		}
		if !now.Before(r.ExpiresAt) {
			return exchangedNotFound()
		}
		out = r.domain()
		return nil
	})
	return out, wrap("get exchanged credential", err)
}

func exchangedNotFound() error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Credential not found or expired; exchange a new OIDC token at /v1/oidc/token.")
}

// RememberTokenID implements chartctl.AccessStore.
func (db *DB) RememberTokenID(ctx context.Context, issuer, jti string, until time.Time) (bool, error) {
	fresh := false
	now := db.now()
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		ids := bucket(tx, tokenIDsBucket)
		var dead [][]byte
		if err := ids.ForEach(func(k, v []byte) error {
			if !now.Before(fromNanos(v)) {
				dead = append(dead, bytes.Clone(k))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range dead {
			if err := ids.Delete(k); err != nil {
				return err
			}
		}
		k := key(issuer, jti)
		if ids.Get(k) != nil {
			return nil
		}
		fresh = true
		return ids.Put(k, nanos(until))
	})
	return fresh, wrap("remember token id", err)
}

// DeleteOrganization implements chartctl.AccessStore.
func (db *DB) DeleteOrganization(ctx context.Context, name string) error {
	return wrap("delete organization", db.update(ctx, func(tx *bbolt.Tx) error {
		v := bucket(tx, orgsBucket).Get([]byte(name))
		if v == nil {
			return orgNotFound(name)
		}
		o, err := decode[orgRecord](v)
		if err != nil {
			return err
		}
		owned := 0
		if err := bucket(tx, reposBucket).ForEach(func(_, v []byte) error {
			r, err := decode[repoRecord](v)
			if err == nil && r.Organization == name {
				owned++
			}
			return err
		}); err != nil {
			return err
		}
		if owned > 0 {
			return chartctl.Errorf(chartctl.ECONFLICT,
				"Organization %q still owns %d repositories; delete them or move them to another owner first.", name, owned)
		}
		if err := deleteOrgTeams(tx, name); err != nil {
			return err
		}
		if err := deleteScopeTrust(tx, chartctl.TrustScopeOrganization, o.ID); err != nil {
			return err
		}
		var robots []string
		if err := scanPrefix(bucket(tx, robotNamesBucket), prefix(o.ID), func(_, id []byte) error {
			robots = append(robots, string(id))
			return nil
		}); err != nil {
			return err
		}
		for _, id := range robots {
			r, err := getRobot(tx, id)
			if err != nil {
				return err
			}
			if err := deleteRobot(tx, r); err != nil {
				return err
			}
		}
		hooks, err := keysMatching(bucket(tx, webhooksBucket), func(_ []byte, w webhookRecord) bool {
			return w.Repository == "" && w.Organization == name
		})
		if err != nil {
			return err
		}
		for _, id := range hooks {
			if err := deleteWebhook(tx, string(id)); err != nil {
				return err
			}
		}
		if err := bucket(tx, quotasBucket).Delete(key(chartctl.QuotaOrganization, name)); err != nil {
			return err
		}
		if err := deletePolicy(tx, chartctl.PolicyOrganization, o.ID); err != nil {
			return err
		}
		if err := bucket(tx, usageBucket).Delete(key(chartctl.QuotaOrganization, name)); err != nil {
			return err
		}
		if o.CreatedBy != "" {
			if err := bucket(tx, orgCreatorsBucket).Delete(key(o.CreatedBy, name)); err != nil {
				return err
			}
		}
		if err := db.putOrgTombstone(tx, name); err != nil {
			return err
		}
		return bucket(tx, orgsBucket).Delete([]byte(name))
	}))
}

// deleteOrgTeams deletes the organization's teams with their memberships
// and grants.
func deleteOrgTeams(tx *bbolt.Tx, org string) error {
	var names []string
	pfx := prefix(org)
	if err := scanPrefix(bucket(tx, orgTeamsBucket), pfx, func(k, _ []byte) error {
		names = append(names, string(k[len(pfx):]))
		return nil
	}); err != nil {
		return err
	}
	members := bucket(tx, membersBucket)
	for _, name := range names {
		t, err := getTeam(tx, name)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			continue
		} else if err != nil {
			return err
		}
		var ms []*memberRecord
		if mb := members.Bucket([]byte(name)); mb != nil {
			if err := mb.ForEach(func(_, v []byte) error {
				m, err := decode[memberRecord](v)
				if err == nil {
					ms = append(ms, m)
				}
				return err
			}); err != nil {
				return err
			}
		}
		for _, m := range ms {
			if err := removeMember(tx, t, m); err != nil {
				return err
			}
		}
		if members.Bucket([]byte(name)) != nil {
			if err := members.DeleteBucket([]byte(name)); err != nil {
				return err
			}
		}
		if err := deleteSubjectGrants(tx, t.ID); err != nil {
			return err
		}
		if err := bucket(tx, teamsBucket).Delete([]byte(name)); err != nil {
			return err
		}
		if err := bucket(tx, orgTeamsBucket).Delete(key(org, name)); err != nil {
			return err
		}
	}
	return nil
}

// putOrgTombstone reserves a deleted organization's name for the name
// grace period, as putTombstone does a repository's, and purges the
// reservations that have expired.
func (db *DB) putOrgTombstone(tx *bbolt.Tx, name string) error {
	tombs := bucket(tx, orgTombstonesBucket)
	now := db.now()
	var expired [][]byte
	if err := tombs.ForEach(func(k, v []byte) error {
		if !now.Before(fromNanos(v).Add(db.nameGrace)) {
			expired = append(expired, bytes.Clone(k))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, k := range expired {
		if err := tombs.Delete(k); err != nil {
			return err
		}
	}
	if db.nameGrace <= 0 {
		return nil
	}
	return tombs.Put([]byte(name), nanos(now))
}

// claimOrgTombstone refuses the name of an organization deleted less
// than the name grace period ago, and forgets an older reservation.
func (db *DB) claimOrgTombstone(tx *bbolt.Tx, name string) error {
	tombs := bucket(tx, orgTombstonesBucket)
	v := tombs.Get([]byte(name))
	if v == nil {
		return nil
	}
	if db.now().Before(fromNanos(v).Add(db.nameGrace)) {
		return nameNotAvailable(name)
	}
	return tombs.Delete([]byte(name))
}
