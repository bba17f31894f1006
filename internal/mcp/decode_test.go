package mcp

import (
	"encoding/json"
	"reflect"
	"testing"

	"masthead/internal/client"
)

// TestDecodeAsEncodingJSON: decode (segmentio) reads the service's answers into the read
// tools' row types exactly as encoding/json did, including the edges PostgREST's JSON can
// reach: escapes and surrogates, nulls for every kind of field, times in other offsets and
// precisions, embeds absent, null or empty, keys in another case or repeated, unknown keys;
// and it refuses what encoding/json refuses. TestFastPathAnswersAsTheSDK and
// TestReadToolsDecodeAsEncodingJSON cover the real answers end to end.
func TestDecodeAsEncodingJSON(t *testing.T) {
	const full = `{"id":"p1","project_id":"pr","collection_id":null,"title":"Caf\u00e9 \ud83d\ude00 \ud800 \u0000 \/ \"q\" <b>&</b>",` +
		`"slug":"s","summary":"line\nbreak\u2028","body":"# Title\r\n\ttabbed","status":"draft",` +
		`"scheduled_for":"2026-05-01T09:00:00+05:30","published_at":"2026-05-02T00:00:00.123456789Z","author_id":"a",` +
		`"version":7,"created_at":"2026-11-23T20:49:24.074604+00:00","updated_at":"2026-11-23T20:49:24-00:00",` +
		`"author":{"display_name":"Tom Reyes"},"project":{"slug":"northwind","name":"Northwind Daily"},` +
		`"collection":{"id":"c","slug":"sport","name":"Sport"},` +
		`"promos":[{"id":"x","channel":"x","body":"🙂","link":null,"updated_at":"2026-01-01T00:00:00+00:00","channels":{"slug":"x","name":"X","limits":{"max_chars":280,"count":"chars","url_chars":23,"max_media":4,"max_hashtags":0}}}],` +
		`"publication_media":[{"position":1,"media":{"id":"m","storage_path":"a/b.png","kind":"image","mime_type":"image/png","alt_text":null,"width":640,"height":null,"bytes":12345678901}}],` +
		`"reviews":[{"id":"r","reviewer_id":"u","verdict":"approved","notes":"ok","created_at":"2026-01-01T00:00:00.5+00:00","reviewer":null}],` +
		`"status_events":[{"id":9007199254740993,"from_status":"draft","to_status":"reviewing","actor_id":null,"intent":"submit","note":"","via":"rpc","created_at":"2026-01-01T00:00:00+00:00","actor":{"display_name":"A"}}]}`
	rows := []string{
		`[]`, `null`, `[` + full + `]`, `[` + full + `,` + full + `]`,
		`[{"id":"p","title":null,"version":null,"scheduled_for":null,"updated_at":"2026-01-01T00:00:00Z","author":null,"collection":null,"project":null,"promos":null,"reviews":[]}]`,
		`[{"ID":"upper","Title":"case","UPDATED_AT":"2026-01-01T00:00:00Z","extra":{"nested":[1,2,{"a":null}]},"title":"last wins","title":"really last"}]`,
		"[{\"id\":\"bad \xff utf8 \xc3\",\"title\":\"\xe2\x80\"}]",
		` [ { "id" : "spaced" } ] `,
		`[{"version":1.5}]`, `[{"version":"7"}]`, `[{"updated_at":"yesterday"}]`, `[{"id":1}]`, `{"id":"object not array"}`,
		`[{"id":"unterminated"`, `[1]`, `[{"version":1e2}]`, `[{"version":99999999999999999999}]`,
	}
	for _, body := range rows {
		var seg, std []pubRow
		segErr, stdErr := decode([]byte(body), &seg), json.Unmarshal([]byte(body), &std)
		if (segErr == nil) != (stdErr == nil) {
			t.Errorf("%s: decode error %v, encoding/json %v", body, segErr, stdErr)
			continue
		}
		if stdErr == nil && !reflect.DeepEqual(seg, std) {
			t.Errorf("%s:\ndecode        %+v\nencoding/json %+v", body, seg, std)
		}
	}
	for _, body := range []string{full, `null`, `{}`, `{"promos":[],"reviews":null}`} {
		var seg, std pubRow
		segErr, stdErr := decode([]byte(body), &seg), json.Unmarshal([]byte(body), &std)
		if (segErr == nil) != (stdErr == nil) || !reflect.DeepEqual(seg, std) {
			t.Errorf("%s: decode %+v %v\nencoding/json %+v %v", body, seg, segErr, std, stdErr)
		}
	}
	for _, body := range []string{
		`[{"id":"a","slug":"northwind","name":"N","timezone":"Europe/London","default_channels":["x","bluesky"],"site_url":null,` +
			`"collections":[{"id":"c","slug":"s","name":"S","kind":"section"}],"project_members":[{"user_id":"u","role":"editor"}]}]`,
		`[{"id":"a","default_channels":null,"collections":[],"project_members":[]}]`,
		`[{"id":"a","default_channels":[null,"x"]}]`,
	} {
		var seg, std []client.Project
		segErr, stdErr := decode([]byte(body), &seg), json.Unmarshal([]byte(body), &std)
		if (segErr == nil) != (stdErr == nil) || !reflect.DeepEqual(seg, std) {
			t.Errorf("%s: decode %+v %v\nencoding/json %+v %v", body, seg, segErr, std, stdErr)
		}
	}
}
