package storage

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// multipartBody is a form as supabase-js builds it in a browser: a cacheControl field, then
// the file under the empty field name.
func multipartBody(t *testing.T, fileType string, data []byte) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if err := w.WriteField("cacheControl", "3600"); err != nil {
		t.Fatal(err)
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name=""; filename="upload.bin"`)
	h.Set("Content-Type", fileType)
	part, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	part.Write(data)
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

type mediaRow struct {
	kind, mime    string
	width, height *int
	bytes         int64
}

func (ev *env) row(t *testing.T, key string) mediaRow {
	t.Helper()
	var m mediaRow
	err := ev.db.Owner(t).QueryRow(context.Background(),
		`select kind, mime_type, width, height, bytes from media where storage_path = $1`, key).
		Scan(&m.kind, &m.mime, &m.width, &m.height, &m.bytes)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestUpload(t *testing.T) {
	eachBackend(t, func(t *testing.T, ev *env) {
		jpg, gifData, mp4 := jpegBytes(t, 64, 48), gifBytes(t, 12, 7), mp4Bytes()
		form, formType := multipartBody(t, "image/gif", gifData)
		for _, tc := range []struct {
			name, key, user, contentType string
			body                         []byte
			want                         mediaRow
			w, h                         int
		}{
			{"editor, raw PNG", "proj-a/new/cover.png", "editorA", "image/png", ev.png, mediaRow{kind: "image", mime: "image/png"}, 40, 30},
			{"owner, raw JPEG", "proj-a/hero.jpg", "ownerA", "image/jpeg", jpg, mediaRow{kind: "image", mime: "image/jpeg"}, 64, 48},
			{"editor, multipart GIF", "proj-a/anim.gif", "editorA", formType, form, mediaRow{kind: "image", mime: "image/gif"}, 12, 7},
			{"editor, MP4 video", "proj-a/clip.mp4", "editorA", "video/mp4", mp4, mediaRow{kind: "video", mime: "video/mp4"}, 0, 0},
			{"editor of the other tenant, own project", "proj-b/b.png", "editorB", "image/png; charset=binary", ev.png, mediaRow{kind: "image", mime: "image/png"}, 40, 30},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp, b := ev.do(t, req{method: "POST", path: "/storage/v1/object/media/" + tc.key, user: tc.user,
					body: tc.body, header: map[string]string{"Content-Type": tc.contentType}})
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: %s", resp.StatusCode, b)
				}
				var out struct{ Id, Key string }
				if err := json.Unmarshal(b, &out); err != nil || out.Id == "" || out.Key != "media/"+tc.key {
					t.Fatalf("answer %s", b)
				}
				got := ev.row(t, tc.key)
				if got.kind != tc.want.kind || got.mime != tc.want.mime {
					t.Errorf("row kind %q mime %q", got.kind, got.mime)
				}
				if tc.w == 0 {
					if got.width != nil || got.height != nil {
						t.Errorf("video has dimensions %v×%v", *got.width, *got.height)
					}
				} else if got.width == nil || *got.width != tc.w || *got.height != tc.h {
					t.Errorf("dimensions %v×%v, want %d×%d", got.width, got.height, tc.w, tc.h)
				}
				resp, stored := ev.do(t, req{path: "/storage/v1/object/media/" + tc.key, user: tc.user})
				if resp.StatusCode != 200 || int64(len(stored)) != got.bytes || resp.Header.Get("Content-Type") != tc.want.mime {
					t.Fatalf("read back: status %d, %d bytes (row says %d), %s", resp.StatusCode, len(stored), got.bytes, resp.Header.Get("Content-Type"))
				}
			})
		}
	})
}

// TestWhatIsNotOffered: user metadata sent with an upload (x-metadata, as supabase-js sends
// its metadata option) is not stored (info's metadata is the media row's own: kind,
// dimensions, alt text), and a download does not transform the image it is asked to (the
// server's TestStorageRenderNotOffered: no /render route).
func TestWhatIsNotOffered(t *testing.T) {
	ev := newDiskEnv(t)
	resp, b := ev.do(t, req{method: "POST", path: "/storage/v1/object/media/proj-a/meta.png", user: "editorA", body: ev.png,
		header: map[string]string{"Content-Type": "image/png", "x-metadata": base64.StdEncoding.EncodeToString([]byte(`{"owner":"sent by the client"}`))}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("upload with x-metadata: %d %s", resp.StatusCode, b)
	}
	resp, b = ev.do(t, req{path: "/storage/v1/object/info/media/proj-a/meta.png", user: "editorA"})
	var info struct{ Metadata map[string]any }
	if err := json.Unmarshal(b, &info); resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("info: %d %s", resp.StatusCode, b)
	}
	if len(info.Metadata) != 4 || info.Metadata["kind"] != "image" || info.Metadata["owner"] != nil || bytes.Contains(b, []byte("sent by the client")) {
		t.Errorf("info's metadata %v: want the media row's kind, width, height and alt text, nothing the client sent", info.Metadata)
	}
	// A download ignores transformation parameters: the stored bytes, as uploaded.
	if resp, b := ev.do(t, req{path: "/storage/v1/object/authenticated/media/proj-a/meta.png?width=10&height=10", user: "editorA"}); resp.StatusCode != http.StatusOK || !bytes.Equal(b, ev.png) {
		t.Errorf("a download with width and height: %d, %d bytes, want the uploaded %d", resp.StatusCode, len(b), len(ev.png))
	}
}

// TestUploadRefused: every refusal leaves neither a row nor a file nor a spooled temp file.
func TestUploadRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, ev *env) {
		html := []byte("<!doctype html><html><script>alert(1)</script></html>")
		truncated := ev.png[:30]
		tooBig := append(append([]byte{}, ev.png...), make([]byte, 64<<10)...)
		mismatchForm, mismatchType := multipartBody(t, "image/jpeg", ev.png)
		for _, tc := range []struct {
			name, key, user, contentType string
			body                         []byte
			header                       map[string]string
			status                       int
			errName                      string
		}{
			{"viewer", "proj-a/v.png", "viewerA", "image/png", ev.png, nil, 403, "Unauthorized"},
			{"reviewer", "proj-a/r.png", "reviewerA", "image/png", ev.png, nil, 403, "Unauthorized"},
			{"editor of another tenant", "proj-a/b.png", "editorB", "image/png", ev.png, nil, 403, "Unauthorized"},
			{"member of no project", "proj-a/o.png", "outsider", "image/png", ev.png, nil, 403, "Unauthorized"},
			{"anon", "proj-a/anon.png", "", "image/png", ev.png, nil, 403, "Unauthorized"},
			{"unknown project", "proj-zz/x.png", "editorA", "image/png", ev.png, nil, 403, "Unauthorized"},
			{"invalid token", "proj-a/t.png", "forged", "image/png", ev.png, nil, 401, "Unauthorized"},
			{"PNG declared as JPEG", "proj-a/m.jpg", "editorA", "image/jpeg", ev.png, nil, 415, "invalid_mime_type"},
			{"HTML declared as PNG", "proj-a/h.png", "editorA", "image/png", html, nil, 415, "invalid_mime_type"},
			{"HTML declared as HTML", "proj-a/h.html", "editorA", "text/html", html, nil, 415, "invalid_mime_type"},
			{"SVG", "proj-a/s.svg", "editorA", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), nil, 415, "invalid_mime_type"},
			{"no content type", "proj-a/n.png", "editorA", "", ev.png, nil, 415, "invalid_mime_type"},
			{"multipart part mismatch", "proj-a/mm.jpg", "editorA", mismatchType, mismatchForm, nil, 415, "invalid_mime_type"},
			{"truncated PNG", "proj-a/cut.png", "editorA", "image/png", truncated, nil, 400, "InvalidRequest"},
			{"empty", "proj-a/empty.png", "editorA", "image/png", nil, nil, 400, "InvalidRequest"},
			{"over the size cap", "proj-a/big.png", "editorA", "image/png", tooBig, nil, 413, "Payload too large"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				hdr := map[string]string{"Content-Type": tc.contentType}
				for k, v := range tc.header {
					hdr[k] = v
				}
				if tc.contentType == "" {
					delete(hdr, "Content-Type")
				}
				resp, b := ev.do(t, req{method: "POST", path: "/storage/v1/object/media/" + tc.key, user: tc.user, body: tc.body, header: hdr})
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
				}
				if e := storageError(t, b); e["error"] != tc.errName {
					t.Errorf("error %v, want %q", e, tc.errName)
				}
				if n := ev.rowCount(t, tc.key); n != 0 {
					t.Errorf("%d rows left behind", n)
				}
				if ev.exists(t, tc.key) {
					t.Errorf("file left behind")
				}
			})
		}
		if left, _ := os.ReadDir(ev.spool); len(left) != 0 {
			t.Errorf("spool files left behind: %v", left)
		}
	})
}

// TestDuplicateKeepsOriginal: a second upload to a taken path changes nothing.
func TestDuplicateKeepsOriginal(t *testing.T) {
	eachBackend(t, func(t *testing.T, ev *env) {
		resp, _ := ev.do(t, req{method: "POST", path: "/storage/v1/object/media/proj-a/photo.png", user: "editorA",
			body: jpegBytes(t, 8, 8), header: map[string]string{"Content-Type": "image/jpeg"}})
		if resp.StatusCode != 409 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		_, body := ev.do(t, req{path: "/storage/v1/object/media/proj-a/photo.png", user: "ownerA"})
		if !bytes.Equal(body, ev.png) || ev.row(t, "proj-a/photo.png").mime != "image/png" {
			t.Fatal("the original object or row changed")
		}
	})
}

// faultyBackend stores as its Backend does, then runs afterPut, to break an upload after the
// object has been written.
type faultyBackend struct {
	Backend
	afterPut func(ctx context.Context) error
}

func (f *faultyBackend) Put(ctx context.Context, key string, r io.Reader, size int64, ct string) error {
	if err := f.Backend.Put(ctx, key, r, size, ct); err != nil {
		return err
	}
	if f.afterPut == nil {
		return nil
	}
	return f.afterPut(ctx)
}

// TestUploadUndone: when storing reports a failure after writing, or the commit fails after a
// successful store, neither the row nor the file survives.
func TestUploadUndone(t *testing.T) {
	for _, kind := range backendKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			fb := &faultyBackend{Backend: newBackend(t, kind)}
			ev := newEnv(t, fb)

			t.Run("put fails", func(t *testing.T) {
				fb.afterPut = func(context.Context) error { return errors.New("store answered 500") }
				defer func() { fb.afterPut = nil }()
				resp, b := ev.do(t, req{method: "POST", path: "/storage/v1/object/media/proj-a/f1.png", user: "editorA",
					body: ev.png, header: map[string]string{"Content-Type": "image/png"}})
				if resp.StatusCode != 500 {
					t.Fatalf("status %d: %s", resp.StatusCode, b)
				}
				if ev.rowCount(t, "proj-a/f1.png") != 0 || ev.exists(t, "proj-a/f1.png") {
					t.Fatal("row or file left behind")
				}
			})
			t.Run("commit fails", func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				fb.afterPut = func(context.Context) error { cancel(); return nil }
				defer func() { fb.afterPut = nil }()
				r := httptest.NewRequestWithContext(ctx, "POST", "/storage/v1/object/media/proj-a/f2.png", bytes.NewReader(ev.png))
				r.Header.Set("Content-Type", "image/png")
				ev.authorize(r, req{user: "editorA"})
				rec := httptest.NewRecorder()
				ev.e.ServeHTTP(rec, r)
				if rec.Code < 500 {
					t.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				if ev.rowCount(t, "proj-a/f2.png") != 0 || ev.exists(t, "proj-a/f2.png") {
					t.Fatal("row or file left behind")
				}
			})
			t.Run("still works afterwards", func(t *testing.T) {
				resp, b := ev.do(t, req{method: "POST", path: "/storage/v1/object/media/proj-a/f3.png", user: "editorA",
					body: ev.png, header: map[string]string{"Content-Type": "image/png"}})
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d: %s", resp.StatusCode, b)
				}
			})
		})
	}
}

// TestStoreRefusals: what the store itself refuses reaches the client in Storage's shape, with
// nothing left behind: a key under an existing object is a conflict (409), a full disk 507 and
// a read-only one 503. The last two come from a stand-in backend that answers as a full or
// read-only file system would (errno ENOSPC, EROFS): filling the test machine's disk is not an
// option.
func TestStoreRefusals(t *testing.T) {
	t.Parallel()
	fb := &failingBackend{Backend: newBackend(t, "disk")}
	ev := newEnv(t, fb)
	upload := func(key string) (*http.Response, []byte) {
		return ev.do(t, req{method: "POST", path: "/storage/v1/object/media/" + key, user: "editorA",
			body: ev.png, header: map[string]string{"Content-Type": "image/png"}})
	}
	for _, tc := range []struct {
		name, key string
		fail      error
		status    int
		errName   string
	}{
		{"a key under an existing object", "proj-a/photo.png/inside.png", nil, 409, "Duplicate"},
		{"disk full", "proj-a/full.png", syscall.ENOSPC, 507, "InsufficientStorage"},
		{"read-only disk", "proj-a/ro.png", syscall.EROFS, 503, "unavailable"},
		{"segment over 255 bytes", "proj-a/" + strings.Repeat("a", 252) + ".png", nil, 400, "InvalidKey"},
		{"bidi override in the key", "proj-a/gnp\u202e.exe", nil, 400, "InvalidKey"},
		{"C1 control in the key", "proj-a/a\u0085b.png", nil, 400, "InvalidKey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fb.fail.Store(&tc.fail)
			defer fb.fail.Store(nil)
			resp, b := upload(tc.key)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if e := storageError(t, b); e["error"] != tc.errName {
				t.Errorf("error %v, want %q", e, tc.errName)
			}
			if tc.status == 503 && resp.Header.Get("Retry-After") == "" {
				t.Error("a 503 without Retry-After")
			}
			if ev.rowCount(t, tc.key) != 0 || (tc.status != 400 && ev.exists(t, tc.key)) {
				t.Error("row or file left behind")
			}
		})
	}
	if resp, b := upload("proj-a/" + strings.Repeat("a", 251) + ".png"); resp.StatusCode != http.StatusOK {
		t.Errorf("a 255-byte segment: %d %s", resp.StatusCode, b)
	}
}

// failingBackend is a stand-in for a store whose writes fail with fail (when set), as a file
// system does when full or read-only.
type failingBackend struct {
	Backend
	fail atomic.Pointer[error]
}

func (f *failingBackend) Put(ctx context.Context, key string, r io.Reader, size int64, ct string) error {
	if e := f.fail.Load(); e != nil && *e != nil {
		return &os.PathError{Op: "write", Path: key, Err: *e}
	}
	return f.Backend.Put(ctx, key, r, size, ct)
}
