package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

func errBody(details string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "PGRST102", Message: "Empty or invalid json", Details: details}
}

func errNoWriteColumn(t *Table, col string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "PGRST204",
		Message: "Could not find the '" + col + "' column of '" + t.Name + "' in the schema cache"}
}

// readBody enforces the body cap and the JSON content type.
func (h *Handler) readBody(c echo.Context) ([]byte, error) {
	r := c.Request()
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != mediaJSON {
			return nil, &Error{Status: http.StatusUnsupportedMediaType, Code: "PGRST107",
				Message: "The request's Content-Type is not acceptable: " + ct}
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &Error{Status: http.StatusRequestEntityTooLarge, Code: "PGRST102",
				Message: "Request body too large", Details: "The body may be at most " + strconv.FormatInt(h.cfg.MaxBodyBytes, 10) + " bytes"}
		}
		return nil, errBody(err.Error())
	}
	return body, nil
}

// payload is a POST body: the rows as a JSON array and the key set of
// each row.
type payload struct {
	rows []json.RawMessage
	keys [][]string
}

func parsePayload(body []byte) (*payload, *Error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, errBody("")
	}
	var rows []json.RawMessage
	if body[0] == '{' {
		rows = []json.RawMessage{body}
	} else if err := json.Unmarshal(body, &rows); err != nil {
		return nil, errBody(err.Error())
	}
	p := &payload{rows: rows}
	for _, r := range rows {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(r, &obj); err != nil || obj == nil {
			return nil, errBody("every row must be a JSON object")
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		p.keys = append(p.keys, keys)
	}
	return p, nil
}

// insertGroup is one INSERT of rows sharing a column list.
type insertGroup struct {
	cols []*Column
	rows []json.RawMessage
}

// groups splits the payload into INSERTs. Without columns= every row must
// carry the same keys (PGRST102), as in PostgREST. With missing=default a
// key absent from a row takes the column default, so rows are grouped by
// the columns they carry; otherwise absent keys are null.
func (p *payload) groups(t *Table, columns []string, missingDefault bool) ([]insertGroup, *Error) {
	lookup := func(names []string) ([]*Column, *Error) {
		cols := make([]*Column, 0, len(names))
		for _, n := range names {
			c := t.ColumnByName[n]
			if c == nil {
				return nil, errNoWriteColumn(t, n)
			}
			cols = append(cols, c)
		}
		return cols, nil
	}
	if len(p.rows) == 0 {
		return nil, nil
	}
	if columns == nil {
		for _, k := range p.keys[1:] {
			if !slices.Equal(k, p.keys[0]) {
				return nil, errBody("All object keys must match")
			}
		}
		cols, err := lookup(p.keys[0])
		if err != nil {
			return nil, err
		}
		return []insertGroup{{cols: cols, rows: p.rows}}, nil
	}
	all, err := lookup(columns)
	if err != nil {
		return nil, err
	}
	if !missingDefault {
		return []insertGroup{{cols: all, rows: p.rows}}, nil
	}
	var out []insertGroup
	index := map[string]int{}
	for i, keys := range p.keys {
		var cols []*Column
		var sig strings.Builder
		for _, c := range all {
			if slices.Contains(keys, c.Name) {
				cols = append(cols, c)
				sig.WriteString(c.quoted)
			}
		}
		g, ok := index[sig.String()]
		if !ok {
			g = len(out)
			index[sig.String()] = g
			out = append(out, insertGroup{cols: cols})
		}
		out[g].rows = append(out[g].rows, p.rows[i])
	}
	return out, nil
}

func jsonArray(rows []json.RawMessage) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(r)
	}
	b.WriteByte(']')
	return b.String()
}

// insert serves POST /rest/v1/:table, single or bulk, with upsert.
func (h *Handler) insert(c echo.Context) error {
	rq, t, root, err := h.planTable(c)
	if err != nil {
		return h.fail(c, err)
	}
	root.conds = nil
	body, err := h.readBody(c)
	if err != nil {
		return h.fail(c, err)
	}
	p, perr := parsePayload(body)
	if perr != nil {
		return h.fail(c, perr)
	}
	pf := &rq.prefer
	groups, perr := p.groups(t, rq.query.Columns, pf.Missing == "default")
	if perr != nil {
		return h.fail(c, perr)
	}
	conflict := t.PK
	if rq.query.OnConflict != nil {
		conflict = rq.query.OnConflict
		for _, n := range conflict {
			if t.ColumnByName[n] == nil {
				return h.fail(c, errNoColumn(t, n))
			}
		}
	}
	if pf.Resolution != "" && len(conflict) == 0 {
		return h.fail(c, &Error{Status: http.StatusBadRequest, Code: "PGRST100",
			Message: "on_conflict is required: the table has no primary key"})
	}
	headersOnly := pf.Return == "headers-only"
	if headersOnly {
		// Only the primary key is needed, for Location.
		root.out, root.embeds = nil, nil
		for _, k := range t.PK {
			root.out = append(root.out, outItem{name: k, col: t.ColumnByName[k]})
		}
	}
	returning := pf.Return == "representation" || headersOnly
	q := &sqlb{}
	q.WriteString("WITH ")
	for i, g := range groups {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(`"i` + strconv.Itoa(i) + `" AS (INSERT INTO ` + t.quoted + ` AS "w" (`)
		for j, col := range g.cols {
			if j > 0 {
				q.WriteString(", ")
			}
			q.WriteString(col.quoted)
		}
		q.WriteString(") SELECT ")
		for j, col := range g.cols {
			if j > 0 {
				q.WriteString(", ")
			}
			q.WriteString(`"_".` + col.quoted)
		}
		q.WriteString(" FROM json_populate_recordset(NULL::" + t.quoted + ", ")
		q.param(jsonArray(g.rows))
		q.WriteString(`::json) AS "_"`)
		switch pf.Resolution {
		case "merge-duplicates":
			// The conflict columns are equal by definition, so they are
			// not SET: that would need UPDATE rights on them for nothing.
			q.onConflict(conflict)
			q.WriteString(" DO UPDATE SET ")
			n := 0
			for _, col := range g.cols {
				if slices.Contains(conflict, col.Name) {
					continue
				}
				if n > 0 {
					q.WriteString(", ")
				}
				n++
				q.WriteString(col.quoted + " = EXCLUDED." + col.quoted)
			}
			if n == 0 {
				q.WriteString(quoteIdent(conflict[0]) + " = EXCLUDED." + quoteIdent(conflict[0]))
			}
		case "ignore-duplicates":
			q.onConflict(conflict)
			q.WriteString(" DO NOTHING")
		}
		if returning {
			q.WriteString(` RETURNING "w".*`)
		}
		q.WriteString(")")
	}
	if len(groups) == 0 {
		q.Reset()
		q.WriteString(`WITH "pgrst_source" AS (SELECT * FROM ` + t.quoted + ` WHERE false) `)
	} else if returning {
		q.WriteString(`, "pgrst_source" AS (`)
		for i := range groups {
			if i > 0 {
				q.WriteString(" UNION ALL ")
			}
			q.WriteString(`SELECT * FROM "i` + strconv.Itoa(i) + `"`)
		}
		q.WriteString(") ")
	} else {
		q.WriteString(" ")
	}
	if pf.Resolution != "" {
		pf.Apply("resolution", pf.Resolution)
	}
	if pf.Missing != "" {
		pf.Apply("missing", pf.Missing)
	}
	return h.finishWrite(rq, root, q, returning, http.StatusCreated)
}

func (q *sqlb) onConflict(cols []string) {
	q.WriteString(" ON CONFLICT (")
	for i, n := range cols {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(quoteIdent(n))
	}
	q.WriteString(")")
}

// finishWrite completes "WITH … " with the representation (or a bare
// count), runs it in an explicit transaction and answers. A singular
// Accept that does not match exactly one row rolls the write back.
func (h *Handler) finishWrite(rq *request, root *node, q *sqlb, returning bool, okStatus int) error {
	c := rq.c
	pf := &rq.prefer
	if returning {
		q.WriteString(`SELECT NULL::bigint, count(*), COALESCE(json_agg("s0"), '[]')::text FROM (`)
		q.level(root, `"t0"`, "", `"pgrst_source"`, true)
		q.WriteString(`) AS "s0"`)
	} else {
		q.WriteString(`SELECT NULL::bigint, 0::bigint, ''`)
	}
	var res result
	err := h.run(rq, true, []pg.Stmt{q.stmt()}, func(rs []*pgconn.Result) error {
		var err error
		if res, err = scanResult(rs[0]); err != nil {
			return err
		}
		if rq.single && returning && res.page != 1 {
			return errSingular(res.page)
		}
		return nil
	})
	if err != nil {
		return h.fail(c, err)
	}
	if pf.Return != "" {
		pf.Apply("return", pf.Return)
	}
	hdr := c.Response().Header()
	if len(pf.Applied) > 0 {
		hdr.Set("Preference-Applied", strings.Join(pf.Applied, ", "))
	}
	switch pf.Return {
	case "representation":
		hdr.Set("Content-Range", "*/*")
		ctype := mediaJSON + "; charset=utf-8"
		body := res.body
		if rq.single {
			ctype, body = mediaObject+"; charset=utf-8", unwrapArray(body)
		}
		return blob(c, okStatus, ctype, body)
	case "headers-only":
		if loc := location(rq.path, root.table, res.body); loc != "" {
			hdr.Set("Location", loc)
		}
	}
	hdr.Set("Content-Range", "*/*")
	if okStatus == http.StatusOK {
		okStatus = http.StatusNoContent
	}
	return c.NoContent(okStatus)
}

// location builds /table?pk=eq.value for the first returned row.
func location(path string, t *Table, body []byte) string {
	var rows []map[string]any
	if json.Unmarshal(body, &rows) != nil || len(rows) == 0 || len(t.PK) == 0 {
		return ""
	}
	v := url.Values{}
	for _, k := range t.PK {
		v.Set(k, "eq."+strings.Trim(string(mustJSON(rows[0][k])), `"`))
	}
	return path + "?" + v.Encode()
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
