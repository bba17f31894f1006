package storage

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"masthead/internal/pg"
	"masthead/internal/pg/pgtest"
)

// storageOp is one request of the routing tests, as user, with the status it must answer.
type storageOp struct {
	name, method, path, user string
	body                     any
	header                   map[string]string
	status                   int
}

// readOps are the read-only operations: download, exists, info, list, createSignedUrl and
// createSignedUrls.
var readOps = []storageOp{
	{name: "download", method: http.MethodGet, path: "/storage/v1/object/media/proj-a/photo.png", user: "viewerA", status: 200},
	{name: "exists", method: http.MethodHead, path: "/storage/v1/object/media/proj-a/photo.png", user: "viewerA", status: 200},
	{name: "info", method: http.MethodGet, path: "/storage/v1/object/info/media/proj-a/photo.png", user: "viewerA", status: 200},
	{name: "list", method: http.MethodPost, path: "/storage/v1/object/list/media", user: "viewerA", body: map[string]any{"prefix": "proj-a"}, status: 200},
	{name: "createSignedUrl", method: http.MethodPost, path: "/storage/v1/object/sign/media/proj-a/photo.png", user: "viewerA", body: map[string]any{"expiresIn": 60}, status: 200},
	{name: "createSignedUrls", method: http.MethodPost, path: "/storage/v1/object/sign/media", user: "viewerA", body: map[string]any{"expiresIn": 60, "paths": []string{"proj-a/photo.png"}}, status: 200},
}

// send makes op's request and fails unless it answers op.status; it returns the body.
func (ev *env) send(t *testing.T, op storageOp) []byte {
	t.Helper()
	hdr := map[string]string{"Content-Type": "application/json"}
	for k, v := range op.header {
		hdr[k] = v
	}
	var b []byte
	switch v := op.body.(type) {
	case nil:
	case []byte:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	resp, out := ev.do(t, req{method: op.method, path: op.path, user: op.user, body: b, header: hdr})
	if resp.StatusCode != op.status {
		t.Fatalf("%s: %d %s, want %d", op.name, resp.StatusCode, out, op.status)
	}
	return out
}

// TestReadsUseReadPool: every read-only operation takes its connection from Options.ReadPool
// (a read replica in production; here a second pool on the same database, whose acquisitions
// are counted), and no write does, including the trial write in front of a signed upload URL.
func TestReadsUseReadPool(t *testing.T) {
	t.Parallel()
	ev := newDiskEnv(t)
	replica, err := pg.Open(context.Background(), ev.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(replica.Close)
	ev = ev.withOptions(t, func(o *Options) { o.ReadPool = func(context.Context) *pgxpool.Pool { return replica } })

	for _, op := range readOps {
		before := replica.Stat().AcquireCount()
		ev.send(t, op)
		if replica.Stat().AcquireCount() == before {
			t.Errorf("%s did not read from the read pool", op.name)
		}
	}

	png := ev.png
	var signed struct{ Token string }
	writes := []storageOp{
		{name: "upload", method: http.MethodPost, path: "/storage/v1/object/media/proj-a/w/new.png", user: "editorA", body: png, header: map[string]string{"Content-Type": "image/png"}, status: 200},
		{name: "update", method: http.MethodPut, path: "/storage/v1/object/media/proj-a/w/new.png", user: "editorA", body: png, header: map[string]string{"Content-Type": "image/png"}, status: 200},
		{name: "copy", method: http.MethodPost, path: "/storage/v1/object/copy", user: "editorA", body: map[string]any{"bucketId": "media", "sourceKey": "proj-a/w/new.png", "destinationKey": "proj-a/w/copy.png"}, status: 200},
		{name: "move", method: http.MethodPost, path: "/storage/v1/object/move", user: "editorA", body: map[string]any{"bucketId": "media", "sourceKey": "proj-a/w/copy.png", "destinationKey": "proj-a/w/moved.png"}, status: 200},
		{name: "remove", method: http.MethodDelete, path: "/storage/v1/object/media", user: "editorA", body: map[string]any{"prefixes": []string{"proj-a/w/moved.png"}}, status: 200},
		{name: "createSignedUploadUrl", method: http.MethodPost, path: "/storage/v1/object/upload/sign/media/proj-a/w/signed.png", user: "editorA", status: 200},
	}
	for _, op := range writes {
		before := replica.Stat().AcquireCount()
		out := ev.send(t, op)
		if op.name == "createSignedUploadUrl" {
			if err := json.Unmarshal(out, &signed); err != nil || signed.Token == "" {
				t.Fatalf("createSignedUploadUrl: %s", out)
			}
		}
		if n := replica.Stat().AcquireCount() - before; n != 0 {
			t.Errorf("%s took %d connections from the read pool", op.name, n)
		}
	}
	before := replica.Stat().AcquireCount()
	ev.send(t, storageOp{name: "uploadToSignedUrl", method: http.MethodPut, path: "/storage/v1/object/upload/sign/media/proj-a/w/signed.png?token=" + signed.Token,
		body: png, header: map[string]string{"Content-Type": "image/png"}, status: 200})
	if n := replica.Stat().AcquireCount() - before; n != 0 {
		t.Errorf("uploadToSignedUrl took %d connections from the read pool", n)
	}
}

// TestReadPoolWithoutTheSession: a read replica that has not yet received the caller's
// session (here: another database, which has no sessions and no media at all) says the
// session has ended; every read-only operation then asks the primary, and answers from it. A
// session that has really ended is refused by the primary too: 401.
func TestReadPoolWithoutTheSession(t *testing.T) {
	t.Parallel()
	ev := newDiskEnv(t)
	behind := pgtest.New(t)
	ev = ev.withOptions(t, func(o *Options) { o.ReadPool = func(context.Context) *pgxpool.Pool { return behind.Pool } })

	for _, op := range readOps {
		ev.send(t, op)
	}
	var listed []struct{ Name string }
	if err := json.Unmarshal(ev.send(t, readOps[3]), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 2 || listed[0].Name != "page.html" || listed[1].Name != "photo.png" {
		t.Errorf("list answered from the primary: %+v", listed)
	}

	if _, err := ev.db.Owner(t).Exec(context.Background(), `delete from auth.sessions where user_id = $1`, ev.users["viewerA"]); err != nil {
		t.Fatal(err)
	}
	for _, op := range readOps {
		op.status = http.StatusUnauthorized
		out := ev.send(t, op)
		if op.method != http.MethodHead {
			if e := storageError(t, out); e["message"] != "Invalid or expired access token" {
				t.Errorf("%s with an ended session: %s", op.name, out)
			}
		}
	}
}
