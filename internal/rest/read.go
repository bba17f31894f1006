package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
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
	root, perr := rq.schema.planRead(t, rq.query)
	if perr != nil {
		return nil, nil, nil, perr
	}
	return rq, t, root, nil
}

// read serves GET and HEAD /rest/v1/:table.
func (h *Handler) read(c echo.Context) error {
	rq, _, root, err := h.planTable(c)
	if err != nil {
		return h.fail(c, err)
	}
	if err := h.window(rq, root); err != nil {
		return h.fail(c, err)
	}
	head := c.Request().Method == http.MethodHead
	count := rq.prefer.Count
	var stmts []pg.Stmt
	if count == "planned" || count == "estimated" {
		stmts = append(stmts, explainCount(root).stmt())
	}
	main := buildRead(root, count, h.cfg.MaxRows, !head).stmt()
	main.Prepare = true // reads repeat by shape: keep the plan
	stmts = append(stmts, main)
	var res result
	var planned int64
	err = h.run(rq, false, stmts, func(rs []*pgconn.Result) error {
		if len(rs) == 2 {
			if len(rs[0].Rows) == 1 && len(rs[0].Rows[0]) == 1 {
				planned = planRows(rs[0].Rows[0][0])
			}
			rs = rs[1:]
		}
		var err error
		res, err = scanResult(rs[0])
		return err
	})
	if err != nil {
		return h.fail(c, err)
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
	return h.respondRows(rq, root.offset, res, http.StatusOK, !head)
}

// window combines limit/offset, the Range header and db-max-rows into the
// root's range, as PostgREST intersects them.
func (h *Handler) window(rq *request, root *node) error {
	lower, upper := root.offset, int64(-1)
	if root.limit >= 0 {
		upper = lower + root.limit - 1
	}
	hr, ok, err := ParseRange(rq.c.Request().Header)
	if err != nil {
		return err
	}
	if ok {
		lower = max(lower, hr.Offset)
		if hr.HasLimit {
			hu := hr.Offset + hr.Limit - 1
			if upper < 0 || hu < upper {
				upper = hu
			}
		}
	}
	limit := int64(-1)
	if upper >= 0 {
		limit = max(upper-lower+1, 0)
	}
	if limit < 0 || limit > h.cfg.MaxRows {
		limit = h.cfg.MaxRows
	}
	root.offset, root.limit = lower, limit
	return nil
}

// buildRead is the one statement of a read: total (when counted), page
// size and body, the body aggregated by PostgreSQL so rows never pass
// through Go one by one.
func buildRead(root *node, count string, maxRows int64, withBody bool) *sqlb {
	q := &sqlb{}
	q.Grow(2048)
	q.WriteString("SELECT ")
	switch count {
	case "exact":
		q.WriteString(`(SELECT count(*) FROM ` + root.table.quoted + ` AS "c0"`)
		q.where(root, `"c0"`, "", "")
		q.WriteString(")")
	case "estimated":
		// Exact up to db-max-rows, then the planner's estimate: counting
		// stops early so a huge table costs no more than a page.
		q.WriteString(`(SELECT count(*) FROM (SELECT 1 FROM ` + root.table.quoted + ` AS "c0"`)
		q.where(root, `"c0"`, "", "")
		q.WriteString(" LIMIT ")
		q.param(strconv.FormatInt(maxRows+1, 10))
		q.WriteString(`) AS "c1")`)
	default:
		q.WriteString("NULL::bigint")
	}
	q.WriteString(", count(*), ")
	if withBody {
		q.WriteString(`COALESCE(json_agg("s0"), '[]')::text`)
	} else {
		q.WriteString(`''`)
	}
	q.WriteString(" FROM (")
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
	if res.page == 0 || (res.total != nil && *res.total == 0) {
		hdr.Set("Content-Range", "*/"+total)
	} else {
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
	if len(rq.prefer.Applied) > 0 {
		hdr.Set("Preference-Applied", strings.Join(rq.prefer.Applied, ", "))
	}
	ctype := mediaJSON + "; charset=utf-8"
	body := res.body
	if rq.single {
		if res.page != 1 {
			return h.fail(c, errSingular(res.page))
		}
		ctype = mediaObject + "; charset=utf-8"
		body = unwrapArray(body)
	}
	if !withBody {
		hdr.Set(echo.HeaderContentType, ctype)
		return c.NoContent(status)
	}
	return blob(c, status, ctype, body)
}

func errSingular(n int64) *Error {
	return &Error{Status: http.StatusNotAcceptable, Code: "PGRST116",
		Message: "JSON object requested, multiple (or no) rows returned",
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
