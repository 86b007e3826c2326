package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

func unknownDevice() error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "The code is invalid or expired.")
}

const deviceCols = `device_code_hash, user_code_hash, client_id, scopes, interval_ms, created_at, expires_at,
	last_polled_at, status, user_id, grant_id, redeemed_at`

func scanDevice(row pgx.Row) (*chartctl.DeviceAuthorization, error) {
	var (
		d        chartctl.DeviceAuthorization
		scopes   []string
		interval int64
		status   string
	)
	if err := row.Scan(&d.DeviceCodeHash, &d.UserCodeHash, &d.ClientID, &scopes, &interval, &d.CreatedAt, &d.ExpiresAt,
		&d.LastPolledAt, &status, &d.UserID, &d.GrantID, &d.RedeemedAt); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, unknownDevice()
		}
		return nil, err
	}
	d.Scopes, d.Interval, d.Status = scopesOf(scopes), time.Duration(interval)*time.Millisecond, chartctl.DeviceStatus(status)
	d.CreatedAt, d.ExpiresAt, d.LastPolledAt, d.RedeemedAt = utc(d.CreatedAt), utc(d.ExpiresAt), utcPtr(d.LastPolledAt), utcPtr(d.RedeemedAt)
	return &d, nil
}

// putDevice writes every changing column of d.
func putDevice(ctx context.Context, tx pgx.Tx, d *chartctl.DeviceAuthorization) error {
	_, err := tx.Exec(ctx, `UPDATE oauth_device_codes SET scopes = $2, interval_ms = $3, last_polled_at = $4, status = $5,
		user_id = $6, grant_id = $7, redeemed_at = $8 WHERE device_code_hash = $1`,
		d.DeviceCodeHash, d.Scopes.Strings(), d.Interval.Milliseconds(), utcPtr(d.LastPolledAt), string(d.Status),
		d.UserID, d.GrantID, utcPtr(d.RedeemedAt))
	return err
}

// CreateDeviceAuthorization stores d. A user code held by an expired
// request is taken over: that request is deleted in the same transaction.
func (db *DB) CreateDeviceAuthorization(ctx context.Context, d *chartctl.DeviceAuthorization) error {
	if len(d.DeviceCodeHash) == 0 || len(d.UserCodeHash) == 0 {
		return chartctl.Invalid("device_code", "A device authorization needs a device code hash and a user code hash.")
	}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = db.now()
	}
	if d.Status == "" {
		d.Status = chartctl.DevicePending
	}
	return db.tx(ctx, "create device authorization", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM oauth_device_codes WHERE user_code_hash = $1 AND expires_at <= $2`,
			d.UserCodeHash, d.CreatedAt.UTC()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO oauth_device_codes (`+deviceCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			d.DeviceCodeHash, d.UserCodeHash, d.ClientID, d.Scopes.Strings(), d.Interval.Milliseconds(),
			d.CreatedAt.UTC(), d.ExpiresAt.UTC(), utcPtr(d.LastPolledAt), string(d.Status), d.UserID, d.GrantID, utcPtr(d.RedeemedAt))
		switch {
		case isUnique(err, "oauth_device_codes_pkey"):
			return chartctl.Errorf(chartctl.ECONFLICT, "This device code already exists.")
		case isUnique(err, "oauth_device_codes_user_code"):
			return chartctl.Errorf(chartctl.ECONFLICT, "This user code is in use.")
		}
		return err
	})
}

// DeviceAuthorizationByUserCode returns the live request whose user code
// hash is h.
func (db *DB) DeviceAuthorizationByUserCode(ctx context.Context, h []byte, now time.Time) (*chartctl.DeviceAuthorization, error) {
	if len(h) == 0 {
		return nil, unknownDevice()
	}
	d, err := scanDevice(db.pool.QueryRow(ctx, `SELECT `+deviceCols+` FROM oauth_device_codes WHERE user_code_hash = $1`, h))
	if err != nil {
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return nil, err
		}
		return nil, db.wrap("read device authorization", err)
	}
	if d.Expired(now) {
		return nil, unknownDevice()
	}
	return d, nil
}

// DecideDeviceAuthorization records the answer decide gives; the row is
// locked, so of two answers only the first counts.
func (db *DB) DecideDeviceAuthorization(ctx context.Context, h []byte, now time.Time, decide func(*chartctl.DeviceAuthorization) error) error {
	if len(h) == 0 {
		return unknownDevice()
	}
	return db.tx(ctx, "decide device authorization", func(tx pgx.Tx) error {
		d, err := scanDevice(tx.QueryRow(ctx, `SELECT `+deviceCols+` FROM oauth_device_codes WHERE user_code_hash = $1 FOR UPDATE`, h))
		if err != nil {
			return err
		}
		if d.Expired(now) {
			return unknownDevice()
		}
		if d.Status != chartctl.DevicePending {
			return chartctl.Errorf(chartctl.ECONFLICT, "This code was already answered.")
		}
		if err := decide(d); err != nil {
			return err
		}
		return putDevice(ctx, tx, d)
	})
}

// PollDeviceAuthorization records a poll and, when poll issues tokens,
// redeems the request; the row is locked, so of concurrent polls of an
// approved request exactly one gets the tokens.
func (db *DB) PollDeviceAuthorization(ctx context.Context, h []byte, now time.Time, poll func(*chartctl.DeviceAuthorization) ([]*chartctl.OAuthToken, error)) error {
	if len(h) == 0 {
		return unknownDevice()
	}
	var refused error
	err := db.tx(ctx, "poll device authorization", func(tx pgx.Tx) error {
		refused = nil
		d, err := scanDevice(tx.QueryRow(ctx, `SELECT `+deviceCols+` FROM oauth_device_codes WHERE device_code_hash = $1 FOR UPDATE`, h))
		if err != nil {
			return err
		}
		if d.RedeemedAt != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "This device code was already used.")
		}
		tokens, pollErr := poll(d)
		at := now.UTC()
		d.LastPolledAt = &at
		if pollErr == nil {
			d.RedeemedAt = &at
		}
		if err := putDevice(ctx, tx, d); err != nil {
			return err
		}
		if pollErr != nil {
			// The poll's time and interval are kept (slow_down counts
			// from them); the refusal is returned after the commit.
			refused = pollErr
			return nil
		}
		if _, err := tx.Exec(ctx, `INSERT INTO oauth_grants (id, revoked, created_at) VALUES ($1, false, $2)
			ON CONFLICT (id) DO NOTHING`, d.GrantID, at); err != nil {
			return err
		}
		if err := db.putTokens(ctx, tx, tokens); err != nil {
			return err
		}
		return revokeExcessGrants(ctx, tx, d.UserID, d.ClientID, d.GrantID, now)
	})
	if err != nil {
		return err
	}
	return refused
}
