// Package storage serves /storage/v1, the Supabase Storage-compatible surface for the objects
// of bucket `media`: every call supabase-js's storage client makes on supabase.storage.from(
// 'media'), under Supabase Storage's paths and in its request, answer and error shapes
// ({statusCode, error, message}):
//
//   - upload (POST /object/media/<path>; x-upsert: true replaces an existing object) and update
//     (PUT, a new version under the same media row);
//   - download (GET /object/[authenticated/]media/<path>, ?download[=name] for an attachment),
//     exists (HEAD) and info (GET /object/info/[authenticated/]media/<path>);
//   - list (POST /object/list/media: prefix, limit, offset, sortBy, search), remove (DELETE
//     /object/media, many paths), move and copy (POST /object/move, /object/copy);
//   - createSignedUrl(s) (POST /object/sign/media[/<path>]) and the signed download (GET
//     /object/sign/media/<path>?token=…), createSignedUploadUrl (POST
//     /object/upload/sign/media/<path>) and uploadToSignedUrl (PUT to the same path).
//
// Each object is the file behind one public.media row (media.storage_path is its key; a listing
// is of rows, a folder the common start of their paths). Every operation is decided by that
// row's row-level security, in a query or a write run as the caller, never by a check in Go:
// whoever may read the row may read the file, whoever may update or delete it may replace,
// move or remove the file, and a row the caller cannot see is the same 404 as a missing one. A
// signed URL is the exception Supabase makes too: whoever holds it may download that object
// until it expires. A signed upload URL, though, carries its signer's identity, and the upload
// is written as them, so the database decides it again when it happens.
//
// Every write is one transaction that commits only if the file was stored as well; a failed
// commit undoes the file's change (a new version's previous bytes are kept aside until the
// commit). The columns that describe a file change only in this surface's transactions
// (migration 014), so no other write can make a row describe a file it does not have. The
// limits (upload size, list page, paths per batch, JSON body, signed download and upload URL
// lifetimes) are Options, set from MASTHEAD_STORAGE_… by internal/server, and each refusal
// names its variable.
//
// The read-only operations (download, exists, info, list, createSignedUrl(s)) take their
// connection from Options.ReadPool, a read replica when one is fresh; a replica that does not
// yet know the caller's session is asked again on the primary. Every write, and the trial write
// that decides createSignedUploadUrl, runs on the primary. Every connection, on either pool,
// holds a slot of its caller's share of the pool (Options.Shares, shared with /rest/v1) while
// it is held, and only then: a download gives its slot back before the file streams, and an
// upload holds none while its body arrives. Over the share a request waits, then is 503
// SlowDown naming MASTHEAD_POOL_SHARE.
//
// Not offered, on purpose: buckets other than media ("Bucket not found") and the bucket API
// (listBuckets, createBucket, …), public URLs (getPublicUrl: every object is private), image
// transformations, and user metadata (x-metadata and a multipart metadata field are accepted
// and ignored; info's metadata is what the media row says of the file). A move stays in its
// project's folder (copy across projects), and keys start with a project's slug.
//
// The bytes live in a Backend (local disk for dev, any S3-compatible store in production) that
// knows nothing about access.
//
// It may import internal/pg and internal/tokencache (verified signed-URL tokens); it must not
// import internal/server, auth, rest, mcp, handlers or views. The caller's identity comes
// through the Authenticator interface declared here.
package storage
