package rest

import (
	"strconv"
	"strings"
)

// Operator families, as PostgREST groups them: quantifiable ones take
// (any)/(all), full-text ones take (language), simple ones take neither.
var (
	quantOps  = map[string]Operator{"eq": OpEq, "gt": OpGt, "gte": OpGte, "lt": OpLt, "lte": OpLte, "like": OpLike, "ilike": OpILike, "match": OpMatch, "imatch": OpIMatch}
	simpleOps = map[string]Operator{"neq": OpNeq, "cs": OpCs, "cd": OpCd, "ov": OpOv, "sl": OpSl, "sr": OpSr, "nxr": OpNxr, "nxl": OpNxl, "adj": OpAdj}
	ftsOps    = map[string]Operator{"fts": OpFts, "plfts": OpPlFts, "phfts": OpPhFts, "wfts": OpWFts}
	isValues  = []string{"null", "not_null", "true", "false", "unknown"}
)

const expOperator = "operator (eq, gt, ...)"

// ParseFilter parses one filter parameter: key is [embed.]*column[->json],
// value is [not.]op[(modifier)].value. At the top level the value is taken
// literally up to the end; quotes only matter inside in.(…).
func ParseFilter(key, value string) (Filter, error) {
	f, err := parseFilter(key, value)
	if err != nil {
		return Filter{}, err
	}
	return f, nil
}

func parseFilter(key, value string) (Filter, *Error) {
	path, field, err := parseTreePath(key)
	if err != nil {
		return Filter{}, err
	}
	s := newScanner("failed to parse filter", value)
	expr, err := opExpr(s, false)
	if err != nil {
		return Filter{}, err
	}
	if !s.eof() {
		return Filter{}, s.fail("end of input")
	}
	return Filter{Path: path, Field: field, Expr: expr}, nil
}

// parseTreePath reads name(.name)*[->json]: the leading names are the
// embed path, the last one the column.
func parseTreePath(key string) ([]string, Field, *Error) {
	s := newScanner("failed to parse tree path", key)
	var names []string
	for {
		if len(names) > maxDepth {
			return nil, Field{}, s.failf("embedded path deeper than " + strconv.Itoa(maxDepth) + " levels")
		}
		n, err := s.fieldName()
		if err != nil {
			return nil, Field{}, err
		}
		names = append(names, n)
		if !s.accept(".") {
			break
		}
	}
	js, err := s.jsonPath()
	if err != nil {
		return nil, Field{}, err
	}
	if !s.eof() {
		return nil, Field{}, s.fail(`"."`, `"->"`, "end of input")
	}
	last := len(names) - 1
	return names[:last:last], Field{Name: names[last], JSON: js}, nil
}

// opExpr reads [not.]operation. inLogic selects the value grammar of and/or
// trees, where a value ends at , or ) unless quoted or an {array}.
func opExpr(s *scanner, inLogic bool) (OpExpr, *Error) {
	var e OpExpr
	if s.accept("not.") {
		e.Not = true
	}
	start := s.pos
	for s.pos < len(s.src) && s.src[s.pos] >= 'a' && s.src[s.pos] <= 'z' {
		s.pos++
	}
	word := s.src[start:s.pos]
	switch {
	case word == "in":
		e.Op = OpIn
		if !s.accept(".") {
			return e, s.fail("delimiter (.)")
		}
		list, err := listValue(s)
		if err != nil {
			return e, err
		}
		e.List = list
	case word == "is":
		e.Op = OpIs
		if !s.accept(".") {
			return e, s.fail("delimiter (.)")
		}
		v, err := isValue(s, inLogic)
		if err != nil {
			return e, err
		}
		e.Value = v
	case word == "isdistinct":
		e.Op = OpIsDistinct
		if !s.accept(".") {
			return e, s.fail("delimiter (.)")
		}
		e.Value = singleValue(s, inLogic)
	case ftsOps[word] != "":
		e.Op = ftsOps[word]
		if s.accept("(") {
			lang, ok := s.identifier()
			if !ok {
				return e, s.fail("letter or digit")
			}
			if !s.accept(")") {
				return e, s.fail(`")"`)
			}
			e.Language = lang
		}
		if !s.accept(".") {
			return e, s.fail("delimiter (.)")
		}
		e.Value = singleValue(s, inLogic)
	case simpleOps[word] != "":
		e.Op = simpleOps[word]
		if !s.accept(".") {
			return e, s.fail("delimiter (.)")
		}
		e.Value = singleValue(s, inLogic)
	case quantOps[word] != "":
		e.Op = quantOps[word]
		switch {
		case s.accept("(any)"):
			e.Quant = QuantAny
		case s.accept("(all)"):
			e.Quant = QuantAll
		}
		if !s.accept(".") {
			return e, s.fail("delimiter (.)")
		}
		e.Value = singleValue(s, inLogic)
	default:
		s.pos = start
		if e.Not {
			return e, s.fail(expOperator)
		}
		return e, s.fail(`"not"`, expOperator)
	}
	return e, nil
}

// singleValue reads the value after the operator. At the top level it is
// the rest of the parameter, verbatim. Inside a logic tree it is a quoted
// value (when followed by , or )), a {pg,array}, or a run up to , or ).
func singleValue(s *scanner, inLogic bool) string {
	if !inLogic {
		v := s.src[s.pos:]
		s.pos = len(s.src)
		return v
	}
	start := s.pos
	if s.peek() == '"' {
		if v, err := s.quoted(); err == nil && (s.eof() || s.peek() == ',' || s.peek() == ')') {
			return v
		}
		s.pos = start
	}
	if s.peek() == '{' {
		if end := strings.IndexAny(s.src[s.pos+1:], "{}"); end >= 0 && s.src[s.pos+1+end] == '}' {
			s.pos += end + 2
			return s.src[start:s.pos]
		}
	}
	for s.pos < len(s.src) && s.src[s.pos] != ',' && s.src[s.pos] != ')' {
		s.pos++
	}
	return s.src[start:s.pos]
}

// listValue reads (v,v,…) for in: elements are quoted (followed by , or ))
// or runs without , and ); () is the empty list.
func listValue(s *scanner) ([]string, *Error) {
	s.skipWS()
	if !s.accept("(") {
		return nil, s.fail(`"("`)
	}
	s.skipWS()
	out := []string{}
	if s.accept(")") {
		// in.() is an empty list, which nothing is in, as in PostgREST.
		s.skipWS()
		return out, nil
	}
	for {
		if err := s.spend(); err != nil {
			return nil, err
		}
		start := s.pos
		var v string
		quoted := false
		if s.peek() == '"' {
			if q, err := s.quoted(); err == nil && (s.peek() == ',' || s.peek() == ')') {
				v, quoted = q, true
			} else {
				s.pos = start
			}
		}
		if !quoted {
			for s.pos < len(s.src) && s.src[s.pos] != ',' && s.src[s.pos] != ')' {
				s.pos++
			}
			v = s.src[start:s.pos]
		}
		out = append(out, v)
		if !s.accept(",") {
			break
		}
	}
	if !s.accept(")") {
		return nil, s.fail(`","`, `")"`)
	}
	s.skipWS()
	return out, nil
}

// isValue reads null, not_null, true, false or unknown, in any case.
func isValue(s *scanner, inLogic bool) (string, *Error) {
	start := s.pos
	for s.pos < len(s.src) && (s.src[s.pos] == '_' || isASCIILetter(s.src[s.pos])) {
		s.pos++
	}
	word := strings.ToLower(s.src[start:s.pos])
	for _, v := range isValues {
		if word == v {
			if s.eof() || (inLogic && (s.peek() == ',' || s.peek() == ')')) {
				return v, nil
			}
			break
		}
	}
	s.pos = start
	return "", s.fail("isVal: (null, not_null, true, false, unknown)")
}

func isASCIILetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
