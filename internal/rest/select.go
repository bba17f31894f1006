package rest

import "strconv"

// ParseSelect parses select=: comma-separated columns (*, alias:col,
// col::type, col->json->>path), aggregates (col[::type].sum()[::type],
// count()), embeds alias:rel!hint!inner(items) and spread embeds
// ...rel!hint!inner(items), nested up to maxDepth levels.
func ParseSelect(src string) ([]SelectItem, error) {
	items, err := parseSelect(src)
	if err != nil {
		return nil, err
	}
	return items, nil
}

func parseSelect(src string) ([]SelectItem, *Error) {
	s := newScanner("failed to parse select parameter", src)
	items, err := selectForest(s, 0)
	if err != nil {
		return nil, err
	}
	if !s.eof() {
		return nil, s.fail(`","`, "end of input")
	}
	return items, nil
}

// selectForest reads item(,item)*; an empty list is allowed, as in
// PostgREST, where select= and rel() mean "no columns".
func selectForest(s *scanner, depth int) ([]SelectItem, *Error) {
	if depth > maxDepth {
		return nil, s.failf("embedding nested deeper than " + strconv.Itoa(maxDepth) + " levels")
	}
	s.skipWS()
	if s.eof() || s.peek() == ')' {
		return nil, nil
	}
	var items []SelectItem
	for {
		if err := s.spend(); err != nil {
			return nil, err
		}
		it, err := selectItem(s, depth)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
		s.skipWS()
		if !s.accept(",") {
			return items, nil
		}
	}
}

func selectItem(s *scanner, depth int) (SelectItem, *Error) {
	s.skipWS()
	start := s.pos
	if s.accept("...") {
		// A spread embed: ...rel!hint!inner(items), without an alias.
		it, ok, err := selectEmbed(s, depth)
		if err != nil {
			return it, err
		}
		if !ok || it.Alias != "" {
			s.pos = start + len("...")
			return SelectItem{}, s.fail("spread embed (...rel(columns))")
		}
		it.Embed.Spread = true
		return it, nil
	}
	if alias := selectAlias(s); s.accept("count()") {
		// count() counts rows; it is an aggregate, never an embed named count.
		it := SelectItem{Alias: alias, Aggregate: "count"}
		if err := aggCast(s, &it); err != nil {
			return it, err
		}
		return it, nil
	}
	s.pos = start
	if it, ok, err := selectEmbed(s, depth); err != nil || ok {
		return it, err
	}
	s.pos = start
	if s.accept("*") {
		s.skipWS()
		if !selectEnd(s) {
			return SelectItem{}, s.fail(`")"`, `","`, "end of input")
		}
		return SelectItem{Star: true}, nil
	}
	alias := selectAlias(s)
	f, err := s.field()
	if err != nil {
		return SelectItem{}, err
	}
	it := SelectItem{Alias: alias, Field: f}
	if s.accept("::") {
		cast, ok := s.identifier()
		if !ok {
			return SelectItem{}, s.fail("letter or digit")
		}
		it.Cast = cast
		s.skipWS()
	}
	if s.peek() == '.' {
		for _, agg := range aggregates {
			if s.accept("." + agg + "()") {
				it.Aggregate = agg
				break
			}
		}
		if it.Aggregate == "" {
			s.pos++
			return SelectItem{}, s.fail("aggregate function (count(), sum(), avg(), max(), min())")
		}
		if err := aggCast(s, &it); err != nil {
			return it, err
		}
		return it, nil
	}
	if !selectEnd(s) {
		return SelectItem{}, s.fail("letter", "digit", `"-"`, `"->>"`, `"->"`, `"::"`, `"."`, `")"`, `","`, "end of input")
	}
	return it, nil
}

// aggregates are the aggregate functions of select, as PostgREST offers them.
var aggregates = []string{"count", "sum", "avg", "max", "min"}

// aggCast reads an aggregate's optional ::type and the end of the item.
func aggCast(s *scanner, it *SelectItem) *Error {
	s.skipWS()
	if s.accept("::") {
		cast, ok := s.identifier()
		if !ok {
			return s.fail("letter or digit")
		}
		it.AggCast = cast
		s.skipWS()
	}
	if !selectEnd(s) {
		return s.fail(`"::"`, `")"`, `","`, "end of input")
	}
	return nil
}

func selectEnd(s *scanner) bool { return s.eof() || s.peek() == ',' || s.peek() == ')' }

// selectAlias consumes "name:" (not "name::") and returns the alias, or
// leaves the input untouched.
func selectAlias(s *scanner) string {
	start := s.pos
	name, ok := s.tryFieldName()
	if ok && s.peek() == ':' && !s.hasPrefix("::") {
		s.pos++
		s.skipWS()
		return name
	}
	s.pos = start
	return ""
}

// selectEmbed reads [alias:]rel[!hint][!inner|!left](items). ok is false,
// with nothing reported, when the input is not an embed.
func selectEmbed(s *scanner, depth int) (SelectItem, bool, *Error) {
	alias := selectAlias(s)
	rel, ok := s.tryFieldName()
	if !ok {
		return SelectItem{}, false, nil
	}
	e := &Embed{Relation: rel}
	for range 2 {
		if s.peek() != '!' {
			break
		}
		s.pos++
		p, ok := s.tryFieldName()
		if !ok {
			return SelectItem{}, false, nil
		}
		switch {
		case p == "inner" && e.Join == JoinDefault:
			e.Join = JoinInner
		case p == "left" && e.Join == JoinDefault:
			e.Join = JoinLeft
		case e.Hint == "":
			e.Hint = p
		default:
			return SelectItem{}, false, nil
		}
	}
	s.skipWS()
	if !s.accept("(") {
		return SelectItem{}, false, nil
	}
	items, ferr := selectForest(s, depth+1)
	if ferr != nil {
		return SelectItem{}, false, ferr
	}
	s.skipWS()
	if !s.accept(")") {
		return SelectItem{}, false, s.fail(`","`, `")"`)
	}
	e.Select = items
	return SelectItem{Alias: alias, Embed: e}, true, nil
}
