package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// errNoFilter refuses a PATCH or DELETE that would touch every row the
// caller can see; it is almost always a mistake, so the request must say
// which rows (a filter) or how many (limit).
func errNoFilter(verb string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "21000",
		Message: verb + " requires a WHERE clause",
		Hint:    "Add a filter (for example id=eq.<id>) or a limit to " + strings.ToLower(verb) + " rows on purpose."}
}

// update serves PATCH /rest/v1/:table.
func (h *Handler) update(c echo.Context) error {
	return h.mutate(c, "UPDATE")
}

// delete serves DELETE /rest/v1/:table.
func (h *Handler) delete(c echo.Context) error {
	return h.mutate(c, "DELETE")
}

func (h *Handler) mutate(c echo.Context, verb string) error {
	rq, t, root, err := h.planTable(c)
	if err != nil {
		return h.fail(c, err)
	}
	if rq.csv {
		return h.fail(c, errMedia(c.Request().Header.Get("Accept")))
	}
	if len(root.conds) == 0 && root.limit < 0 {
		return h.fail(c, errNoFilter(verb))
	}
	var set, defaults []*Column
	var row []byte
	if verb == "UPDATE" {
		body, err := h.readBody(c)
		if err != nil {
			return h.fail(c, err)
		}
		row = bytes.TrimSpace(body)
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(row, &obj); err != nil || obj == nil {
			return h.fail(c, errBody("PATCH takes one JSON object"))
		}
		names := make([]string, 0, len(obj))
		for k := range obj {
			names = append(names, k)
		}
		slices.Sort(names)
		cols := rq.query.Columns
		if cols == nil {
			cols = names
		}
		for _, n := range cols {
			col := t.ColumnByName[n]
			if col == nil {
				return h.fail(c, errNoWriteColumn(t, n))
			}
			if _, given := obj[n]; !given && rq.prefer.Missing == "default" {
				// columns= names it, the body lacks it: Prefer: missing=default sets its default.
				defaults = append(defaults, col)
				continue
			}
			set = append(set, col)
		}
	}
	w := write{stmts: []func(*sqlb, string){func(q *sqlb, returning string) { q.mutation(verb, t, set, defaults, row, root, returning) }}}
	if rq.prefer.Missing != "" && verb == "UPDATE" {
		rq.prefer.Apply("missing", rq.prefer.Missing)
	}
	return h.finishWrite(rq, root, w, http.StatusOK)
}

// mutation writes the bare UPDATE or DELETE, with RETURNING returning when it is not empty.
func (q *sqlb) mutation(verb string, t *Table, set, defaults []*Column, row []byte, root *node, returning string) {
	if verb == "UPDATE" && len(set)+len(defaults) == 0 {
		// Nothing to change: the empty result PostgREST answers.
		q.WriteString(`SELECT `)
		if returning == "" {
			q.WriteString("1")
		} else {
			q.WriteString(returning)
		}
		q.WriteString(` FROM ` + t.quoted + ` AS "w" WHERE false`)
		return
	}
	if verb == "UPDATE" {
		q.WriteString(`UPDATE ` + t.quoted + ` AS "w" SET `)
		for i, col := range set {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString(col.quoted + ` = "_".` + col.quoted)
		}
		for i, col := range defaults {
			if i > 0 || len(set) > 0 {
				q.WriteString(", ")
			}
			q.WriteString(col.quoted + ` = DEFAULT`)
		}
		q.WriteString(` FROM json_populate_record(NULL::` + t.quoted + `, `)
		q.param(string(row))
		q.WriteString(`::json) AS "_"`)
	} else {
		q.WriteString(`DELETE FROM ` + t.quoted + ` AS "w"`)
	}
	q.mutationWhere(root)
	if returning != "" {
		q.WriteString(" RETURNING " + returning)
	}
}

// mutationWhere applies the root's filters to the write, and its limit
// (with order) through the rows' ctids, as PostgREST does.
func (q *sqlb) mutationWhere(root *node) {
	conds := &node{table: root.table, conds: root.conds}
	if len(root.conds) > 0 {
		q.WriteString(" WHERE ")
		q.conjunction(conds, `"w"`, "", "", nil)
	}
	if root.limit < 0 {
		return
	}
	if len(root.conds) > 0 {
		q.WriteString(" AND ")
	} else {
		q.WriteString(" WHERE ")
	}
	q.WriteString(`"w".ctid = ANY(ARRAY(SELECT "l".ctid FROM ` + root.table.quoted + ` AS "l"`)
	if len(root.conds) > 0 {
		q.WriteString(" WHERE ")
		q.conjunction(conds, `"l"`, "", "", nil)
	}
	q.orderBy(root, `"l"`)
	q.limit(root.limit, root.offset)
	q.WriteString("))")
}
