package rest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func leaf(name string, e OpExpr) LogicTree {
	return LogicTree{Leaf: &Filter{Field: Field{Name: name}, Expr: e}}
}

func TestParseLogic(t *testing.T) {
	t.Parallel()
	eq := func(v string) OpExpr { return OpExpr{Op: OpEq, Value: v} }
	tests := []struct {
		name       string
		key, value string
		want       Logic
	}{
		{"or", "or", "(a.eq.1,b.eq.2)", Logic{Tree: LogicTree{Or: true, Children: []LogicTree{leaf("a", eq("1")), leaf("b", eq("2"))}}}},
		{"and", "and", "(a.eq.1,b.eq.2)", Logic{Tree: LogicTree{Children: []LogicTree{leaf("a", eq("1")), leaf("b", eq("2"))}}}},
		{"not or", "not.or", "(a.eq.1)", Logic{Tree: LogicTree{Not: true, Or: true, Children: []LogicTree{leaf("a", eq("1"))}}}},
		{"nested", "and", "(id.gte.1,or(a.eq.x,not.and(b.eq.y,c.eq.z)))", Logic{Tree: LogicTree{Children: []LogicTree{
			leaf("id", OpExpr{Op: OpGte, Value: "1"}),
			{Or: true, Children: []LogicTree{
				leaf("a", eq("x")),
				{Not: true, Children: []LogicTree{leaf("b", eq("y")), leaf("c", eq("z"))}},
			}},
		}}}},
		{"embedded path", "promos.or", "(channel.eq.x,channel.eq.y)", Logic{Path: []string{"promos"}, Tree: LogicTree{Or: true, Children: []LogicTree{leaf("channel", eq("x")), leaf("channel", eq("y"))}}}},
		{"embedded not", "promos.not.and", "(a.eq.1)", Logic{Path: []string{"promos"}, Tree: LogicTree{Not: true, Children: []LogicTree{leaf("a", eq("1"))}}}},
		{"quoted value with reserved chars", "or", `(title.eq."a,b (c)",id.eq.2)`, Logic{Tree: LogicTree{Or: true, Children: []LogicTree{leaf("title", eq("a,b (c)")), leaf("id", eq("2"))}}}},
		{"quoted value with escapes", "or", `(title.eq."say \"hi\"")`, Logic{Tree: LogicTree{Or: true, Children: []LogicTree{leaf("title", eq(`say "hi"`))}}}},
		{"pg array value", "or", "(tags.cs.{a,b},tags.ov.{c})", Logic{Tree: LogicTree{Or: true, Children: []LogicTree{leaf("tags", OpExpr{Op: OpCs, Value: "{a,b}"}), leaf("tags", OpExpr{Op: OpOv, Value: "{c}"})}}}},
		{"in list", "or", `(status.in.(draft,"a,b"),id.eq.1)`, Logic{Tree: LogicTree{Or: true, Children: []LogicTree{leaf("status", OpExpr{Op: OpIn, List: []string{"draft", "a,b"}}), leaf("id", eq("1"))}}}},
		{"is and not", "or", "(scheduled_for.is.null,status.not.eq.draft)", Logic{Tree: LogicTree{Or: true, Children: []LogicTree{leaf("scheduled_for", OpExpr{Op: OpIs, Value: "null"}), leaf("status", OpExpr{Not: true, Op: OpEq, Value: "draft"})}}}},
		{"fts with language", "or", "(body.fts(english).cat,title.like(any).{a*,b*})", Logic{Tree: LogicTree{Or: true, Children: []LogicTree{leaf("body", OpExpr{Op: OpFts, Language: "english", Value: "cat"}), leaf("title", OpExpr{Op: OpLike, Quant: QuantAny, Value: "{a*,b*}"})}}}},
		{"json path leaf", "or", "(limits->>count.eq.chars)", Logic{Tree: LogicTree{Or: true, Children: []LogicTree{{Leaf: &Filter{Field: Field{Name: "limits", JSON: []JSONStep{{Text: true, Key: "count"}}}, Expr: eq("chars")}}}}}},
		{"blanks", "or", "( a.eq.1 , b.eq.2 )", Logic{Tree: LogicTree{Or: true, Children: []LogicTree{leaf("a", eq("1 ")), leaf("b", eq("2 "))}}}},
		{"column named and", "or", "(and.eq.1)", Logic{Tree: LogicTree{Or: true, Children: []LogicTree{leaf("and", eq("1"))}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseLogic(tt.key, tt.value)
			if err != nil {
				t.Fatalf("ParseLogic(%q, %q): %v", tt.key, tt.value, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseLogic(%q, %q)\n got %+v\nwant %+v", tt.key, tt.value, got, tt.want)
			}
		})
	}
}

func TestParseLogicErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		key, value string
		details    string
	}{
		{"empty", "or", "()", "expecting field name"},
		{"in without parens", "or", "(id.in.1,2,id.eq.3)", "unexpected"},
		{"unbalanced", "or", ")(", `expecting "("`},
		{"bad nested op", "and", "(ord(id.eq.1),id.eq.2)", "unexpected"},
		{"not xor", "or", "(id.eq.1,not.xor(id.eq.2))", "logic operator"},
		{"unclosed", "or", "(a.eq.1", "unexpected end of input"},
		{"trailing", "or", "(a.eq.1)x", "expecting end of input"},
		{"bare filter", "or", ".eq.1", "logic operator"},
		{"too deep", "or", strings.Repeat("(or", maxDepth+1) + "(a.eq.1" + strings.Repeat(")", maxDepth+2), "deeper than"},
		{"too many leaves", "or", "(" + strings.Repeat("a.eq.1,", maxItems) + "a.eq.1)", "too many items"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseLogic(tt.key, tt.value)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("ParseLogic(%q, %q) = %v, want *Error", tt.key, tt.value, err)
			}
			if e.Code != "PGRST100" || !strings.Contains(e.Details, tt.details) {
				t.Errorf("got %s %q, want PGRST100 with %q", e.Code, e.Details, tt.details)
			}
		})
	}
}
