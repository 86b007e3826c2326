package tui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
)

// notSignedIn is the status line's text for a 401 when Options do not
// say where the credential came from.
const notSignedIn = "not signed in: run chartctl login"

// describeError turns an error of the API into the status line's text:
// short, telling the user what to do, and sanitized since the message
// comes from the server. unauthorized is the text for a 401; empty means
// notSignedIn. A rate limit's end is shown as the clock time after now,
// which stays true while the message is on screen (a count of seconds
// would go stale).
func describeError(err error, unauthorized string, now time.Time) string {
	var ce *client.Error
	if errors.As(err, &ce) {
		msg := termtext.Line(ce.Message)
		switch ce.StatusCode {
		case http.StatusUnauthorized:
			if unauthorized != "" {
				return termtext.Line(unauthorized)
			}
			return notSignedIn
		case http.StatusForbidden:
			return withMessage("forbidden", msg)
		case http.StatusNotFound:
			return withMessage("not found", msg)
		case http.StatusTooManyRequests:
			if ce.RetryAfter > 0 {
				until := now.Add(time.Duration(math.Ceil(ce.RetryAfter.Seconds())) * time.Second)
				return fmt.Sprintf("rate limited until %s, then r retries", until.Format("15:04:05"))
			}
			return "rate limited, retry later"
		}
		return withMessage(fmt.Sprintf("server error %d", ce.StatusCode), msg)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "the server did not answer in time (r to retry)"
	}
	// A refused connection or an unknown host: the request URL the SDK
	// wraps it in would fill the line, so say what failed, briefly.
	var ue *url.Error
	if errors.As(err, &ue) {
		return "cannot reach the server: " + termtext.Line(rootCause(ue.Err).Error()) + " (r to retry)"
	}
	return "error: " + termtext.Line(err.Error())
}

// rootCause returns the innermost error of a chain of single wraps, which
// for a network failure is the short reason ("connection refused").
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

func withMessage(prefix, msg string) string {
	if msg == "" {
		return prefix
	}
	return prefix + ": " + msg
}
