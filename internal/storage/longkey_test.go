package storage

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"testing"
)

// longKey is a key of exactly n bytes: segs folders of 200 bytes (file systems bound a name at
// 255) under proj-a/<folder>, then a name that makes up the rest.
func longKey(folder string, segs, n int) string {
	k := "proj-a/" + folder + "/" + strings.Repeat(strings.Repeat("k", 200)+"/", segs)
	return k + strings.Repeat("x", n-len(k)-len(".png")) + ".png"
}

// TestLongKeys: a key is bounded at 1024 bytes, S3's limit, and every key within it works end
// to end on each backend: a key of 1001 to 1024 ASCII characters was accepted by the storage
// surface and then refused by the database's former bound of 1000 characters (migration 008),
// which this surface answered as 403 "new row violates row-level security policy". A new
// version of a 1024-byte key ending in a short name set its previous bytes aside at a key
// longer than S3 stores (a 500 on S3). A key past the limit is a 400 that names it, wherever a
// key is given.
func TestLongKeys(t *testing.T) {
	eachBackend(t, func(t *testing.T, ev *env) {
		k1001, k1024, k1025 := longKey("long", 4, 1001), longKey("long", 4, 1024), longKey("long", 4, 1025)
		// A short name at the end of a long key: its folder and a hidden name (where a new
		// version's previous bytes were set aside) are longer than the key.
		moved := longKey("moved", 5, 1024)
		if len(k1001) != 1001 || len(k1024) != 1024 || len(moved) != 1024 || len(k1025) != 1025 || len(path.Base(moved)) > 8 {
			t.Fatalf("keys of %d, %d, %d and %d bytes", len(k1001), len(k1024), len(moved), len(k1025))
		}
		download := func(t *testing.T, key string, want []byte) {
			t.Helper()
			resp, b := ev.do(t, req{path: "/storage/v1/object/authenticated/media/" + key, user: "viewerA"})
			if resp.StatusCode != http.StatusOK || string(b) != string(want) {
				t.Fatalf("download of a %d-byte key: %d, %d bytes, want %d", len(key), resp.StatusCode, len(b), len(want))
			}
		}
		for _, key := range []string{k1001, k1024} {
			t.Run(fmt.Sprintf("upload and download, %d bytes", len(key)), func(t *testing.T) {
				resp, b := ev.do(t, req{method: "POST", path: "/storage/v1/object/media/" + key, user: "editorA",
					body: ev.png, header: map[string]string{"Content-Type": "image/png"}})
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("upload: %d %s", resp.StatusCode, b)
				}
				var out struct{ Id, Key string }
				if err := json.Unmarshal(b, &out); err != nil || out.Id == "" || out.Key != "media/"+key {
					t.Fatalf("answer %s", b)
				}
				download(t, key, ev.png)
			})
		}
		t.Run("list", func(t *testing.T) {
			resp, b := ev.call(t, "POST", "/storage/v1/object/list/media", "viewerA", map[string]any{"prefix": path.Dir(k1024)})
			var got []struct{ Name string }
			if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &got) != nil {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			if len(got) != 2 || got[0].Name != path.Base(k1001) || got[1].Name != path.Base(k1024) {
				t.Fatalf("listed %s, want the names of the 1001- and 1024-byte keys", b)
			}
		})
		t.Run("move to another 1024-byte key", func(t *testing.T) {
			resp, b := ev.call(t, "POST", "/storage/v1/object/move", "editorA",
				map[string]string{"bucketId": "media", "sourceKey": k1024, "destinationKey": moved})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("move: %d %s", resp.StatusCode, b)
			}
			download(t, moved, ev.png)
			if ev.rowCount(t, k1024) != 0 || ev.exists(t, k1024) {
				t.Error("the 1024-byte key still has its row or object")
			}
		})
		t.Run("a new version of a 1024-byte key with a short name", func(t *testing.T) {
			jpg := jpegBytes(t, 8, 8)
			resp, b := ev.do(t, req{method: "PUT", path: "/storage/v1/object/media/" + moved, user: "editorA",
				body: jpg, header: map[string]string{"Content-Type": "image/jpeg"}})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("update: %d %s", resp.StatusCode, b)
			}
			download(t, moved, jpg)
			if left := ev.hiddenLeft(t); len(left) != 0 {
				t.Errorf("left behind: %q", left)
			}
		})

		tooLong := "is 1025 bytes long: an object's key may be at most 1024 bytes (S3's limit)"
		for _, tc := range []struct {
			name, method, path string
			body               any
			msg                string
		}{
			{"upload", "POST", "/storage/v1/object/media/" + k1025, nil, "the key " + tooLong},
			{"download", "GET", "/storage/v1/object/authenticated/media/" + k1025, nil, "the key " + tooLong},
			{"signed upload URL", "POST", "/storage/v1/object/upload/sign/media/" + k1025, nil, "the key " + tooLong},
			{"move", "POST", "/storage/v1/object/move", map[string]string{"bucketId": "media", "sourceKey": moved, "destinationKey": k1025}, "destinationKey " + tooLong},
			{"copy", "POST", "/storage/v1/object/copy", map[string]string{"bucketId": "media", "sourceKey": moved, "destinationKey": k1025}, "destinationKey " + tooLong},
			{"move from", "POST", "/storage/v1/object/move", map[string]string{"bucketId": "media", "sourceKey": k1025, "destinationKey": moved}, "sourceKey " + tooLong},
			{"remove", "DELETE", "/storage/v1/object/media", map[string][]string{"prefixes": {moved, k1025}}, "prefixes[1] " + tooLong},
		} {
			t.Run("1025 bytes: "+tc.name, func(t *testing.T) {
				var resp *http.Response
				var b []byte
				if tc.body == nil {
					resp, b = ev.do(t, req{method: tc.method, path: tc.path, user: "editorA", body: ev.png,
						header: map[string]string{"Content-Type": "image/png"}})
				} else {
					resp, b = ev.call(t, tc.method, tc.path, "editorA", tc.body)
				}
				if e := storageError(t, b); resp.StatusCode != http.StatusBadRequest || e["statusCode"] != "400" || e["error"] != "InvalidKey" || e["message"] != tc.msg {
					t.Errorf("%d %s, want 400 InvalidKey %q", resp.StatusCode, b, tc.msg)
				}
				if ev.rowCount(t, k1025) != 0 || slices.Contains(ev.keys(t), k1025) {
					t.Error("a row or object at the 1025-byte key")
				}
			})
		}
	})
}
