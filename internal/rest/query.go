package rest

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Query is a parsed /rest/v1 query string.
type Query struct {
	Select     []SelectItem // [*] when select= is absent
	Filters    []Filter
	Logic      []Logic
	Order      []Order
	Ranges     []Range
	Columns    []string // columns=, nil when absent
	OnConflict []string // on_conflict=, nil when absent
	Params     []Param  // arguments of GET /rpc/fn (only when parsed for an RPC read)
}

// Reserved parameter names. "apikey" is accepted in the query string the
// way Supabase's gateway accepts it, so it is never read as a filter.
var (
	reservedExact = map[string]bool{"select": true, "columns": true, "on_conflict": true, "apikey": true}
	reservedLast  = map[string]bool{"order": true, "limit": true, "offset": true, "and": true, "or": true}
)

// ParseQuery parses a raw query string. With rpcRead, parameters that are
// not filters become function arguments, as on GET /rpc/fn.
func ParseQuery(raw string, rpcRead bool) (*Query, error) {
	q, err := parseQuery(raw, rpcRead)
	if err != nil {
		return nil, err
	}
	return q, nil
}

type queryArg struct{ key, value string }

// splitQuery decodes key=value pairs in order, as PostgREST does: '+' is a
// space and a key without '=' carries no value (and is ignored).
func splitQuery(raw string) ([]queryArg, *Error) {
	if len(raw) > maxQueryLen {
		return nil, parseError("query string too long", "at most "+strconv.Itoa(maxQueryLen)+" bytes")
	}
	var args []queryArg
	for raw != "" {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		if part == "" {
			continue
		}
		k, v, hasValue := strings.Cut(part, "=")
		if !hasValue {
			continue
		}
		key, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return nil, parseError("failed to decode query string", "invalid percent-encoding in "+strconv.Quote(part))
		}
		if !utf8.ValidString(key) || !utf8.ValidString(val) || strings.IndexByte(key+val, 0) >= 0 {
			return nil, parseError("failed to decode query string", "parameters must be UTF-8 text without NUL bytes")
		}
		if len(val) > maxParamLen {
			return nil, parseError("query parameter too long", strconv.Quote(key)+" exceeds "+strconv.Itoa(maxParamLen)+" bytes")
		}
		if len(args) == maxQueryArgs {
			return nil, parseError("too many query parameters", "at most "+strconv.Itoa(maxQueryArgs))
		}
		args = append(args, queryArg{key, val})
	}
	return args, nil
}

func parseQuery(raw string, rpcRead bool) (*Query, *Error) {
	args, err := splitQuery(raw)
	if err != nil {
		return nil, err
	}
	q := &Query{}
	var selectSeen, columnsSeen, conflictSeen bool
	for _, a := range args {
		switch {
		case a.key == "select":
			if selectSeen {
				continue // the first one wins, as in PostgREST
			}
			selectSeen = true
			if q.Select, err = parseSelect(a.value); err != nil {
				return nil, err
			}
		case a.key == "columns":
			if columnsSeen {
				continue
			}
			columnsSeen = true
			s := newScanner("failed to parse columns parameter", a.value)
			if q.Columns, err = s.names(); err != nil {
				return nil, err
			}
		case a.key == "on_conflict":
			if conflictSeen {
				continue
			}
			conflictSeen = true
			s := newScanner("failed to parse on_conflict parameter", a.value)
			if q.OnConflict, err = s.names(); err != nil {
				return nil, err
			}
		case reservedExact[a.key]:
		case reservedLast[lastSegment(a.key)]:
			if err := q.addEmbeddable(a.key, a.value); err != nil {
				return nil, err
			}
		default:
			f, ferr := parseFilter(a.key, a.value)
			if ferr != nil {
				if rpcRead && !strings.Contains(a.key, ".") {
					q.Params = append(q.Params, Param{Name: a.key, Value: a.value})
					continue
				}
				return nil, ferr
			}
			if len(q.Filters) == maxItems {
				return nil, parseError("too many filters", "at most "+strconv.Itoa(maxItems))
			}
			q.Filters = append(q.Filters, f)
		}
	}
	if !selectSeen {
		q.Select = []SelectItem{{Star: true}}
	}
	return q, nil
}

func lastSegment(key string) string {
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		return key[i+1:]
	}
	return key
}

// addEmbeddable handles the parameters that may carry an embed path:
// order, limit, offset, and, or.
func (q *Query) addEmbeddable(key, value string) *Error {
	switch lastSegment(key) {
	case "and", "or":
		l, err := parseLogic(key, value)
		if err != nil {
			return err
		}
		q.Logic = append(q.Logic, l)
	case "order":
		path, err := parseParamPath("failed to parse tree path", key)
		if err != nil {
			return err
		}
		terms, err := parseOrder(value)
		if err != nil {
			return err
		}
		q.Order = append(q.Order, Order{Path: path, Terms: terms})
	case "limit", "offset":
		path, err := parseParamPath("failed to parse tree path", key)
		if err != nil {
			return err
		}
		n, perr := strconv.ParseInt(value, 10, 64)
		if perr != nil {
			return parseError(quoteShow("failed to parse "+lastSegment(key)+" parameter ("+value+")"), "expecting a non-negative integer")
		}
		if n < 0 {
			// PostgreSQL's own refusals, which PostgREST passes on.
			if lastSegment(key) == "limit" {
				return &Error{Status: http.StatusBadRequest, Code: "2201W", Message: "LIMIT must not be negative"}
			}
			return &Error{Status: http.StatusBadRequest, Code: "2201X", Message: "OFFSET must not be negative"}
		}
		r := q.rangeFor(path)
		if lastSegment(key) == "limit" {
			r.Limit, r.HasLimit = n, true
		} else {
			r.Offset = n
		}
	}
	return nil
}

// parseParamPath reads the embed path in front of a reserved name, e.g.
// promos.publication_media in promos.publication_media.limit.
func parseParamPath(what, key string) ([]string, *Error) {
	s := newScanner(what, key)
	var names []string
	for {
		if len(names) > maxDepth {
			return nil, s.failf("embedded path deeper than " + strconv.Itoa(maxDepth) + " levels")
		}
		n, err := s.fieldName()
		if err != nil {
			return nil, err
		}
		names = append(names, n)
		if !s.accept(".") {
			break
		}
	}
	if !s.eof() {
		return nil, s.fail(`"."`, "end of input")
	}
	return names[: len(names)-1 : len(names)-1], nil
}

// rangeFor returns the range entry of an embed path, creating it.
func (q *Query) rangeFor(path []string) *Range {
	for i := range q.Ranges {
		if slices.Equal(q.Ranges[i].Path, path) {
			return &q.Ranges[i]
		}
	}
	q.Ranges = append(q.Ranges, Range{Path: path})
	return &q.Ranges[len(q.Ranges)-1]
}
