package cmdutil

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/chartctl/chartctl/client"
)

// FlagError is a usage error: a bad flag, argument or combination of them.
// The command line prints it with a pointer to --help and exits 2.
type FlagError struct {
	Err error
}

// Error returns the message of the usage problem.
func (e *FlagError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf returns a FlagError with a formatted message.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// AuthError means the command needs a credential it does not have (or the
// server refused the one it had); the command line hints `chartctl login`.
type AuthError struct {
	Err error
}

// Error returns the message of the authentication failure.
func (e *AuthError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *AuthError) Unwrap() error { return e.Err }

// ErrSilent makes the command line exit 1 without printing anything more:
// the command has already told the user what went wrong.
var ErrSilent = errors.New("silent error")

// ErrCancel means the user declined a confirmation; nothing was done.
var ErrCancel = errors.New("cancelled")

// HintError is an error with the user's next step, which the command line
// prints on a line of its own after the error.
type HintError struct {
	Err  error
	Hint string
}

// Error returns the wrapped error's message; the hint is printed apart.
func (e *HintError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *HintError) Unwrap() error { return e.Err }

// IsNotFound reports whether err is the server's 404 answer.
func IsNotFound(err error) bool {
	var ce *client.Error
	return errors.As(err, &ce) && ce.StatusCode == http.StatusNotFound
}

// HintNotFound adds hint to err when err is the server's 404 answer, and
// returns every other error as it is.
func HintNotFound(err error, hint string) error {
	if err == nil || !IsNotFound(err) {
		return err
	}
	return &HintError{Err: err, Hint: hint}
}

// HintRepoList is the next step after an unknown repository.
const HintRepoList = "To see the repositories you can read, run: chartctl repo list"

// HintOrgList is the next step after an unknown organization.
const HintOrgList = "To see the organizations you belong to, run: chartctl org list"

// HintChartList is the next step after an unknown chart or version in repo.
func HintChartList(repo string) string {
	return "To see the charts in " + repo + ", run: chartctl chart list --repo " + repo
}

// HelmKeyHint says what $KEY is in the `helm repo add … --password "$KEY"`
// lines printed for a private repository, and how to make one.
const HelmKeyHint = "KEY is an API key with repo:read (chartctl api-key create --name helm --scopes repo:read)."
