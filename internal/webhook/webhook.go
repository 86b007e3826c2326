// Package webhook delivers events to webhooks (CONTRACT §15): CloudEvents
// 1.0 structured JSON, signed per Standard Webhooks, sent at least once
// and in order per webhook by a Dispatcher that works off the store's
// delivery queue (the outbox written in the transaction of each change).
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// NewSecret returns a new signing secret: "whsec_" and the base64 of 24
// random bytes.
func NewSecret() string {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// ValidateSecret checks a secret a caller chose: "whsec_" and base64 of 16
// to 64 bytes. Returns EINVALID.
func ValidateSecret(s string) error {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, SecretPrefix))
	if !strings.HasPrefix(s, SecretPrefix) || err != nil || len(raw) < 16 || len(raw) > 64 {
		return chartctl.Invalid("secret", "secret must be \"whsec_\" followed by the base64 of 16 to 64 random bytes; omit it to have one generated.")
	}
	return nil
}

// Sign returns the webhook-signature header value for a message: "v1,"
// and the base64 HMAC-SHA256, keyed by the secret's decoded bytes, of
// "id.timestamp.body".
func Sign(secret, id string, timestamp time.Time, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil {
		return "", fmt.Errorf("webhook secret is not base64: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// CloudEvent is a CloudEvents 1.0 event in structured JSON mode, the body
// of every delivery.
type CloudEvent struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Type            string          `json:"type"`
	Source          string          `json:"source"`
	Time            string          `json:"time"`
	Subject         string          `json:"subject,omitempty"`
	DataContentType string          `json:"datacontenttype"`
	Data            json.RawMessage `json:"data"`
}

// TypePrefix starts every CloudEvents type chartctl sends.
const TypePrefix = "io.chartctl."

// Body renders e as the CloudEvent a webhook receives; baseURL (the
// server's external URL, may be "") prefixes the event's /v1 source path.
func Body(e *chartctl.Event, baseURL string) ([]byte, error) {
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	src := e.Source
	if src == "" {
		src = "/v1"
	}
	return json.Marshal(CloudEvent{SpecVersion: "1.0", ID: e.ID, Type: TypePrefix + string(e.Type),
		Source: strings.TrimSuffix(baseURL, "/") + src, Time: e.Time.UTC().Format(time.RFC3339Nano), Subject: e.Subject,
		DataContentType: "application/json", Data: data})
}
