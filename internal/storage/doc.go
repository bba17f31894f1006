// Package storage serves /storage/v1, the Supabase Storage-compatible surface for the objects
// of bucket `media`: authenticated download, signed URLs and upload. Each object is the file
// behind one public.media row (media.storage_path is its key), and whoever may read that row
// may read the file: the decision is a query run as the caller under row-level security, never
// a check in Go. The bytes live in a Backend (local disk for dev, any S3-compatible store in
// production) that knows nothing about access.
//
// It may import internal/pg; it must not import internal/server, auth, rest, mcp, handlers or
// views. The caller's identity comes through the Authenticator interface declared here.
package storage
