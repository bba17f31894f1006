package rest

// ParseOrder parses an order= value: term(,term)* where a term is
// column[->json][.asc|.desc][.nullsfirst|.nullslast] or rel(column)… to
// order by a column of a to-one embed.
func ParseOrder(value string) ([]OrderTerm, error) {
	t, err := parseOrder(value)
	if err != nil {
		return nil, err
	}
	return t, nil
}

func parseOrder(value string) ([]OrderTerm, *Error) {
	s := newScanner("failed to parse order", value)
	var terms []OrderTerm
	for {
		if err := s.spend(); err != nil {
			return nil, err
		}
		t, err := orderTerm(s)
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
		if !s.accept(",") {
			break
		}
	}
	if !s.eof() {
		return nil, s.fail(`","`, "end of input")
	}
	return terms, nil
}

func orderTerm(s *scanner) (OrderTerm, *Error) {
	var t OrderTerm
	start := s.pos
	s.skipWS()
	if rel, ok := s.tryFieldName(); ok && s.accept("(") {
		f, err := s.field()
		if err != nil {
			return t, err
		}
		if !s.accept(")") {
			return t, s.fail(`")"`)
		}
		t.Relation, t.Field = rel, f
	} else {
		s.pos = start
		f, err := s.field()
		if err != nil {
			return t, err
		}
		t.Field = f
	}
	for s.accept(".") {
		switch {
		case t.Dir == DirDefault && t.Nulls == NullsDefault && s.accept("asc"):
			t.Dir = DirAsc
		case t.Dir == DirDefault && t.Nulls == NullsDefault && s.accept("desc"):
			t.Dir = DirDesc
		case t.Nulls == NullsDefault && s.accept("nullsfirst"):
			t.Nulls = NullsFirst
		case t.Nulls == NullsDefault && s.accept("nullslast"):
			t.Nulls = NullsLast
		case t.Nulls == NullsDefault && t.Dir == DirDefault:
			return t, s.fail(`"asc"`, `"desc"`, `"nullsfirst"`, `"nullslast"`)
		default:
			return t, s.fail(`"nullsfirst"`, `"nullslast"`)
		}
	}
	s.skipWS()
	if !(s.eof() || s.peek() == ',') {
		return t, s.fail("delimiter (.)", `","`, "end of input")
	}
	return t, nil
}
