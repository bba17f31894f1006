package rest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseFilter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		key, value string
		want       Filter
	}{
		{"eq", "id", "eq.1", Filter{Field: Field{Name: "id"}, Expr: OpExpr{Op: OpEq, Value: "1"}}},
		{"neq", "status", "neq.draft", Filter{Field: Field{Name: "status"}, Expr: OpExpr{Op: OpNeq, Value: "draft"}}},
		{"gt", "version", "gt.1", Filter{Field: Field{Name: "version"}, Expr: OpExpr{Op: OpGt, Value: "1"}}},
		{"gte", "version", "gte.1", Filter{Field: Field{Name: "version"}, Expr: OpExpr{Op: OpGte, Value: "1"}}},
		{"lt", "version", "lt.1", Filter{Field: Field{Name: "version"}, Expr: OpExpr{Op: OpLt, Value: "1"}}},
		{"lte", "version", "lte.1", Filter{Field: Field{Name: "version"}, Expr: OpExpr{Op: OpLte, Value: "1"}}},
		{"like", "title", "like.*news*", Filter{Field: Field{Name: "title"}, Expr: OpExpr{Op: OpLike, Value: "*news*"}}},
		{"ilike", "title", "ilike.*NEWS*", Filter{Field: Field{Name: "title"}, Expr: OpExpr{Op: OpILike, Value: "*NEWS*"}}},
		{"match", "title", "match.^A", Filter{Field: Field{Name: "title"}, Expr: OpExpr{Op: OpMatch, Value: "^A"}}},
		{"imatch", "title", "imatch.^a", Filter{Field: Field{Name: "title"}, Expr: OpExpr{Op: OpIMatch, Value: "^a"}}},
		{"value keeps dots and quotes", "title", `eq."a.b,c"`, Filter{Field: Field{Name: "title"}, Expr: OpExpr{Op: OpEq, Value: `"a.b,c"`}}},
		{"empty value", "title", "eq.", Filter{Field: Field{Name: "title"}, Expr: OpExpr{Op: OpEq}}},
		{"in", "status", "in.(draft,reviewing)", Filter{Field: Field{Name: "status"}, Expr: OpExpr{Op: OpIn, List: []string{"draft", "reviewing"}}}},
		{"in quoted", "name", `in.("Hebdon,John","Williams,Mary")`, Filter{Field: Field{Name: "name"}, Expr: OpExpr{Op: OpIn, List: []string{"Hebdon,John", "Williams,Mary"}}}},
		{"in escaped quote", "name", `in.("a\"b","c\\d")`, Filter{Field: Field{Name: "name"}, Expr: OpExpr{Op: OpIn, List: []string{`a"b`, `c\d`}}}},
		{"in quote not closing element", "name", `in.("a"b,c)`, Filter{Field: Field{Name: "name"}, Expr: OpExpr{Op: OpIn, List: []string{`"a"b`, "c"}}}},
		{"in empty list", "name", "in.()", Filter{Field: Field{Name: "name"}, Expr: OpExpr{Op: OpIn, List: []string{}}}},
		{"in empty list with blanks", "name", "in.( )", Filter{Field: Field{Name: "name"}, Expr: OpExpr{Op: OpIn, List: []string{}}}},
		{"in one empty string", "name", `in.("")`, Filter{Field: Field{Name: "name"}, Expr: OpExpr{Op: OpIn, List: []string{""}}}},
		{"is null", "scheduled_for", "is.null", Filter{Field: Field{Name: "scheduled_for"}, Expr: OpExpr{Op: OpIs, Value: "null"}}},
		{"is NULL any case", "scheduled_for", "is.NuLL", Filter{Field: Field{Name: "scheduled_for"}, Expr: OpExpr{Op: OpIs, Value: "null"}}},
		{"is not_null", "scheduled_for", "is.not_null", Filter{Field: Field{Name: "scheduled_for"}, Expr: OpExpr{Op: OpIs, Value: "not_null"}}},
		{"is true", "b", "is.true", Filter{Field: Field{Name: "b"}, Expr: OpExpr{Op: OpIs, Value: "true"}}},
		{"is unknown", "b", "is.unknown", Filter{Field: Field{Name: "b"}, Expr: OpExpr{Op: OpIs, Value: "unknown"}}},
		{"isdistinct", "b", "isdistinct.x", Filter{Field: Field{Name: "b"}, Expr: OpExpr{Op: OpIsDistinct, Value: "x"}}},
		{"fts", "body", "fts.cat & dog", Filter{Field: Field{Name: "body"}, Expr: OpExpr{Op: OpFts, Value: "cat & dog"}}},
		{"fts language", "body", "fts(english).cats", Filter{Field: Field{Name: "body"}, Expr: OpExpr{Op: OpFts, Language: "english", Value: "cats"}}},
		{"plfts", "body", "plfts.cat dog", Filter{Field: Field{Name: "body"}, Expr: OpExpr{Op: OpPlFts, Value: "cat dog"}}},
		{"phfts", "body", "phfts(simple).cat dog", Filter{Field: Field{Name: "body"}, Expr: OpExpr{Op: OpPhFts, Language: "simple", Value: "cat dog"}}},
		{"wfts", "body", `wfts."cat" -dog`, Filter{Field: Field{Name: "body"}, Expr: OpExpr{Op: OpWFts, Value: `"cat" -dog`}}},
		{"cs array", "tags", "cs.{a,b}", Filter{Field: Field{Name: "tags"}, Expr: OpExpr{Op: OpCs, Value: "{a,b}"}}},
		{"cd json", "limits", `cd.{"max_chars":280}`, Filter{Field: Field{Name: "limits"}, Expr: OpExpr{Op: OpCd, Value: `{"max_chars":280}`}}},
		{"ov", "tags", "ov.{a}", Filter{Field: Field{Name: "tags"}, Expr: OpExpr{Op: OpOv, Value: "{a}"}}},
		{"range sl", "r", "sl.[1,2)", Filter{Field: Field{Name: "r"}, Expr: OpExpr{Op: OpSl, Value: "[1,2)"}}},
		{"range adj", "r", "adj.[1,2)", Filter{Field: Field{Name: "r"}, Expr: OpExpr{Op: OpAdj, Value: "[1,2)"}}},
		{"not", "status", "not.eq.draft", Filter{Field: Field{Name: "status"}, Expr: OpExpr{Not: true, Op: OpEq, Value: "draft"}}},
		{"not in", "status", "not.in.(a,b)", Filter{Field: Field{Name: "status"}, Expr: OpExpr{Not: true, Op: OpIn, List: []string{"a", "b"}}}},
		{"not is null (semi-join form)", "promos", "not.is.null", Filter{Field: Field{Name: "promos"}, Expr: OpExpr{Not: true, Op: OpIs, Value: "null"}}},
		{"any", "title", "like(any).{a*,b*}", Filter{Field: Field{Name: "title"}, Expr: OpExpr{Op: OpLike, Quant: QuantAny, Value: "{a*,b*}"}}},
		{"all", "title", "ilike(all).{*a*,*b*}", Filter{Field: Field{Name: "title"}, Expr: OpExpr{Op: OpILike, Quant: QuantAll, Value: "{*a*,*b*}"}}},
		{"not eq all", "id", "not.eq(all).{1,2}", Filter{Field: Field{Name: "id"}, Expr: OpExpr{Not: true, Op: OpEq, Quant: QuantAll, Value: "{1,2}"}}},
		{"gte any", "v", "gte(any).{1,2}", Filter{Field: Field{Name: "v"}, Expr: OpExpr{Op: OpGte, Quant: QuantAny, Value: "{1,2}"}}},
		{"embedded path", "promos.channel", "eq.x", Filter{Path: []string{"promos"}, Field: Field{Name: "channel"}, Expr: OpExpr{Op: OpEq, Value: "x"}}},
		{"deep embedded path", "publication_media.media.kind", "eq.image", Filter{Path: []string{"publication_media", "media"}, Field: Field{Name: "kind"}, Expr: OpExpr{Op: OpEq, Value: "image"}}},
		{"json path key", "limits->>count", "eq.chars", Filter{Field: Field{Name: "limits", JSON: []JSONStep{{Text: true, Key: "count"}}}, Expr: OpExpr{Op: OpEq, Value: "chars"}}},
		{"quoted column with dot", `"information.cpe"`, "like.*MS*", Filter{Field: Field{Name: "information.cpe"}, Expr: OpExpr{Op: OpLike, Value: "*MS*"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseFilter(tt.key, tt.value)
			if err != nil {
				t.Fatalf("ParseFilter(%q, %q): %v", tt.key, tt.value, err)
			}
			if len(got.Path) == 0 {
				got.Path = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseFilter(%q, %q)\n got %#v\nwant %#v", tt.key, tt.value, got, tt.want)
			}
		})
	}
}

func TestParseFilterErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		key, value string
		details    string
	}{
		{"no operator", "id", "val", `expecting "not" or operator`},
		{"unknown operator", "id", "noop.1", `unexpected "n"`},
		{"missing delimiter", "id", "eq", "expecting delimiter (.)"},
		{"quantifier on neq", "id", "neq(any).{1}", `unexpected "("`},
		{"quantifier on in", "id", "in(any).(1)", `unexpected "("`},
		{"bad quantifier", "id", "eq(some).1", `unexpected "("`},
		{"is bad value", "id", "is.maybe", "isVal"},
		{"is trailing", "id", "is.nullx", "isVal"},
		{"in without parens", "id", "in.1,2", `expecting "("`},
		{"in unclosed", "id", "in.(1,2", `expecting "," or ")"`},
		{"in trailing", "id", "in.(1)x", "expecting end of input"},
		{"not twice", "id", "not.not.eq.1", `unexpected "n"`},
		{"fts bad language", "body", "fts(english.x", `expecting ")"`},
		{"empty key", "", "eq.1", "field name"},
		{"key trailing", "id)", "eq.1", `unexpected ")"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseFilter(tt.key, tt.value)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("ParseFilter(%q, %q) = %v, want *Error", tt.key, tt.value, err)
			}
			if e.Code != "PGRST100" || !strings.Contains(e.Details, tt.details) {
				t.Errorf("got %s %q, want PGRST100 with %q", e.Code, e.Details, tt.details)
			}
		})
	}
}
