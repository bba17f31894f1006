package storage

import (
	"context"
	"errors"
	"io"
	"time"
)

// ErrObjectNotFound is what a Backend returns for a key it does not hold.
var ErrObjectNotFound = errors.New("storage: object not found")

// Backend holds the bytes of bucket media by key (a validated storage path such as
// "northwind/cover.png"). It decides nothing about access: the handler asks the database first.
type Backend interface {
	// Open returns the object for reading, or an error wrapping ErrObjectNotFound.
	Open(ctx context.Context, key string) (*Object, error)
	// Put stores exactly size bytes from r at key with the given content type. The object
	// appears whole or not at all, so a reader never sees half an upload.
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// Object is an open object. Body seeks, so http.ServeContent can answer Range requests from it.
type Object struct {
	Body    io.ReadSeekCloser
	Size    int64
	ModTime time.Time
	// ETag is a strong validator, quoted as RFC 9110 writes it.
	ETag string
}
