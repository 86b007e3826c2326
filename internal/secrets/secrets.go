// Package secrets seals secrets the server must read back (webhook
// signing secrets) with AES-256-GCM (CONTRACT §12). The key comes from
// --secrets-key-file, or on a single node from a file generated into the
// data directory on first start.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
)

// MinKeyFileSize is the least key material a key file must hold.
const MinKeyFileSize = 32

// Box seals and opens secrets with one key.
type Box struct {
	aead cipher.AEAD
	key  [32]byte
}

// New returns a Box keyed by material (at least MinKeyFileSize bytes; it
// is hashed to the AES-256 key, so any text, such as the output of
// `openssl rand -base64 32`, serves).
func New(material []byte) (*Box, error) {
	if len(material) < MinKeyFileSize {
		return nil, fmt.Errorf("secrets key is %d bytes; it must be at least %d (e.g. openssl rand -base64 32)", len(material), MinKeyFileSize)
	}
	k := sha256.Sum256(material)
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead, key: k}, nil
}

// Derive returns a 32-byte key for purpose, derived from the box's key
// (HMAC-SHA256 of purpose), so every server holding the same key file
// derives the same key, and no derived key reveals the box's.
func (b *Box) Derive(purpose string) []byte {
	m := hmac.New(sha256.New, b.key[:])
	m.Write([]byte("chartctl derived key: " + purpose))
	return m.Sum(nil)
}

// Load reads the key file at path. When generate is set and the file does
// not exist, it writes a new random key there first (mode 0600).
func Load(path string, generate bool) (*Box, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && generate {
		var raw [32]byte
		if _, err := rand.Read(raw[:]); err != nil {
			return nil, err
		}
		enc := base64.StdEncoding.EncodeToString(raw[:]) + "\n"
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("create secrets key %s: %w", path, err)
		}
		if _, err := f.WriteString(enc); err != nil {
			f.Close()
			return nil, fmt.Errorf("write secrets key %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		b = []byte(enc)
	} else if err != nil {
		return nil, fmt.Errorf("read secrets key: %w", err)
	}
	box, err := New(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return box, nil
}

// Seal encrypts plaintext; the result carries its random nonce.
func (b *Box) Seal(plaintext []byte) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return b.aead.Seal(nonce, nonce, plaintext, nil), nil
}

// Open decrypts what Seal returned. It fails if the data were sealed with
// another key or altered.
func (b *Box) Open(sealed []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed secret is truncated")
	}
	out, err := b.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return nil, errors.New("cannot decrypt a stored secret: the secrets key differs from the one it was sealed with")
	}
	return out, nil
}
