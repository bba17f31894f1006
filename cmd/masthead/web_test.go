package main

import (
	"encoding/base64"
	"testing"
)

func TestParseSessionKeys(t *testing.T) {
	t.Parallel()
	a := base64.StdEncoding.EncodeToString(make([]byte, 64))
	b := base64.RawURLEncoding.EncodeToString(make([]byte, 32))
	keys, err := parseSessionKeys(a + ", " + b)
	if err != nil || len(keys) != 2 || len(keys[0]) != 64 || len(keys[1]) != 32 {
		t.Fatalf("parseSessionKeys = %d keys, %v", len(keys), err)
	}
	if keys, err := parseSessionKeys("  "); keys != nil || err != nil {
		t.Errorf("empty: %v %v", keys, err)
	}
	if _, err := parseSessionKeys("not base64!"); err == nil {
		t.Error("garbage accepted")
	}
}
