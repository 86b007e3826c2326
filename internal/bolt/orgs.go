package bolt

import (
	"bytes"
	"context"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// CreateOrganization stores o, filling ID and CreatedAt when empty. It
// returns EINVALID for an invalid name and ECONFLICT if the name is taken.
func (db *DB) CreateOrganization(ctx context.Context, o *chartctl.Organization) error {
	if err := chartctl.ValidateName("name", o.Name); err != nil {
		return err
	}
	if err := db.fill(&o.ID, prefixOrg, &o.CreatedAt); err != nil {
		return err
	}
	return wrap("create organization", db.update(ctx, func(tx *bbolt.Tx) error {
		orgs := bucket(tx, orgsBucket)
		if orgs.Get([]byte(o.Name)) != nil {
			return nameNotAvailable(o.Name)
		}
		if err := db.claimOrgTombstone(tx, o.Name); err != nil {
			return err
		}
		v, err := encode(newOrgRecord(o))
		if err != nil {
			return err
		}
		if err := orgs.Put([]byte(o.Name), v); err != nil {
			return err
		}
		if o.CreatedBy == "" {
			return nil
		}
		return bucket(tx, orgCreatorsBucket).Put(key(o.CreatedBy, o.Name), nil)
	}))
}

// Organization returns the organization named name. It returns ENOTFOUND
// if none.
func (db *DB) Organization(ctx context.Context, name string) (*chartctl.Organization, error) {
	var o *chartctl.Organization
	err := db.db.View(func(tx *bbolt.Tx) error {
		v := bucket(tx, orgsBucket).Get([]byte(name))
		if v == nil {
			return orgNotFound(name)
		}
		r, err := decode[orgRecord](v)
		if err != nil {
			return err
		}
		o = r.domain()
		return nil
	})
	return o, wrap("get organization", err)
}

// Organizations returns every organization, by name.
func (db *DB) Organizations(ctx context.Context) ([]*chartctl.Organization, error) {
	var out []*chartctl.Organization
	err := db.db.View(func(tx *bbolt.Tx) error {
		return bucket(tx, orgsBucket).ForEach(func(_, v []byte) error {
			r, err := decode[orgRecord](v)
			if err != nil {
				return err
			}
			out = append(out, r.domain())
			return nil
		})
	})
	if err != nil {
		return nil, wrap("list organizations", err)
	}
	return out, nil
}

// OrgRoles returns the roles the user with this id and email holds, by
// organization name: the highest over the teams where email is a member
// (compared case-insensitively), and owner where the user created the
// organization. Either argument may be empty.
func (db *DB) OrgRoles(ctx context.Context, userID, email string) (map[string]chartctl.Role, error) {
	roles := map[string]chartctl.Role{}
	err := db.db.View(func(tx *bbolt.Tx) error {
		if email := lowerEmail(email); email != "" {
			if err := scanPrefix(bucket(tx, emailTeamsBucket), prefix(email), func(_, v []byte) error {
				org, role, ok := bytes.Cut(v, []byte(sep))
				if !ok {
					return nil
				}
				roles[string(org)] = roles[string(org)].Max(chartctl.Role(role))
				return nil
			}); err != nil {
				return err
			}
		}
		if userID == "" {
			return nil
		}
		pfx := prefix(userID)
		return scanPrefix(bucket(tx, orgCreatorsBucket), pfx, func(k, _ []byte) error {
			roles[string(k[len(pfx):])] = chartctl.RoleOwner
			return nil
		})
	})
	if err != nil {
		return nil, wrap("get organization roles", err)
	}
	return roles, nil
}

func orgNotFound(name string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Organization %q not found.", name)
}
