package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// newIndexToken is the SQL expression of a new random index token.
const newIndexToken = `md5(random()::text || clock_timestamp()::text || id)`

// assignIndexTokens gives every repository without an index token one (a
// database upgraded from a release before them, or restored): any new
// token is safe, since a token only has to change with the content.
func assignIndexTokens(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, `UPDATE repositories SET index_token = `+newIndexToken+` WHERE index_token IS NULL`); err != nil {
		return fmt.Errorf("assign index tokens: %w", err)
	}
	return nil
}

// IndexGeneration implements chartctl.Store: the repository's ID,
// generation and index token, which every change of its chart versions
// replaces (changed); "" while it has no token (no change since the
// upgrade that added it, or since a restore).
func (db *DB) IndexGeneration(ctx context.Context, repo string) (string, error) {
	if !storable(repo) {
		return "", repoNotFound(repo)
	}
	var (
		id    string
		gen   int64
		token *string
	)
	err := db.pool.QueryRow(ctx, `SELECT id, generation, index_token FROM repositories WHERE name = $1`, repo).Scan(&id, &gen, &token)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", repoNotFound(repo)
	} else if err != nil {
		return "", db.wrap("get index generation", err)
	}
	if token == nil {
		return "", nil
	}
	return id + ":" + strconv.FormatInt(gen, 10) + ":" + *token, nil
}
