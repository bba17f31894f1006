package rest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func col(name string) SelectItem { return SelectItem{Field: Field{Name: name}} }

func star() SelectItem { return SelectItem{Star: true} }

func embed(rel string, items ...SelectItem) SelectItem {
	return SelectItem{Embed: &Embed{Relation: rel, Select: items}}
}

func TestParseSelect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []SelectItem
	}{
		{"star", "*", []SelectItem{star()}},
		{"empty means no columns", "", nil},
		{"columns", "id,title", []SelectItem{col("id"), col("title")}},
		{"blanks around items", " id , title ", []SelectItem{col("id"), col("title")}},
		{"alias", "heading:title", []SelectItem{{Alias: "heading", Field: Field{Name: "title"}}}},
		{"cast", "version::text", []SelectItem{{Field: Field{Name: "version"}, Cast: "text"}}},
		{"cast with space", "n::double precision", []SelectItem{{Field: Field{Name: "n"}, Cast: "double precision"}}},
		{"alias and cast", "v:version::text", []SelectItem{{Alias: "v", Field: Field{Name: "version"}, Cast: "text"}}},
		{"json arrow", "limits->max_chars", []SelectItem{{Field: Field{Name: "limits", JSON: []JSONStep{{Key: "max_chars"}}}}}},
		{"json text arrow", "limits->>count", []SelectItem{{Field: Field{Name: "limits", JSON: []JSONStep{{Text: true, Key: "count"}}}}}},
		{"json path mixed", "data->a->0->>-1", []SelectItem{{Field: Field{Name: "data", JSON: []JSONStep{{Key: "a"}, {Key: "0", Index: true}, {Text: true, Key: "-1", Index: true}}}}}},
		{"json key with dash", "data->a-b", []SelectItem{{Field: Field{Name: "data", JSON: []JSONStep{{Key: "a-b"}}}}}},
		{"json quoted key", `data->"a.b"`, []SelectItem{{Field: Field{Name: "data", JSON: []JSONStep{{Key: "a.b"}}}}}},
		{"json with alias and cast", "m:limits->>max_chars::int", []SelectItem{{Alias: "m", Field: Field{Name: "limits", JSON: []JSONStep{{Text: true, Key: "max_chars"}}}, Cast: "int"}}},
		{"dashed name", "first-name", []SelectItem{col("first-name")}},
		{"quoted name", `"a,b.c"`, []SelectItem{col("a,b.c")}},
		{"quoted name with escapes", `"a\"b\\c"`, []SelectItem{col(`a"b\c`)}},
		{"unicode name", "título", []SelectItem{col("título")}},
		{"embed", "promos(*)", []SelectItem{{Embed: &Embed{Relation: "promos", Select: []SelectItem{star()}}}}},
		{"empty embed", "promos()", []SelectItem{{Embed: &Embed{Relation: "promos"}}}},
		{"embed alias", "p:promos(id)", []SelectItem{{Alias: "p", Embed: &Embed{Relation: "promos", Select: []SelectItem{col("id")}}}}},
		{"embed hint", "promos!promos_publication_id_fkey(id)", []SelectItem{{Embed: &Embed{Relation: "promos", Hint: "promos_publication_id_fkey", Select: []SelectItem{col("id")}}}}},
		{"embed inner", "promos!inner(id)", []SelectItem{{Embed: &Embed{Relation: "promos", Join: JoinInner, Select: []SelectItem{col("id")}}}}},
		{"embed left", "promos!left(id)", []SelectItem{{Embed: &Embed{Relation: "promos", Join: JoinLeft, Select: []SelectItem{col("id")}}}}},
		{"alias hint inner", "a:promos!channel!inner(*)", []SelectItem{{Alias: "a", Embed: &Embed{Relation: "promos", Hint: "channel", Join: JoinInner, Select: []SelectItem{star()}}}}},
		{"inner before hint", "promos!inner!channel(*)", []SelectItem{{Embed: &Embed{Relation: "promos", Hint: "channel", Join: JoinInner, Select: []SelectItem{star()}}}}},
		{"seed read", "*,promos(*),publication_media(position,media(*))", []SelectItem{
			star(),
			{Embed: &Embed{Relation: "promos", Select: []SelectItem{star()}}},
			{Embed: &Embed{Relation: "publication_media", Select: []SelectItem{
				col("position"),
				{Embed: &Embed{Relation: "media", Select: []SelectItem{star()}}},
			}}},
		}},
		{"deep nesting", "a(b(c(*)))", []SelectItem{embed("a", embed("b", embed("c", star())))}},
		{"count()", "count()", []SelectItem{{Aggregate: "count"}}},
		{"count() renamed and cast", "n:count()::text", []SelectItem{{Alias: "n", Aggregate: "count", AggCast: "text"}}},
		{"sum of a column", "amount.sum()", []SelectItem{{Field: Field{Name: "amount"}, Aggregate: "sum"}}},
		{"aggregate with both casts and an alias", "s:doc->>tax::numeric.avg()::int", []SelectItem{{Alias: "s",
			Field: Field{Name: "doc", JSON: []JSONStep{{Text: true, Key: "tax"}}}, Cast: "numeric", Aggregate: "avg", AggCast: "int"}}},
		{"aggregates grouped by a column", "status,count(),version.max()", []SelectItem{col("status"), {Aggregate: "count"},
			{Field: Field{Name: "version"}, Aggregate: "max"}}},
		{"an embed named count is still an embed", "count(id)", []SelectItem{embed("count", col("id"))}},
		{"spread", "title,...clients(name)", []SelectItem{col("title"), {Embed: &Embed{Relation: "clients", Spread: true, Select: []SelectItem{col("name")}}}}},
		{"spread with hint, inner and alias inside", "...p!fk!inner(n:name)", []SelectItem{{Embed: &Embed{Relation: "p", Hint: "fk", Join: JoinInner, Spread: true,
			Select: []SelectItem{{Alias: "n", Field: Field{Name: "name"}}}}}}},
		{"nested spreads", "...a(x,...b(y))", []SelectItem{{Embed: &Embed{Relation: "a", Spread: true,
			Select: []SelectItem{col("x"), {Embed: &Embed{Relation: "b", Spread: true, Select: []SelectItem{col("y")}}}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseSelect(tt.in)
			if err != nil {
				t.Fatalf("ParseSelect(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseSelect(%q)\n got %#v\nwant %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseSelectErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		details string // substring of Details
	}{
		{"bang without embed", "name!hint", `unexpected "!"`},
		{"star with hint", "*!hint", `unexpected "!"`},
		{"cast without type", "name::", "unexpected end of input"},
		{"trailing comma", "id,", "unexpected end of input"},
		{"unclosed embed", "promos(id", "unexpected end of input"},
		{"stray paren", "id)", `unexpected ")"`},
		{"brackets", "id,clients(name[])", `unexpected "["`},
		{"bad negative index", "data->>-78xy", `unexpected "-"`},
		{"unterminated quote", `"abc`, "unexpected end of input"},
		{"json path on embed", "rel->x(*)", `unexpected "("`},
		{"spread without parentheses", "...rel", `unexpected "r" expecting spread embed`},
		{"spread with an alias", "...a:rel(*)", `unexpected "a" expecting spread embed`},
		{"spread of a star", "...*", `unexpected "*" expecting spread embed`},
		{"two dots", "..rel(*)", `unexpected "."`},
		{"unknown aggregate", "a.median()", `unexpected "m" expecting aggregate function`},
		{"aggregate without parentheses", "a.sum", `unexpected "s" expecting aggregate function`},
		{"count() followed by junk", "count()x", `unexpected "x"`},
		{"too deep", strings.Repeat("a(", maxDepth+2) + strings.Repeat(")", maxDepth+2), "deeper than"},
		{"too many items", strings.Repeat("a,", maxItems) + "a", "too many items"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseSelect(tt.in)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("ParseSelect(%q) = %v, want *Error", tt.in, err)
			}
			if e.Code != "PGRST100" || e.Status != 400 {
				t.Errorf("code/status = %s/%d, want PGRST100/400", e.Code, e.Status)
			}
			if !strings.Contains(e.Details, tt.details) {
				t.Errorf("details = %q, want it to contain %q", e.Details, tt.details)
			}
			if !strings.HasPrefix(e.Message, `"failed to parse select parameter (`) {
				t.Errorf("message = %q", e.Message)
			}
		})
	}
}

func TestErrorJSON(t *testing.T) {
	t.Parallel()
	_, err := ParseSelect("id,")
	b, _ := err.(*Error).MarshalJSON()
	want := `{"code":"PGRST100","details":"unexpected end of input expecting field name (* or [a..z0..9_$])","hint":null,"message":"\"failed to parse select parameter (id,)\" (line 1, column 4)"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
