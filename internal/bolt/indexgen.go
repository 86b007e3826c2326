package bolt

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"go.etcd.io/bbolt"
)

// indexGenBucket holds each repository's index generation (see
// chartctl.Store.IndexGeneration): repository name → 16 random bytes,
// replaced in every transaction that changes what IndexEntries returns
// for it (touchIndex) and removed with the repository. It is derived
// data: neither exported nor restored (Open gives a restored repository
// one).
const indexGenBucket = "index_gen"

// indexGenBuckets are this file's top-level buckets, created at Open.
var indexGenBuckets = []string{indexGenBucket}

// touchIndex gives repo a new index generation in tx. Every write of a
// version's record, index entry or held mark calls it.
func touchIndex(tx *bbolt.Tx, repo string) error {
	var g [16]byte
	_, _ = rand.Read(g[:]) // never fails (crypto/rand)
	return bucket(tx, indexGenBucket).Put([]byte(repo), g[:])
}

// assignIndexGens gives every repository without an index generation one
// (a data directory of a release before them, or restored): any new
// token is safe, since a token only has to change with the content. Open
// calls it.
func assignIndexGens(tx *bbolt.Tx) error {
	gens := bucket(tx, indexGenBucket)
	return bucket(tx, reposBucket).ForEach(func(k, _ []byte) error {
		if gens.Get(k) != nil {
			return nil
		}
		return touchIndex(tx, string(k))
	})
}

// dropIndexGen forgets repo's index generation (it is deleted).
func dropIndexGen(tx *bbolt.Tx, repo string) error {
	return bucket(tx, indexGenBucket).Delete([]byte(repo))
}

// IndexGeneration implements chartctl.Store: the repository's ID and its
// generation, "" when it has none yet.
func (db *DB) IndexGeneration(ctx context.Context, repo string) (string, error) {
	var out string
	err := db.db.View(func(tx *bbolt.Tx) error {
		r, err := getRepo(tx, repo)
		if err != nil {
			return err
		}
		if g := bucket(tx, indexGenBucket).Get([]byte(repo)); len(g) > 0 {
			out = r.ID + ":" + hex.EncodeToString(g)
		}
		return nil
	})
	if err != nil {
		return "", wrap("get index generation", err)
	}
	return out, nil
}
