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
	if len(root.conds) == 0 && root.limit < 0 {
		return h.fail(c, errNoFilter(verb))
	}
	var set []*Column
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
			set = append(set, col)
		}
	}
	returning := rq.prefer.Return == "representation"
	q := &sqlb{}
	q.WriteString(`WITH "pgrst_source" AS (`)
	q.mutation(verb, t, set, row, root)
	if returning && (verb == "DELETE" || len(set) > 0) {
		// Without return=representation there is no RETURNING, which would
		// need SELECT rights the caller may lack.
		q.WriteString(` RETURNING "w".*`)
	}
	q.WriteString(") ")
	return h.finishWrite(rq, root, q, returning, http.StatusOK)
}

// mutation writes the bare UPDATE or DELETE.
func (q *sqlb) mutation(verb string, t *Table, set []*Column, row []byte, root *node) {
	if verb == "UPDATE" && len(set) == 0 {
		// Nothing to change: the empty result PostgREST answers.
		q.WriteString(`SELECT * FROM ` + t.quoted + ` AS "w" WHERE false`)
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
		q.WriteString(` FROM json_populate_record(NULL::` + t.quoted + `, `)
		q.param(string(row))
		q.WriteString(`::json) AS "_"`)
	} else {
		q.WriteString(`DELETE FROM ` + t.quoted + ` AS "w"`)
	}
	q.mutationWhere(root)
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
