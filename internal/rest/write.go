package rest

import (
	"bytes"
	"encoding/csv"
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
	body, _, err := h.readBodyAs(c, mediaJSON)
	return body, err
}

// readBodyAs enforces the body cap and that the Content-Type is one of types (the first one
// when the header is absent), which it returns.
func (h *Handler) readBodyAs(c echo.Context, types ...string) ([]byte, string, error) {
	r := c.Request()
	mt := types[0]
	if ct := r.Header.Get("Content-Type"); ct != "" {
		var err error
		mt, _, err = mime.ParseMediaType(ct)
		if err != nil || !slices.Contains(types, mt) {
			return nil, "", &Error{Status: http.StatusUnsupportedMediaType, Code: "PGRST107",
				Message: "The request's Content-Type is not acceptable: " + ct}
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, "", &Error{Status: http.StatusRequestEntityTooLarge, Code: "PGRST102",
				Message: "Request body too large", Details: "The body may be at most " + strconv.FormatInt(h.cfg.MaxBodyBytes, 10) + " bytes"}
		}
		return nil, "", errBody(err.Error())
	}
	return body, mt, nil
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

// parseCSVPayload reads a CSV body as PostgREST does: the first line names the columns, each
// other line is a row; an empty field is an empty string and the word NULL is null. The rows
// become JSON objects of strings, which PostgreSQL reads as each column's type.
func parseCSVPayload(body []byte) (*payload, *Error) {
	r := csv.NewReader(bytes.NewReader(body))
	records, err := r.ReadAll()
	if err != nil {
		if errors.Is(err, csv.ErrFieldCount) {
			return nil, &Error{Status: http.StatusBadRequest, Code: "PGRST102", Message: "All lines must have same number of fields"}
		}
		return nil, &Error{Status: http.StatusBadRequest, Code: "PGRST102", Message: "Invalid CSV body", Details: err.Error()}
	}
	if len(records) == 0 {
		return nil, &Error{Status: http.StatusBadRequest, Code: "PGRST102", Message: "Invalid CSV body", Details: "the first line must name the columns"}
	}
	header := records[0]
	keys := slices.Clone(header)
	slices.Sort(keys)
	if len(slices.Compact(slices.Clone(keys))) != len(keys) {
		return nil, &Error{Status: http.StatusBadRequest, Code: "PGRST102", Message: "Invalid CSV body", Details: "a column is named twice in the first line"}
	}
	p := &payload{}
	for _, rec := range records[1:] {
		obj := make(map[string]any, len(header))
		for i, name := range header {
			if rec[i] == "NULL" {
				obj[name] = nil
			} else {
				obj[name] = rec[i]
			}
		}
		p.rows = append(p.rows, mustJSON(obj))
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
	if rq.csv {
		return h.fail(c, errMedia(c.Request().Header.Get("Accept")))
	}
	root.conds = nil
	body, mt, err := h.readBodyAs(c, mediaJSON, mediaCSV)
	if err != nil {
		return h.fail(c, err)
	}
	var p *payload
	var perr *Error
	if mt == mediaCSV {
		p, perr = parseCSVPayload(body)
	} else {
		p, perr = parsePayload(body)
	}
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
	w := write{upsert: pf.Resolution == "merge-duplicates" && t.Kind == 'r'}
	for _, g := range groups {
		w.stmts = append(w.stmts, func(q *sqlb, returning string) { q.insert(t, g, pf.Resolution, conflict, nil, returning) })
	}
	if pf.Resolution != "" {
		pf.Apply("resolution", pf.Resolution)
	}
	if pf.Missing != "" {
		pf.Apply("missing", pf.Missing)
	}
	return h.finishWrite(rq, root, w, http.StatusCreated)
}

// insert writes one INSERT of a group of rows, with its upsert clause and RETURNING (when
// returning is not empty). A group without columns inserts rows of defaults: a SELECT of no
// columns fills none, so every column takes its default.
func (q *sqlb) insert(t *Table, g insertGroup, resolution string, conflict []string, match []cond, returning string) {
	q.WriteString(`INSERT INTO ` + t.quoted + ` AS "w"`)
	if len(g.cols) > 0 {
		q.WriteString(" (")
		for j, col := range g.cols {
			if j > 0 {
				q.WriteString(", ")
			}
			q.WriteString(col.quoted)
		}
		q.WriteString(")")
	}
	q.WriteString(" SELECT ")
	for j, col := range g.cols {
		if j > 0 {
			q.WriteString(", ")
		}
		q.WriteString(`"_".` + col.quoted)
	}
	q.WriteString(" FROM json_populate_recordset(NULL::" + t.quoted + ", ")
	q.param(jsonArray(g.rows))
	q.WriteString(`::json) AS "_"`)
	for i, c := range match {
		// PUT: the row is written only when its key is the one the URL names.
		if i == 0 {
			q.WriteString(" WHERE ")
		} else {
			q.WriteString(" AND ")
		}
		q.cond(c, `"_"`)
	}
	switch resolution {
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
	if returning != "" {
		q.WriteString(" RETURNING " + returning)
	}
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

// write is one write: its statements, each a bare INSERT, UPDATE or DELETE (or, when there is
// nothing to write, a SELECT of no rows) with RETURNING returning, or none when it is empty.
type write struct {
	stmts []func(q *sqlb, returning string)
	// existed, for PUT, counts the row before the write (a CTE reads the snapshot the write
	// starts from), so the answer tells an insert (201) from an update (200).
	existed func(q *sqlb)
	// upsert, for a POST with resolution=merge-duplicates into a table, counts the rows the
	// write inserted (xmax = 0 on a row version that no conflict updated), so that one that
	// only updated answers 200, as PostgREST's does. Views and partitioned tables cannot return
	// xmax, so an upsert into one always answers 201.
	upsert bool
}

// returning lists the columns of the written rows that n's representation reads: what it
// selects, the keys its embeds join on, its order, and the primary key when withPK. Only these
// are RETURNed, so SELECT grants on them suffice. Without any, one constant is returned.
func (n *node) returning(withPK bool) string {
	// A computed column or relationship reads the whole row.
	for _, o := range n.out {
		if o.col != nil && len(o.via) == 0 && o.col.computed != "" {
			return `"w".*`
		}
	}
	for _, e := range n.embeds {
		if e.rel.computed != "" {
			return `"w".*`
		}
	}
	for _, o := range n.order {
		if (o.embed != nil && o.embed.rel.computed != "") || (o.embed == nil && o.col.computed != "") {
			return `"w".*`
		}
	}
	need := map[string]bool{}
	for _, o := range n.out {
		if o.col != nil && len(o.via) == 0 {
			need[o.col.Name] = true
		}
	}
	joinCols := func(r *Relationship) {
		if r.Junction != nil {
			for _, p := range r.Junction.Left {
				need[p.To] = true
			}
			return
		}
		for _, p := range r.Cols {
			need[p.From] = true
		}
	}
	for _, e := range n.embeds {
		joinCols(e.rel)
	}
	for _, o := range n.order {
		if o.embed != nil {
			joinCols(o.embed.rel)
		} else {
			need[o.col.Name] = true
		}
	}
	if withPK {
		for _, k := range n.table.PK {
			need[k] = true
		}
	}
	var b strings.Builder
	for _, c := range n.table.Columns {
		if need[c.Name] {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`"w".` + c.quoted)
		}
	}
	if b.Len() == 0 {
		return `NULL AS "pgrst_none"`
	}
	return b.String()
}

// finishWrite runs a write in an explicit transaction and answers it as PostgREST does. With
// return=representation (or headers-only) its statements return the columns the answer reads,
// gathered as "pgrst_source" and shaped by root; otherwise they return nothing and the rows
// written are counted from the command tags. Content-Range carries that count when one was
// asked for. A singular Accept that does not match exactly one row rolls the write back.
func (h *Handler) finishWrite(rq *request, root *node, w write, okStatus int) error {
	c := rq.c
	pf := &rq.prefer
	returning := pf.Return == "representation" || pf.Return == "headers-only"
	var stmts []pg.Stmt
	if returning {
		cols := root.returning(pf.Return == "headers-only")
		if w.upsert {
			cols += `, ("w".xmax = 0) AS "pgrst_inserted"`
		}
		q := &sqlb{}
		q.WriteString("WITH ")
		if w.existed != nil {
			q.WriteString(`"pgrst_existed" AS (`)
			w.existed(q)
			q.WriteString("), ")
		}
		for i, f := range w.stmts {
			q.WriteString(`"m` + strconv.Itoa(i) + `" AS (`)
			f(q, cols)
			q.WriteString("), ")
		}
		q.WriteString(`"pgrst_source" AS (`)
		for i := range w.stmts {
			if i > 0 {
				q.WriteString(" UNION ALL ")
			}
			q.WriteString(`SELECT * FROM "m` + strconv.Itoa(i) + `"`)
		}
		if len(w.stmts) == 0 {
			q.WriteString(`SELECT ` + cols + ` FROM ` + root.table.quoted + ` AS "w" WHERE false`)
		}
		q.WriteString(`) SELECT (SELECT count(*) FROM "pgrst_source"), count(*), COALESCE(json_agg("s0"), '[]')::text`)
		if w.existed != nil {
			q.WriteString(`, (SELECT count(*) FROM "pgrst_existed")`)
		}
		if w.upsert {
			q.WriteString(`, (SELECT count(*) FROM "pgrst_source" WHERE "pgrst_inserted")`)
		}
		q.WriteString(` FROM (`)
		q.level(root, `"t0"`, "", `"pgrst_source"`, true)
		q.WriteString(`) AS "s0"`)
		stmts = append(stmts, q.stmt())
	} else {
		for _, f := range w.stmts {
			q := &sqlb{}
			f(q, "")
			stmts = append(stmts, q.stmt())
		}
	}
	put := c.Request().Method == http.MethodPut
	var res result
	var total int64
	existed, inserted := true, true
	err := h.run(rq, true, stmts, func(rs []*pgconn.Result) error {
		if returning {
			var err error
			if res, err = scanResult(rs[0]); err != nil {
				return err
			}
			total = *res.total
			if w.existed != nil {
				existed = string(rs[0].Rows[0][3]) != "0"
			}
			if w.upsert {
				inserted = string(rs[0].Rows[0][3]) != "0"
			}
		} else {
			for _, r := range rs {
				total += r.CommandTag.RowsAffected()
			}
		}
		if put && total == 0 {
			return errPutMismatch
		}
		if rq.single && total != 1 {
			return errSingular(total)
		}
		return nil
	})
	if err != nil {
		return h.fail(c, err)
	}
	if pf.Return != "" {
		pf.Apply("return", pf.Return)
	}
	counted := "*"
	if pf.Count == "exact" || pf.Count == "estimated" {
		pf.Apply("count", pf.Count)
		counted = strconv.FormatInt(total, 10)
	} else if pf.Count != "" {
		pf.Apply("count", pf.Count)
	}
	hdr := c.Response().Header()
	pf.setApplied(hdr)
	if w.upsert && returning && !inserted {
		okStatus = http.StatusOK // an upsert that only updated (or wrote nothing) created nothing
	}
	switch {
	case put: // PostgREST sends no Content-Range for PUT, and a body only for representation
		okStatus = http.StatusNoContent
		if pf.Return == "representation" && existed {
			okStatus = http.StatusOK
		} else if pf.Return == "representation" {
			okStatus = http.StatusCreated
		}
	case c.Request().Method == http.MethodPatch && total > 0:
		hdr.Set("Content-Range", "0-"+strconv.FormatInt(total-1, 10)+"/"+counted)
	default:
		hdr.Set("Content-Range", "*/"+counted)
	}
	switch pf.Return {
	case "representation":
		ctype := mediaJSON + "; charset=utf-8"
		body := res.body
		if rq.single {
			ctype, body = mediaObject+"; charset=utf-8", unwrapArray(body)
		}
		if len(body) > h.cfg.MaxResponseBytes {
			return h.fail(c, errResponseBytes(h.cfg.MaxResponseBytes))
		}
		return blob(c, okStatus, ctype, body)
	case "headers-only":
		if loc := location(rq.path, root.table, res.body); loc != "" && !put {
			hdr.Set("Location", loc)
		}
	}
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

var (
	errPutFilters = &Error{Status: http.StatusMethodNotAllowed, Code: "PGRST105",
		Message: "Filters must include all and only primary key columns with 'eq' operators"}
	errPutRange = &Error{Status: http.StatusBadRequest, Code: "PGRST114",
		Message: "limit/offset querystring parameters are not allowed for PUT"}
	errPutMismatch = &Error{Status: http.StatusBadRequest, Code: "PGRST115",
		Message: "Payload values do not match URL in primary key column(s)"}
)

// put serves PUT /rest/v1/:table?pk=eq.…: a single-row upsert by primary key, as PostgREST's.
// The filters must be eq on every primary key column and nothing else (405 PGRST105), without
// limit or offset (PGRST114); the body is one object (of an array, the first), whose key must
// be the URL's (PGRST115). It inserts the row, or updates the columns the body carries;
// return=representation answers 201 for an insert and 200 for an update, otherwise 204.
func (h *Handler) put(c echo.Context) error {
	rq, t, root, err := h.planTable(c)
	if err != nil {
		return h.fail(c, err)
	}
	if rq.csv {
		return h.fail(c, errMedia(c.Request().Header.Get("Accept")))
	}
	q := rq.query
	for _, r := range q.Ranges {
		if len(r.Path) == 0 && (r.HasLimit || r.Offset != 0) {
			return h.fail(c, errPutRange)
		}
	}
	if len(t.PK) == 0 || len(q.Logic) > 0 || len(q.Filters) != len(t.PK) {
		return h.fail(c, errPutFilters)
	}
	seen := map[string]bool{}
	for _, f := range q.Filters {
		e := f.Expr
		if len(f.Path) > 0 || len(f.Field.JSON) > 0 || e.Not || e.Op != OpEq || e.Quant != QuantNone ||
			!slices.Contains(t.PK, f.Field.Name) || seen[f.Field.Name] {
			return h.fail(c, errPutFilters)
		}
		seen[f.Field.Name] = true
	}
	body, err := h.readBody(c)
	if err != nil {
		return h.fail(c, err)
	}
	p, perr := parsePayload(body)
	if perr != nil {
		return h.fail(c, perr)
	}
	if len(p.rows) == 0 {
		return h.fail(c, errBody("PUT takes one JSON object"))
	}
	p.rows, p.keys = p.rows[:1], p.keys[:1]
	groups, perr := p.groups(t, nil, false)
	if perr != nil {
		return h.fail(c, perr)
	}
	match := root.conds
	root.conds = nil
	w := write{
		stmts: []func(*sqlb, string){func(q *sqlb, returning string) {
			q.insert(t, groups[0], "merge-duplicates", t.PK, match, returning)
		}},
		existed: func(q *sqlb) {
			q.WriteString(`SELECT 1 FROM ` + t.quoted + ` AS "e" WHERE `)
			q.conjunction(&node{table: t, conds: match}, `"e"`, "", "", nil)
		},
	}
	return h.finishWrite(rq, root, w, http.StatusOK)
}
