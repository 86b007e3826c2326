//go:build !linux

package bolt

import "go.etcd.io/bbolt"

// trimMapped does nothing where MADV_DONTNEED's behaviour on a shared
// file mapping is not the one trim.go relies on.
func trimMapped(*bbolt.Tx) {}
