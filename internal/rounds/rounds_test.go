package rounds

import (
	"encoding/json"
	"testing"
)

func ptr(s string) *string { return &s }

func TestCompare(t *testing.T) {
	t.Parallel()
	r1 := Snapshot{
		Title: "Harbour reopens", Summary: "The harbour is open.", Body: "The harbour reopened on Monday.\n\nFerries run hourly.\n",
		Promos: []SnapshotPromo{{Channel: "x", Body: "Harbour open", Link: ptr("https://n.test/h")}, {Channel: "bluesky", Body: "Open!"}, {Channel: "linkedin", Body: "Same"}},
		Media:  []SnapshotMedia{{ID: "m1", Position: 0, AltText: "A pier"}, {ID: "m2", Position: 1, AltText: "A boat"}, {ID: "m3", Position: 2, AltText: "Gulls"}},
	}
	r2 := Snapshot{
		Title: "Harbour reopens", Summary: "The harbour is open again.", Body: "The harbour reopened on Tuesday.\n\nFerries run hourly.\n",
		Promos: []SnapshotPromo{{Channel: "x", Body: "Harbour open again", Link: ptr("https://n.test/h")}, {Channel: "linkedin", Body: "Same"}, {Channel: "threads", Body: "New"}},
		Media:  []SnapshotMedia{{ID: "m2", Position: 0, AltText: "A ferry"}, {ID: "m1", Position: 1, AltText: "A pier"}, {ID: "m4", Position: 2, AltText: "Crowds"}},
	}
	c := Compare(r1, r2)
	if c.Title.Changed() || !c.Summary.Changed() || !c.Body.Changed() || !c.Any() {
		t.Fatalf("fields: title %v summary %v body %v", c.Title.Changed(), c.Summary.Changed(), c.Body.Changed())
	}
	if c.Deleted != 1 || c.Inserted != 1 {
		t.Errorf("body words -%d +%d", c.Deleted, c.Inserted)
	}
	promos := map[string]string{}
	for _, p := range c.Promos {
		promos[p.Channel] = p.Kind
	}
	if want := map[string]string{"x": Changed, "bluesky": Removed, "threads": Added}; len(promos) != 3 || promos["x"] != want["x"] || promos["bluesky"] != want["bluesky"] || promos["threads"] != want["threads"] {
		t.Errorf("promos %v", promos)
	}
	media := map[string]string{}
	for _, m := range c.Media {
		media[m.ID] = m.Kind
	}
	if want := (map[string]string{"m3": Removed, "m2": Recaptioned, "m1": Moved, "m4": Added}); len(media) != 4 ||
		media["m3"] != want["m3"] || media["m2"] != want["m2"] || media["m1"] != want["m1"] || media["m4"] != want["m4"] {
		t.Errorf("media %v", media)
	}

	got, _ := json.Marshal(c.ToCompact(1, 2))
	want := `{"from_round":1,"to_round":2,"summary":{"old":"The harbour is open.","new":"The harbour is open again."},` +
		`"body_edits":[{"before":"The harbour reopened on","deleted":"Monday","inserted":"Tuesday","after":". Ferries run hourly."}],` +
		`"body_words":{"deleted":1,"inserted":1},` +
		`"promos":[{"channel":"bluesky","change":"removed","old":"Open!"},{"channel":"threads","change":"added","new":"New"},` +
		`{"channel":"x","change":"changed","old":"Harbour open","new":"Harbour open again","old_link":"https://n.test/h","new_link":"https://n.test/h"}],` +
		`"media":[{"id":"m3","change":"removed","old_alt_text":"Gulls"},{"id":"m2","change":"recaptioned","old_alt_text":"A boat","new_alt_text":"A ferry"},` +
		`{"id":"m1","change":"moved","old_alt_text":"A pier","new_alt_text":"A pier"},{"id":"m4","change":"added","new_alt_text":"Crowds"}]}`
	if string(got) != want {
		t.Errorf("compact:\n got %s\nwant %s", got, want)
	}
}

func TestCompareSame(t *testing.T) {
	t.Parallel()
	s := Snapshot{Title: "T", Body: "b", Promos: []SnapshotPromo{{Channel: "x", Body: "p"}}, Media: []SnapshotMedia{{ID: "m", AltText: "a"}}}
	c := Compare(s, s)
	if c.Any() {
		t.Errorf("identical rounds differ: %+v", c)
	}
	if got, _ := json.Marshal(c.ToCompact(2, 3)); string(got) != `{"from_round":2,"to_round":3,"unchanged":true}` {
		t.Errorf("compact %s", got)
	}
}
