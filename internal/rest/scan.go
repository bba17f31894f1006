package rest

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Caps on one expression. They keep a hostile query string from costing
// more than a normal one: the parser recurses per nesting level and the
// planner emits SQL per item, so both are bounded here, before any work.
const (
	maxDepth     = 16   // nesting of embeds in select and of and()/or() trees
	maxItems     = 512  // select items, logic leaves, order terms or list values in one parameter
	maxParamLen  = 8192 // bytes in one decoded parameter value
	maxQueryLen  = 32768
	maxQueryArgs = 256 // parameters in one query string
)

// scanner walks one query-string parameter for a recursive-descent parser.
// The grammar is PostgREST's (ApiRequest/QueryParams); errors carry the
// position and what was expected, in PostgREST's message/details form.
type scanner struct {
	src   string
	pos   int
	what  string // "failed to parse select parameter (…)"
	items int    // budget counter shared by one parameter
}

func newScanner(what, src string) *scanner {
	return &scanner{src: src, what: what + " (" + src + ")"}
}

func (s *scanner) eof() bool { return s.pos >= len(s.src) }

func (s *scanner) peek() byte {
	if s.pos >= len(s.src) {
		return 0
	}
	return s.src[s.pos]
}

func (s *scanner) hasPrefix(p string) bool { return strings.HasPrefix(s.src[s.pos:], p) }

// accept consumes p when it comes next.
func (s *scanner) accept(p string) bool {
	if s.hasPrefix(p) {
		s.pos += len(p)
		return true
	}
	return false
}

func (s *scanner) skipWS() {
	for s.pos < len(s.src) && (s.src[s.pos] == ' ' || s.src[s.pos] == '\t') {
		s.pos++
	}
}

// fail reports a grammar error at the current position.
func (s *scanner) fail(expecting ...string) *Error {
	col := utf8.RuneCountInString(s.src[:s.pos]) + 1
	msg := quoteShow(s.what) + " (line 1, column " + strconv.Itoa(col) + ")"
	var d strings.Builder
	if s.eof() {
		d.WriteString("unexpected end of input")
	} else {
		r, _ := utf8.DecodeRuneInString(s.src[s.pos:])
		d.WriteString("unexpected " + strconv.Quote(string(r)))
	}
	if len(expecting) > 0 {
		d.WriteString(" expecting ")
		for i, e := range expecting {
			switch {
			case i == 0:
			case i == len(expecting)-1:
				d.WriteString(" or ")
			default:
				d.WriteString(", ")
			}
			d.WriteString(e)
		}
	}
	return parseError(msg, d.String())
}

// failf reports a semantic limit (depth, size) rather than a grammar error.
func (s *scanner) failf(details string) *Error {
	return parseError(quoteShow(s.what), details)
}

// spend takes one unit from the parameter's item budget.
func (s *scanner) spend() *Error {
	s.items++
	if s.items > maxItems {
		return s.failf("too many items in one parameter (at most " + strconv.Itoa(maxItems) + ")")
	}
	return nil
}

const expFieldName = "field name (* or [a..z0..9_$])"

// fieldName reads a column, relation or alias name: a double-quoted name
// with backslash escapes, or identifier runs joined by dashes that do not
// start a JSON arrow.
func (s *scanner) fieldName() (string, *Error) {
	if s.peek() == '"' {
		return s.quoted()
	}
	start := s.pos
	name, ok := s.tryFieldName()
	if !ok {
		if s.pos == start {
			return "", s.fail(expFieldName)
		}
		return "", s.fail("letter", "digit")
	}
	return name, nil
}

// tryFieldName is fieldName for speculative parsing (is this an alias, an
// embed?): it reports failure without building an error. On failure the
// position is where reading stopped.
func (s *scanner) tryFieldName() (string, bool) {
	if s.peek() == '"' {
		start := s.pos
		name, err := s.quoted()
		if err != nil {
			s.pos = start
			return "", false
		}
		return name, true
	}
	name, ok := s.identifier()
	if !ok {
		return "", false
	}
	if s.peek() != '-' || strings.HasPrefix(s.src[s.pos+1:], ">") {
		return name, true
	}
	b := strings.Builder{}
	b.WriteString(name)
	for s.peek() == '-' && !strings.HasPrefix(s.src[s.pos+1:], ">") {
		s.pos++
		part, ok := s.identifier()
		if !ok {
			return "", false
		}
		b.WriteByte('-')
		b.WriteString(part)
	}
	return b.String(), true
}

// identifier reads letters, digits, '_', '$' and spaces, trimmed of spaces,
// as PostgREST's pIdentifier does. An all-space run is not an identifier.
func (s *scanner) identifier() (string, bool) {
	start := s.pos
	for s.pos < len(s.src) {
		r, n := utf8.DecodeRuneInString(s.src[s.pos:])
		if !(unicode.IsLetter(r) || isDigit(r) || r == '_' || r == '$' || r == ' ') {
			break
		}
		s.pos += n
	}
	id := strings.Trim(s.src[start:s.pos], " ")
	if id == "" {
		s.pos = start
		return "", false
	}
	return id, true
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// quoted reads "…" where a backslash escapes the next character.
func (s *scanner) quoted() (string, *Error) {
	s.pos++ // opening quote
	var b strings.Builder
	for {
		if s.eof() {
			return "", s.fail(`"\""`)
		}
		c := s.src[s.pos]
		switch c {
		case '"':
			s.pos++
			return b.String(), nil
		case '\\':
			s.pos++
			if s.eof() {
				return "", s.fail("any character")
			}
			_, n := utf8.DecodeRuneInString(s.src[s.pos:])
			b.WriteString(s.src[s.pos : s.pos+n])
			s.pos += n
		default:
			b.WriteByte(c)
			s.pos++
		}
	}
}

// field reads a name with an optional JSON path, skipping blanks around it.
func (s *scanner) field() (Field, *Error) {
	s.skipWS()
	name, err := s.fieldName()
	if err != nil {
		return Field{}, err
	}
	path, err := s.jsonPath()
	if err != nil {
		return Field{}, err
	}
	s.skipWS()
	return Field{Name: name, JSON: path}, nil
}

// jsonPath reads zero or more ->key, ->>key, ->0, ->>-1 steps.
func (s *scanner) jsonPath() ([]JSONStep, *Error) {
	var steps []JSONStep
	for {
		var text bool
		switch {
		case s.accept("->>"):
			text = true
		case s.accept("->"):
		default:
			return steps, nil
		}
		if len(steps) >= maxDepth {
			return nil, s.failf("JSON path too deep (at most " + strconv.Itoa(maxDepth) + " steps)")
		}
		step := JSONStep{Text: text}
		if idx, ok := s.jsonIndex(); ok {
			step.Key, step.Index = idx, true
		} else {
			key, err := s.jsonKey()
			if err != nil {
				return nil, err
			}
			step.Key = key
		}
		steps = append(steps, step)
	}
}

// jsonIndex reads an array index: an optional minus and digits, followed by
// the end of the operand.
func (s *scanner) jsonIndex() (string, bool) {
	start := s.pos
	s.accept("-")
	digits := s.pos
	for s.pos < len(s.src) && isDigit(rune(s.src[s.pos])) {
		s.pos++
	}
	if s.pos == digits || !(s.eof() || s.hasPrefix("->") || s.hasPrefix("::") ||
		strings.IndexByte(".,)", s.peek()) >= 0) {
		s.pos = start
		return "", false
	}
	return s.src[start:s.pos], true
}

// jsonKey reads an object key: quoted, or any run without the reserved
// characters ( - : . , > ) joined by dashes that do not start an arrow.
func (s *scanner) jsonKey() (string, *Error) {
	if s.peek() == '"' {
		return s.quoted()
	}
	part := func() (string, bool) {
		start := s.pos
		for s.pos < len(s.src) && strings.IndexByte("(-:.,>)", s.src[s.pos]) < 0 {
			s.pos++
		}
		k := strings.TrimSpace(s.src[start:s.pos])
		if k == "" {
			s.pos = start
			return "", false
		}
		return k, true
	}
	key, ok := part()
	if !ok {
		return "", s.fail("digit", "any non reserved character different from: .,>()")
	}
	b := strings.Builder{}
	b.WriteString(key)
	for s.peek() == '-' && !strings.HasPrefix(s.src[s.pos+1:], ">") {
		s.pos++
		p, ok := part()
		if !ok {
			return "", s.fail("any non reserved character different from: .,>()")
		}
		b.WriteByte('-')
		b.WriteString(p)
	}
	return b.String(), nil
}

// names reads name(,name)* for columns= and on_conflict=.
func (s *scanner) names() ([]string, *Error) {
	var out []string
	for {
		if err := s.spend(); err != nil {
			return nil, err
		}
		s.skipWS()
		n, err := s.fieldName()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
		s.skipWS()
		if !s.accept(",") {
			break
		}
	}
	if !s.eof() {
		return nil, s.fail(`","`, "end of input")
	}
	return out, nil
}
