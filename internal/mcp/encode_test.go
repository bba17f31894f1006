package mcp

import (
	"bytes"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"
)

// TestAppendJSONAsEncodingJSON: the results that write their own JSON write json.Marshal's
// bytes, for every field's edge: empty and nil lists, omitted fields, strings that need
// escaping, times in other zones and precisions, and a time json.Marshal refuses (which sends
// encodeResult back to json.Marshal, error and all).
func TestAppendJSONAsEncodingJSON(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ptr := func(v time.Time) *time.Time { return &v }
	next := 40
	odd := "Caf\u00e9 <b>&</b> \"quoted\" \\ \u2028 \x01 \xff 🙂"
	full := Publication{
		ID: "p1", Project: "northwind", Title: odd, Status: "scheduled", Version: 7, Collection: "News",
		Author: "Tom Reyes", Summary: "About…", ScheduledFor: ptr(at("2026-05-01T09:00:00+02:00")),
		PublishedAt: ptr(at("2026-05-02T00:00:00.123456789Z")), UpdatedAt: at("2026-11-23T17:36:26.1717Z"),
		URL: "https://masthead.example/p/northwind/publications/p1",
	}
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"no projects", ProjectsOut{}},
		{"empty projects", ProjectsOut{Projects: []Project{}}},
		{"projects", ProjectsOut{Projects: []Project{
			{ID: "a", Slug: "northwind", Name: odd, Role: "editor", Timezone: "Europe/London", DefaultChannels: []string{"x", "bluesky"},
				Collections: []Collection{{ID: "c", Slug: "news", Name: "News", Kind: "section"}, {}}, QueueURL: "https://q/<x>", ScheduleURL: "s"},
			{},
			{DefaultChannels: []string{}, Collections: []Collection{}},
		}}},
		{"no publications", PageOut{}},
		{"empty page", PageOut{Total: 0, Publications: []Publication{}}},
		{"page", PageOut{Total: 152, Publications: []Publication{full, {}, {Version: -1, UpdatedAt: at("0001-01-01T00:00:00Z")}}, NextOffset: &next}},
		{"zero next offset", PageOut{Publications: []Publication{}, NextOffset: new(int)}},
		{"time in another zone", PageOut{Publications: []Publication{{UpdatedAt: at("2026-03-29T01:30:00.5-09:30")}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			var hint atomic.Int64
			got, err := encodeResult(tc.v, []byte("stale"), &hint)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("appendJSON: %s %v\njson.Marshal: %s", got, err, want)
			}
			if _, ok := tc.v.(jsonAppender); !ok {
				t.Errorf("%T does not write its own JSON", tc.v)
			}
		})
	}
	t.Run("year json.Marshal refuses", func(t *testing.T) {
		v := PageOut{Publications: []Publication{{UpdatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}}
		_, want := json.Marshal(v)
		var hint atomic.Int64
		if _, err := encodeResult(v, nil, &hint); want == nil || err == nil || err.Error() != want.Error() {
			t.Errorf("encodeResult: %v, json.Marshal: %v", err, want)
		}
	})
}
