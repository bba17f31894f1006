package rest

import (
	"math"
	"net/http"
	"strconv"
	"strings"
)

// RangeHeader is a parsed Range: items=first-last request header.
type RangeHeader struct {
	Offset   int64
	Limit    int64
	HasLimit bool
}

// ParseRange reads the Range header of a request. A header that does not parse is ignored, as
// PostgREST does, and so is any on a method other than GET (RFC 9110): HEAD, POST and the rest
// page with limit and offset. first > last is a 416 (PGRST103).
func ParseRange(req *http.Request) (RangeHeader, bool, error) {
	if req.Method != http.MethodGet {
		return RangeHeader{}, false, nil
	}
	v := strings.TrimSpace(req.Header.Get("Range"))
	if v == "" {
		return RangeHeader{}, false, nil
	}
	v = strings.TrimPrefix(v, "items=")
	a, b, ok := strings.Cut(v, "-")
	if !ok {
		return RangeHeader{}, false, nil
	}
	first, err := strconv.ParseInt(a, 10, 64)
	if err != nil || first < 0 {
		return RangeHeader{}, false, nil
	}
	r := RangeHeader{Offset: first}
	if b != "" {
		last, err := strconv.ParseInt(b, 10, 64)
		if err != nil || last < 0 {
			return RangeHeader{}, false, nil
		}
		if last < first {
			return RangeHeader{}, false, &Error{Status: http.StatusRequestedRangeNotSatisfiable, Code: "PGRST103",
				Message: "Requested range not satisfiable", Details: "The lower boundary must be lower than or equal to the upper boundary in the Range header."}
		}
		// last-first+1 would wrap around for 0-9223372036854775807: the count stops at the
		// largest int64, a row no table reaches.
		r.Limit, r.HasLimit = last-first, true
		if r.Limit < math.MaxInt64 {
			r.Limit++
		}
	}
	return r, true, nil
}
