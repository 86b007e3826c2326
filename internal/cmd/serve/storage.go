package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/s3blob"
)

// Database is what the server keeps its metadata in: the store, the OAuth
// store and the OCI registry's metadata, on one engine.
type Database interface {
	chartctl.Store
	chartctl.OAuthStore
	chartctl.OCIStore
}

// BlobStore is what the server keeps blobs in: content-addressed by sha256
// and, for the OCI registry, sha512.
type BlobStore interface {
	chartctl.AlgorithmBlobStore
}

// StorageConfig chooses the storage engines (CONTRACT §12).
type StorageConfig struct {
	// Database is "bolt" (the file DATA/chartctl.db) or a postgres:// URL.
	Database string
	// BlobStore is "file" (DATA/blobs) or an s3:// URL.
	BlobStore string
	// RepoNameGrace is how long a deleted repository's name stays reserved
	// for its owner.
	RepoNameGrace time.Duration
}

// DefaultStorageConfig returns the single-node defaults.
func DefaultStorageConfig() StorageConfig {
	return StorageConfig{Database: "bolt", BlobStore: "file"}
}

// AddFlags binds the configuration to --database and --blob-store (and so
// to CHARTCTL_DATABASE and CHARTCTL_BLOB_STORE).
func (c *StorageConfig) AddFlags(fs *pflag.FlagSet) {
	if c.Database == "" && c.BlobStore == "" {
		*c = DefaultStorageConfig()
	}
	fs.StringVar(&c.Database, "database", c.Database, "metadata database: bolt (a file in --data) or postgres://user:pass@host:port/db?sslmode=…")
	fs.StringVar(&c.BlobStore, "blob-store", c.BlobStore, "chart blob store: file (under --data) or s3://BUCKET[/PREFIX]?endpoint=URL&region=R&path_style=true (credentials from the AWS environment)")
}

// Validate checks the engine URLs without connecting.
func (c *StorageConfig) Validate() error {
	switch db := c.Database; {
	case db == "" || db == "bolt":
	case strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://"):
		if _, err := url.Parse(db); err != nil {
			return fmt.Errorf("invalid --database: the URL does not parse; use postgres://user:pass@host:port/db?sslmode=…")
		}
	default:
		return fmt.Errorf("invalid --database %q: use bolt or postgres://user:pass@host:port/db", redact(db))
	}
	switch bs := c.BlobStore; {
	case bs == "" || bs == "file":
	case strings.HasPrefix(bs, "s3://"):
		if _, err := s3blob.ParseURL(bs); err != nil {
			return fmt.Errorf("invalid --blob-store: %w", err)
		}
	default:
		return fmt.Errorf("invalid --blob-store %q: use file or s3://BUCKET[/PREFIX]?endpoint=URL&region=R&path_style=true", bs)
	}
	return nil
}

// redact hides a password in a URL for messages.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return u.Redacted()
	}
	return raw
}

// Storage is the opened engines.
type Storage struct {
	Store Database
	Blobs BlobStore
	close func() error
}

// Close closes the database.
func (s *Storage) Close() error { return s.close() }

// OpenStorage opens the engines c names, with data as the data directory
// of the local ones.
func OpenStorage(ctx context.Context, data string, c *StorageConfig, logger *slog.Logger) (*Storage, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	st := &Storage{}
	var desc []string
	if c.Database == "" || c.Database == "bolt" {
		dbPath := filepath.Join(data, "chartctl.db")
		db, err := bolt.Open(dbPath, bolt.LockTimeout(time.Second), bolt.NameGrace(c.RepoNameGrace))
		if errors.Is(err, bolt.ErrLocked) {
			return nil, fmt.Errorf("data directory %s is in use by another chartctl server; stop it or choose another --data", data)
		} else if err != nil {
			return nil, err
		}
		if from := db.UpgradedFrom(); from != 0 {
			logger.Info("upgraded the stored data", "path", dbPath, "from_schema", from, "to_schema", bolt.SchemaVersion)
		}
		st.Store, st.close = db, db.Close
		desc = append(desc, "bolt "+db.Path())
	} else {
		db, err := postgres.Open(ctx, c.Database, postgres.NameGrace(c.RepoNameGrace))
		if err != nil {
			return nil, err
		}
		st.Store, st.close = db, db.Close
		desc = append(desc, "postgres "+redact(c.Database))
	}
	if c.BlobStore == "" || c.BlobStore == "file" {
		blobs, err := blob.Open(filepath.Join(data, "blobs"))
		if err != nil {
			_ = st.close()
			return nil, err
		}
		st.Blobs = blobs
		desc = append(desc, "files "+blobs.Root())
	} else {
		blobs, err := s3blob.Open(ctx, c.BlobStore)
		if err != nil {
			_ = st.close()
			return nil, err
		}
		st.Blobs = blobs
		desc = append(desc, c.BlobStore)
	}
	logger.Info("storage", "database", desc[0], "blobs", desc[1])
	return st, nil
}
