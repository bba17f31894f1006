package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// result is what every statement of ours returns: the total when counted,
// the rows in this page and the JSON body.
type result struct {
	total *int64
	page  int64
	body  []byte
}

// planTable is the common start of every request on /rest/v1/:table: authenticate, parse,
// find the table in the schema cache and plan the read (writes return their rows through it).
func (h *Handler) planTable(c echo.Context) (*request, *Table, *node, error) {
	rq, err := h.begin(c, false)
	if err != nil {
		return nil, nil, nil, err
	}
	t, perr := rq.schema.table(c.Param("table"))
	if perr != nil {
		return nil, nil, nil, perr
	}
	root, perr := rq.schema.planRead(t, rq.query, h.planOpts())
	if perr != nil {
		return nil, nil, nil, perr
	}
	return rq, t, root, nil
}

// read serves GET and HEAD /rest/v1/:table. The page's rows stream from PostgreSQL one by one
// (each row's JSON built there) into a body capped at MaxResponseBytes: a response that grows
// past the cap is stopped in the database, not finished and thrown away. A request of a shape
// seen lately reuses its statements (planCache): only authentication, negotiation and the
// database run again.
func (h *Handler) read(c echo.Context) error {
	key, cacheable := readKey(c.Param("table"), c.Request())
	rq, err := h.begin(c, false, cacheable)
	if err != nil {
		return h.fail(c, err)
	}
	var plan *readPlan
	if cacheable {
		plan = h.plans.get(key, rq.schema)
	}
	if plan == nil {
		if rq.query == nil {
			if rq.query, err = ParseQuery(c.Request().URL.RawQuery, false); err != nil {
				return h.fail(c, err)
			}
		}
		if plan, err = h.planReadOf(rq); err != nil {
			return h.fail(c, err)
		}
		if cacheable {
			h.plans.put(key, plan)
		}
	}
	head := c.Request().Method == http.MethodHead
	count := rq.prefer.Count
	stmts := plan.stmts
	buf := bodyBufs.Get().(*bytes.Buffer)
	defer putBodyBuf(buf)
	body := &rowsBody{buf: buf, max: h.cfg.MaxResponseBytes, withBody: !head, csvHeader: plan.csvHeader}
	rs, err := h.stream(rq, stmts, body.add)
	if err != nil {
		return h.fail(c, err)
	}
	res := result{page: body.rows, body: body.bytes()}
	var planned int64
	if count == "planned" || count == "estimated" {
		if r := rs[0]; len(r.Rows) == 1 && len(r.Rows[0]) == 1 {
			planned = planRows(r.Rows[0][0])
		}
		rs = rs[1:]
	}
	if count == "exact" || count == "estimated" {
		if len(rs) != 1 || len(rs[0].Rows) != 1 || len(rs[0].Rows[0]) != 1 {
			return h.fail(c, errors.New("rest: the count statement did not return one value"))
		}
		n, err := strconv.ParseInt(string(rs[0].Rows[0][0]), 10, 64)
		if err != nil {
			return h.fail(c, err)
		}
		res.total = &n
	}
	switch {
	case count == "planned":
		res.total = &planned
	case count == "estimated" && res.total != nil && *res.total > h.cfg.MaxRows:
		res.total = &planned
	}
	if count != "" {
		rq.prefer.Apply("count", count)
	}
	return h.respondRows(rq, plan.offset, res, http.StatusOK, !head)
}

// planReadOf plans and builds the read rq asks for.
func (h *Handler) planReadOf(rq *request) (*readPlan, error) {
	t, perr := rq.schema.table(rq.c.Param("table"))
	if perr != nil {
		return nil, perr
	}
	root, perr := rq.schema.planRead(t, rq.query, h.planOpts())
	if perr != nil {
		return nil, perr
	}
	if err := h.window(rq, root); err != nil {
		return nil, err
	}
	head := rq.c.Request().Method == http.MethodHead
	count := rq.prefer.Count
	var stmts []pg.Stmt
	if count == "planned" || count == "estimated" {
		stmts = append(stmts, explainCount(root).stmt())
	}
	if count == "exact" || count == "estimated" {
		cs := buildCount(root, count, h.cfg.MaxRows).stmt()
		cs.Prepare = true
		stmts = append(stmts, cs)
	}
	rows := buildRows(root, !head, rq.csv).stmt()
	rows.Prepare = true // reads repeat by shape: keep the plan
	stmts = append(stmts, rows)
	p := &readPlan{schema: rq.schema, stmts: stmts, offset: root.offset}
	if rq.csv {
		p.csvHeader = csvHeader(root)
	}
	return p, nil
}

// aggSep is what json_agg puts between elements: a streamed page reads byte for byte as the
// aggregated one PostgREST sends.
const aggSep = ", \n "

// rowsBody collects a streamed page as a JSON array, or as CSV when csvHeader is set, refusing
// to grow past max bytes.
type rowsBody struct {
	buf       *bytes.Buffer // from bodyBufs, empty
	rows      int64
	max       int
	withBody  bool
	csvHeader string
}

// bodyBufs keeps the buffers pages are collected in: the body is written to the response (which
// copies it) before read returns, so its buffer serves the next read instead of being
// allocated anew; 4.6 KB of the 21 KB an in-process publication read allocated.
var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// bodyBufMax is the largest buffer kept in bodyBufs, so one large page does not stay pinned.
const bodyBufMax = 64 << 10

func putBodyBuf(b *bytes.Buffer) {
	if b.Cap() <= bodyBufMax {
		b.Reset()
		bodyBufs.Put(b)
	}
}

func (b *rowsBody) add(row [][]byte) error {
	b.rows++
	if !b.withBody || len(row) != 1 {
		return nil
	}
	if b.buf.Len()+len(row[0])+len(aggSep)+len(b.csvHeader) > b.max {
		return errResponseBytes(b.max)
	}
	if b.rows == 1 {
		// The first row sizes the body: a page is most often one row (a read by id), which
		// then takes one allocation of its exact size instead of growing from 64 bytes
		// (2.4 KB and one copy less for the seed's publication with its embeds).
		b.buf.Grow(len(b.csvHeader) + len(row[0]) + 2)
	}
	switch {
	case b.csvHeader != "" && b.rows == 1:
		b.buf.WriteString(b.csvHeader + "\n")
	case b.csvHeader != "":
		b.buf.WriteByte('\n')
	case b.rows == 1:
		b.buf.WriteByte('[')
	default:
		b.buf.WriteString(aggSep)
	}
	b.buf.Write(row[0])
	return nil
}

func (b *rowsBody) bytes() []byte {
	switch {
	case !b.withBody:
		return nil
	case b.csvHeader != "" && b.rows == 0:
		// PostgREST names the columns from the first row: without one, no header.
		return []byte("\n")
	case b.csvHeader != "":
		return b.buf.Bytes()
	case b.rows == 0:
		return []byte("[]")
	}
	b.buf.WriteByte(']')
	return b.buf.Bytes()
}

// csvHeader is the first line of a CSV page: the keys of the rows, as PostgREST writes them.
func csvHeader(root *node) string {
	names := make([]string, len(root.out))
	for i, o := range root.out {
		names[i] = o.name
	}
	return strings.Join(names, ",")
}

// errResponseBytes refuses a response larger than MASTHEAD_MAX_RESPONSE_BYTES.
func errResponseBytes(limit int) *Error {
	return &Error{Status: http.StatusBadRequest, Code: pg.CodeResponseBytes,
		Message: "The response is larger than " + strconv.Itoa(limit) + " bytes",
		Details: "One response may carry at most " + strconv.Itoa(limit) + " bytes (MASTHEAD_MAX_RESPONSE_BYTES).",
		Hint:    "Narrow the request: select fewer columns or embeds, or page it with limit and offset (or a Range header)."}
}

// window combines limit/offset, the Range header and db-max-rows into the
// root's range, as PostgREST intersects them.
func (h *Handler) window(rq *request, root *node) error {
	// upper is the last row asked for, bounded says whether anything asked for one: limit=0
	// asks for none (upper = lower-1), which is an empty page, not an unlimited one.
	lower, upper, bounded := root.offset, int64(0), root.limit >= 0
	if bounded {
		upper = lastRow(lower, root.limit)
	}
	hr, ok, err := ParseRange(rq.c.Request())
	if err != nil {
		return err
	}
	if ok {
		lower = max(lower, hr.Offset)
		if hr.HasLimit {
			hu := lastRow(hr.Offset, hr.Limit)
			if !bounded || hu < upper {
				upper, bounded = hu, true
			}
		}
	}
	limit := h.cfg.MaxRows
	// upper-lower+1 would wrap around for rows 0 to the largest int64; upper-lower cannot.
	if n := upper - lower; bounded && n < limit {
		limit = max(n+1, 0)
	}
	root.offset, root.limit = lower, limit
	return nil
}

// lastRow is the number of the last of limit rows from offset (offset-1 for none), both
// non-negative. The largest numbers a client can write (a limit or a Range's last row of
// 9223372036854775807) would wrap around into a negative row, so it stops at the largest int64.
func lastRow(offset, limit int64) int64 {
	if limit > math.MaxInt64-offset {
		return math.MaxInt64
	}
	return offset + limit - 1
}

// buildCount counts the rows the filters select for Prefer: count=exact, or for
// count=estimated exactly up to db-max-rows: counting stops early so a huge table costs no more
// than a page, and the planner's estimate stands in beyond it.
func buildCount(root *node, count string, maxRows int64) *sqlb {
	q := &sqlb{}
	if count == "exact" {
		q.WriteString(`SELECT count(*) FROM ` + root.table.quoted + ` AS "c0"`)
		q.where(root, `"c0"`, "", "")
		return q
	}
	q.WriteString(`SELECT count(*) FROM (SELECT 1 FROM ` + root.table.quoted + ` AS "c0"`)
	q.where(root, `"c0"`, "", "")
	q.WriteString(" LIMIT ")
	q.param(strconv.FormatInt(maxRows+1, 10))
	q.WriteString(`) AS "c1"`)
	return q
}

// buildRows selects the page, a row at a time: each row's JSON (built by PostgreSQL, embeds
// included), its CSV line (the row's text form without its parentheses, as PostgREST writes
// CSV), or, for HEAD, a placeholder to count.
func buildRows(root *node, withBody, csv bool) *sqlb {
	q := &sqlb{}
	q.Grow(2048)
	switch {
	case withBody && csv:
		q.WriteString(`SELECT substring("s0"::text, 2, length("s0"::text) - 2) FROM (`)
	case withBody:
		q.WriteString(`SELECT row_to_json("s0")::text FROM (`)
	default:
		q.WriteString(`SELECT 1 FROM (`)
	}
	q.level(root, `"t0"`, "", "", false)
	q.WriteString(`) AS "s0"`)
	return q
}

// explainCount asks the planner how many rows the filters select, for
// Prefer: count=planned.
func explainCount(root *node) *sqlb {
	q := &sqlb{}
	q.WriteString(`EXPLAIN (FORMAT JSON) SELECT 1 FROM ` + root.table.quoted + ` AS "c0"`)
	q.where(root, `"c0"`, "", "")
	return q
}

func planRows(plan []byte) int64 {
	var p []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		} `json:"Plan"`
	}
	if json.Unmarshal(plan, &p) != nil || len(p) == 0 {
		return 0
	}
	return int64(p[0].Plan.Rows)
}

// respondRows writes a page of rows: Content-Range, 206/416 as PostgREST,
// and the single-object form when it was asked for.
func (h *Handler) respondRows(rq *request, offset int64, res result, status int, withBody bool) error {
	c := rq.c
	hdr := c.Response().Header()
	total := "*"
	if res.total != nil {
		total = strconv.FormatInt(*res.total, 10)
	}
	switch {
	case res.total == nil && offset == 0 && res.page < int64(len(firstPages)):
		hdr["Content-Range"] = firstPages[res.page]
	case res.page == 0 || (res.total != nil && *res.total == 0):
		hdr.Set("Content-Range", "*/"+total)
	default:
		hdr.Set("Content-Range", strconv.FormatInt(offset, 10)+"-"+strconv.FormatInt(offset+res.page-1, 10)+"/"+total)
	}
	if status == http.StatusOK && res.total != nil {
		switch {
		case offset > *res.total:
			return h.fail(c, &Error{Status: http.StatusRequestedRangeNotSatisfiable, Code: "PGRST103",
				Message: "Requested range not satisfiable",
				Details: "An offset of " + strconv.FormatInt(offset, 10) + " was requested, but there are only " + total + " rows."})
		case res.page < *res.total:
			status = http.StatusPartialContent
		}
	}
	rq.prefer.setApplied(hdr)
	ctype := mediaJSON + "; charset=utf-8"
	body := res.body
	if rq.single || rq.object {
		if res.page != 1 {
			return h.fail(c, errSingular(res.page))
		}
		body = unwrapArray(body)
	}
	switch {
	case rq.single:
		ctype = mediaObject + "; charset=utf-8"
	case rq.csv:
		ctype = mediaCSV + "; charset=utf-8"
	}
	if !withBody {
		hdr.Set(echo.HeaderContentType, ctype)
		return c.NoContent(status)
	}
	if len(body) > h.cfg.MaxResponseBytes { // writes and RPCs, which are not streamed
		return h.fail(c, errResponseBytes(h.cfg.MaxResponseBytes))
	}
	return blob(c, status, ctype, body)
}

// firstPages[n] is the Content-Range of an uncounted first page of n rows ("*/*" for none,
// "0-0/*" for a read by id), as a shared header value like contentTypes: the usual answer
// without formatting and concatenating it on every request.
var firstPages = func() (p [65][]string) {
	p[0] = []string{"*/*"}
	for n := 1; n < len(p); n++ {
		p[n] = []string{"0-" + strconv.Itoa(n-1) + "/*"}
	}
	return p
}()

func errSingular(n int64) *Error {
	return &Error{Status: http.StatusNotAcceptable, Code: "PGRST116",
		Message: "Cannot coerce the result to a single JSON object",
		Details: "The result contains " + strconv.FormatInt(n, 10) + " rows"}
}

// unwrapArray turns json_agg's one-element array into the element.
func unwrapArray(s []byte) []byte {
	s = bytes.TrimSpace(s)
	if len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']' {
		return bytes.TrimSpace(s[1 : len(s)-1])
	}
	return s
}
