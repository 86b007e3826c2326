// Package gzpool compresses small records with gzip at its fastest level
// through pooled writers: a new gzip writer allocates about a megabyte of
// compressor state, which for records encoded once per pushed version
// (chart pages, kept renderings) was most of what a push allocated.
package gzpool

import (
	"bytes"
	"compress/gzip"
	"io"
	"sync"
)

var writers = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return zw
}}

// Bytes returns what write writes, gzip-compressed at gzip.BestSpeed, or
// write's error.
func Bytes(write func(w io.Writer) error) ([]byte, error) {
	var buf bytes.Buffer
	zw := writers.Get().(*gzip.Writer)
	zw.Reset(&buf)
	defer func() {
		// Not holding on to buf while pooled.
		zw.Reset(io.Discard)
		writers.Put(zw)
	}()
	if err := write(zw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
