package cmdutil

import (
	"errors"
	"fmt"
)

// FlagError is a usage error: a bad flag, argument or combination of them.
// The command line prints it with a pointer to --help and exits 2.
type FlagError struct {
	Err error
}

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

func (e *AuthError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *AuthError) Unwrap() error { return e.Err }

// ErrSilent makes the command line exit 1 without printing anything more:
// the command has already told the user what went wrong.
var ErrSilent = errors.New("silent error")

// ErrCancel means the user declined a confirmation; nothing was done.
var ErrCancel = errors.New("cancelled")
