// Package bufpool lends the 32 KiB buffers that copies and reads of
// uploads use (a blob's copy into the store, a chart archive's read to
// its end), so each does not allocate one of its own.
package bufpool

import "sync"

// Size is the length of a lent buffer.
const Size = 32 << 10

var pool = sync.Pool{New: func() any {
	b := make([]byte, Size)
	return &b
}}

// Get lends a buffer of Size bytes; give it back with Put.
func Get() *[]byte { return pool.Get().(*[]byte) }

// Put gives back a buffer Get lent; its caller no longer uses it.
func Put(b *[]byte) { pool.Put(b) }
