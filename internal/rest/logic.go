package rest

import "strconv"

// ParseLogic parses an and=/or= parameter. key is [embed.]*[not.](and|or);
// value is (cond,cond,…) where each cond is column.[not.]op.value or a
// nested [not.]and(…)/or(…), up to maxDepth levels.
func ParseLogic(key, value string) (Logic, error) {
	l, err := parseLogic(key, value)
	if err != nil {
		return Logic{}, err
	}
	return l, nil
}

func parseLogic(key, value string) (Logic, *Error) {
	ks := newScanner("failed to parse logic path", key)
	var names []string
	for {
		if len(names) > maxDepth {
			return Logic{}, ks.failf("embedded path deeper than " + strconv.Itoa(maxDepth) + " levels")
		}
		n, err := ks.fieldName()
		if err != nil {
			return Logic{}, err
		}
		names = append(names, n)
		if !ks.accept(".") {
			break
		}
	}
	if !ks.eof() {
		return Logic{}, ks.fail(`"."`, "end of input")
	}
	op := names[len(names)-1]
	if op != "and" && op != "or" {
		return Logic{}, ks.fail("logic operator (and, or)")
	}
	var path []string
	not := false
	for _, n := range names[:len(names)-1] {
		if n == "not" {
			not = true
			continue
		}
		path = append(path, n)
	}
	prefix := op
	if not {
		prefix = "not." + op
	}
	// Parse "op(value)" so the root is read like any nested tree, the way
	// PostgREST does; positions are then reported against that text.
	s := newScanner("failed to parse logic tree", prefix+value)
	s.what = "failed to parse logic tree (" + value + ")"
	t, err := logicTree(s, 0)
	if err != nil {
		return Logic{}, err
	}
	if t.Leaf != nil {
		s.pos = 0
		return Logic{}, s.fail("logic operator (and, or)")
	}
	if !s.eof() {
		return Logic{}, s.fail("end of input")
	}
	return Logic{Path: path, Tree: t}, nil
}

// logicTree reads a leaf filter or [not.]and|or(tree,tree,…).
func logicTree(s *scanner, depth int) (LogicTree, *Error) {
	if depth > maxDepth {
		return LogicTree{}, s.failf("logic tree nested deeper than " + strconv.Itoa(maxDepth) + " levels")
	}
	if err := s.spend(); err != nil {
		return LogicTree{}, err
	}
	start := s.pos
	if leaf, ok := logicLeaf(s); ok {
		return LogicTree{Leaf: &leaf}, nil
	}
	s.pos = start
	var t LogicTree
	if s.accept("not.") {
		t.Not = true
	}
	switch {
	case s.accept("and"):
	case s.accept("or"):
		t.Or = true
	default:
		if t.Not {
			return t, s.fail("logic operator (and, or)")
		}
		return t, s.fail(expFieldName, "negation operator (not)", "logic operator (and, or)")
	}
	s.skipWS()
	if !s.accept("(") {
		return t, s.fail(`"("`)
	}
	for {
		s.skipWS()
		c, err := logicTree(s, depth+1)
		if err != nil {
			return t, err
		}
		t.Children = append(t.Children, c)
		s.skipWS()
		if !s.accept(",") {
			break
		}
	}
	if !s.accept(")") {
		return t, s.fail(`","`, `")"`)
	}
	s.skipWS()
	return t, nil
}

// logicLeaf tries column.opexpr; ok is false when the text is not a leaf,
// so the caller can read it as and(…)/or(…) instead.
func logicLeaf(s *scanner) (Filter, bool) {
	f, err := s.field()
	if err != nil || !s.accept(".") {
		return Filter{}, false
	}
	e, err := opExpr(s, true)
	if err != nil {
		return Filter{}, false
	}
	if !(s.eof() || s.peek() == ',' || s.peek() == ')') {
		return Filter{}, false
	}
	return Filter{Field: f, Expr: e}, true
}
