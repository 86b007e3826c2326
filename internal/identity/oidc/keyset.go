package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// RefetchInterval is the least time between two fetches of a provider's
// JWKS (CONTRACT §18 decision 5): a token naming an unknown key fetches
// the set again at most this often, so forged key IDs cannot make
// chartctl hammer the provider.
const RefetchInterval = time.Minute

// signatureAlgs are the algorithms ID tokens may be signed with
// (go-oidc's verifier narrows them to what discovery lists).
var signatureAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512, jose.PS256, jose.PS384, jose.PS512, jose.EdDSA}

// keySet is the provider's JWKS, fetched when a token names a key it does
// not hold (rotation), at most once per RefetchInterval.
type keySet struct {
	url  string
	hc   *http.Client
	now  func() time.Time
	mu   sync.Mutex
	keys []jose.JSONWebKey
	// fetched is when the set was last fetched (zero: never).
	fetched time.Time
	// fetches counts the fetches (tests).
	fetches int
}

// VerifySignature implements go-oidc's KeySet.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSigned(raw, signatureAlgs)
	if err != nil {
		return nil, fmt.Errorf("malformed ID token: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("the ID token must have exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	k.mu.Lock()
	defer k.mu.Unlock()
	if payload, ok := verifyWith(jws, k.keys, kid); ok {
		return payload, nil
	}
	if !k.fetched.IsZero() && k.now().Sub(k.fetched) < RefetchInterval {
		return nil, errors.New("the ID token's signing key is not among the provider's keys")
	}
	if err := k.fetch(ctx); err != nil {
		return nil, err
	}
	if payload, ok := verifyWith(jws, k.keys, kid); ok {
		return payload, nil
	}
	return nil, errors.New("the ID token's signature does not verify with the provider's keys")
}

// verifyWith verifies jws with the key kid names, or with each key when
// the token names none.
func verifyWith(jws *jose.JSONWebSignature, keys []jose.JSONWebKey, kid string) ([]byte, bool) {
	for _, key := range keys {
		if kid != "" && key.KeyID != kid {
			continue
		}
		if payload, err := jws.Verify(key.Public()); err == nil {
			return payload, true
		}
	}
	return nil, false
}

// fetch reads the JWKS; the caller holds mu. A failed fetch also counts
// as one, so an unreachable provider is not asked again at once.
func (k *keySet) fetch(ctx context.Context) error {
	k.fetched = k.now()
	k.fetches++
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return err
	}
	resp, err := k.hc.Do(req)
	if err != nil {
		return fmt.Errorf("fetch the provider's keys: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch the provider's keys: %s answered %s", k.url, resp.Status)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return fmt.Errorf("read the provider's keys: %w", err)
	}
	k.keys = set.Keys
	return nil
}
