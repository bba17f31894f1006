package storage

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxKeyLen bounds a key as S3 does (1024 bytes), so every backend can store what we accept;
// maxSegmentLen bounds each segment as file systems bound a name (255 bytes).
const (
	maxKeyLen     = 1024
	maxSegmentLen = 255
)

// projectFolder is the first segment of every key: a project slug, as media.storage_path's
// check constraint requires.
var projectFolder = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// keyFromEscaped turns the escaped tail of a request path into an object key, or refuses it.
// It works on the escaped form because that is the only place an encoded slash, backslash or
// NUL can still be told apart from a real one: "a%2F..%2Fb" must not become "a/../b" after
// somebody else unescapes it. A key is relative, valid UTF-8 without control characters, and
// made of non-empty segments other than "." and "..", the first one a project slug.
func keyFromEscaped(escaped string) (string, bool) {
	lower := strings.ToLower(escaped)
	for _, bad := range []string{"%2f", "%5c", "%00"} {
		if strings.Contains(lower, bad) {
			return "", false
		}
	}
	key, err := url.PathUnescape(escaped)
	if err != nil {
		return "", false
	}
	return key, validKey(key)
}

// validKey reports whether key is safe to use as a storage path on every backend and can be
// written into a URL as it is (signed URLs carry the raw key, as Supabase's do): no
// backslash, and none of the characters that end or escape a URL path ("?", "#", "%").
func validKey(key string) bool {
	if key == "" || len(key) > maxKeyLen || !utf8.ValidString(key) {
		return false
	}
	for _, r := range key {
		if unicode.IsControl(r) || isBidiControl(r) || strings.ContainsRune(`\?#%`, r) {
			return false
		}
	}
	segs := strings.Split(key, "/")
	if len(segs) < 2 || !projectFolder.MatchString(segs[0]) {
		return false
	}
	for _, s := range segs {
		if s == "" || s == "." || s == ".." || len(s) > maxSegmentLen {
			return false
		}
	}
	return true
}

// tailAfter returns what follows the first n slashes of an escaped request path: for route
// "/storage/v1/object/:bucket/*" the object key starts after the fifth.
func tailAfter(escapedPath string, n int) string {
	p := escapedPath
	for range n {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return ""
		}
		p = p[i+1:]
	}
	return p
}

// isBidiControl reports the characters that reorder text when shown (LRM, RLM, the embeddings,
// overrides and isolates): in a key they make one name look like another.
func isBidiControl(r rune) bool {
	return r == 0x200e || r == 0x200f || r == 0x061c || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
