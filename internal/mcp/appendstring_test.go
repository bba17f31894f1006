package mcp

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestAppendStringAsEncodingJSON: the fast path's text content must be the bytes json.Marshal
// writes for the same string, whatever the string holds (appendResult's promise of answering
// as the SDK does rests on it).
func TestAppendStringAsEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", `{"a":"b"}`, `{"title":"Caf\u00e9 \"quoted\" \\ back"}`, "tab\tnew\nline\rcr\bbs\fff",
		"\x00\x01\x1f\x7f", "<script>&amp;</script>", "line\u2028para\u2029end", "é…日本語🙂",
		"bad \xff utf8 \xc3", "\xe2\x80", `\u003c already escaped`,
	} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString([]byte("x"), []byte(s)); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Errorf("%q: got %s, json.Marshal %s", s, got[1:], want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add([]byte(`{"a":"<b>"}`))
	f.Add([]byte("\xff\u2028\n"))
	f.Fuzz(func(t *testing.T, s []byte) {
		want, _ := json.Marshal(string(s))
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, json.Marshal %s", s, got, want)
		}
	})
}
