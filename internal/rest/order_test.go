package rest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseOrder(t *testing.T) {
	t.Parallel()
	f := func(n string) Field { return Field{Name: n} }
	tests := []struct {
		name string
		in   string
		want []OrderTerm
	}{
		{"column", "created_at", []OrderTerm{{Field: f("created_at")}}},
		{"desc", "created_at.desc", []OrderTerm{{Field: f("created_at"), Dir: DirDesc}}},
		{"asc nullsfirst", "scheduled_for.asc.nullsfirst", []OrderTerm{{Field: f("scheduled_for"), Dir: DirAsc, Nulls: NullsFirst}}},
		{"nullslast alone", "scheduled_for.nullslast", []OrderTerm{{Field: f("scheduled_for"), Nulls: NullsLast}}},
		{"several", "status,created_at.desc,id", []OrderTerm{{Field: f("status")}, {Field: f("created_at"), Dir: DirDesc}, {Field: f("id")}}},
		{"json path", "limits->>max_chars.desc.nullslast", []OrderTerm{{Field: Field{Name: "limits", JSON: []JSONStep{{Text: true, Key: "max_chars"}}}, Dir: DirDesc, Nulls: NullsLast}}},
		{"json index", "data->0.asc", []OrderTerm{{Field: Field{Name: "data", JSON: []JSONStep{{Key: "0", Index: true}}}, Dir: DirAsc}}},
		{"related column", "collections(name).desc", []OrderTerm{{Relation: "collections", Field: f("name"), Dir: DirDesc}}},
		{"related json", "channels(limits->key).desc.nullsfirst", []OrderTerm{{Relation: "channels", Field: Field{Name: "limits", JSON: []JSONStep{{Key: "key"}}}, Dir: DirDesc, Nulls: NullsFirst}}},
		{"mixed", "name,collections(name),id", []OrderTerm{{Field: f("name")}, {Relation: "collections", Field: f("name")}, {Field: f("id")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseOrder(tt.in)
			if err != nil {
				t.Fatalf("ParseOrder(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseOrder(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseOrderErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, details string }{
		{"typo in direction", "id.ac", `expecting "asc", "desc", "nullsfirst" or "nullslast"`},
		{"direction too long", "id.descc", `unexpected "c"`},
		{"typo in nulls", "id.nulsfist", `expecting "asc"`},
		{"nulls too long", "id.nullslasttt", `unexpected "t"`},
		{"typo after direction", "id.asc.nlsfst", `expecting "nullsfirst" or "nullslast"`},
		{"two relation columns", "clients(name,id)", `expecting ")"`},
		{"empty", "", "field name"},
		{"trailing comma", "id,", "unexpected end of input"},
		{"direction twice", "id.asc.desc", `expecting "nullsfirst" or "nullslast"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseOrder(tt.in)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("ParseOrder(%q) = %v, want *Error", tt.in, err)
			}
			if e.Code != "PGRST100" || !strings.Contains(e.Details, tt.details) {
				t.Errorf("got %s %q, want PGRST100 with %q", e.Code, e.Details, tt.details)
			}
		})
	}
}
