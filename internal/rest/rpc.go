package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// rpc serves /rest/v1/rpc/:fn: POST with named JSON arguments, GET (and
// HEAD) with arguments in the query string.
// Arguments reach the function through json_to_record, typed by the
// schema cache, so each value is one JSON parameter.
func (h *Handler) rpc(c echo.Context) error {
	method := c.Request().Method
	read := method != http.MethodPost
	rq, err := h.begin(c, read)
	if err != nil {
		return h.fail(c, err)
	}
	args := map[string]json.RawMessage{}
	if read {
		for _, p := range rq.query.Params {
			args[p.Name] = mustJSON(p.Value)
		}
	} else {
		body, err := h.readBody(c)
		if err != nil {
			return h.fail(c, err)
		}
		if body = bytes.TrimSpace(body); len(body) > 0 {
			if err := json.Unmarshal(body, &args); err != nil || args == nil {
				return h.fail(c, errBody("the arguments must be one JSON object"))
			}
		}
	}
	fn, perr := rq.schema.function(c.Param("fn"), args)
	if perr != nil {
		return h.fail(c, perr)
	}
	q := &sqlb{}
	call := q.call(fn, args)
	var root *node
	switch {
	case fn.ReturnsVoid:
		q.WriteString(`SELECT NULL::bigint, count(*), '' FROM ` + call + ` AS "s0"`)
	case fn.ReturnTable != "":
		t := rq.schema.Tables[fn.ReturnTable]
		if root, perr = rq.schema.planRead(t, rq.query); perr != nil {
			return h.fail(c, perr)
		}
		if err := h.window(rq, root); err != nil {
			return h.fail(c, err)
		}
		// The call sits in a CTE so it runs once even when counted.
		q.WriteString(`WITH "pgrst_source" AS (SELECT "f".* FROM ` + call + ` AS "f") SELECT `)
		if rq.prefer.Count != "" {
			// Counts of function results are exact: the planner cannot
			// estimate what a function returns.
			q.WriteString(`(SELECT count(*) FROM "pgrst_source" AS "c0"`)
			q.where(root, `"c0"`, "", "")
			q.WriteString("), ")
			rq.prefer.Apply("count", rq.prefer.Count)
		} else {
			q.WriteString("NULL::bigint, ")
		}
		q.WriteString(`count(*), COALESCE(json_agg("s0"), '[]')::text FROM (`)
		q.level(root, `"t0"`, "", `"pgrst_source"`, false)
		q.WriteString(`) AS "s0"`)
	case fn.Composite:
		q.WriteString(`SELECT NULL::bigint, count(*), COALESCE(json_agg("t0"), '[]')::text FROM ` + call + ` AS "t0"`)
	case fn.ReturnsSet:
		q.WriteString(`SELECT NULL::bigint, count(*), COALESCE(json_agg("t0"."v"), '[]')::text FROM ` + call + ` AS "t0"("v")`)
	default:
		q.WriteString(`SELECT NULL::bigint, 1::bigint, (SELECT to_json("t0"."v")::text FROM ` + call + ` AS "t0"("v"))`)
	}
	var res result
	// As PostgREST: only POST to a volatile function may write; anything
	// else runs read-only (a write attempt is 405 through SQLSTATE 25006).
	write := !read && fn.Volatile == 'v'
	err = h.run(rq, write, []pg.Stmt{q.stmt()}, func(rs []*pgconn.Result) error {
		var err error
		if res, err = scanResult(rs[0]); err != nil {
			return err
		}
		if rq.single && !fn.ReturnsVoid && res.page != 1 {
			return errSingular(res.page)
		}
		return nil
	})
	if err != nil {
		return h.fail(c, err)
	}
	if fn.ReturnsVoid {
		return c.NoContent(http.StatusNoContent)
	}
	if !fn.ReturnsSet && fn.Composite {
		// A function returning one row answers one object, as PostgREST.
		rq.single = true
		if res.page != 1 {
			return h.fail(c, errSingular(res.page))
		}
	}
	if !fn.ReturnsSet && !fn.Composite {
		ctype := mediaJSON + "; charset=utf-8"
		if method == http.MethodHead {
			c.Response().Header().Set(echo.HeaderContentType, ctype)
			return c.NoContent(http.StatusOK)
		}
		return blob(c, http.StatusOK, ctype, res.body)
	}
	var offset int64
	if root != nil {
		offset = root.offset
	}
	return h.respondRows(rq, offset, res, http.StatusOK, method != http.MethodHead)
}

// call returns the FROM item that calls fn (the caller appends an alias),
// reading the arguments from one JSON parameter through json_to_record
// with the column types of the schema cache. It adds the parameter but
// writes nothing itself.
func (q *sqlb) call(fn *Function, args map[string]json.RawMessage) string {
	var b strings.Builder
	name := quoteIdent(exposedSchema) + "." + quoteIdent(fn.Name)
	if len(args) == 0 {
		return name + "()"
	}
	obj, _ := json.Marshal(args)
	q.args = append(q.args, obj)
	b.WriteString(`json_to_record($` + strconv.Itoa(len(q.args)) + `::json) AS "_"(`)
	var given []Arg
	for _, a := range fn.Args {
		if _, ok := args[a.Name]; ok {
			given = append(given, a)
		}
	}
	for i, a := range given {
		if i > 0 {
			b.WriteString(", ")
		}
		// a.Type is format_type() output from the catalog, not input.
		b.WriteString(quoteIdent(a.Name) + " " + a.Type)
	}
	b.WriteString(`), LATERAL ` + name + "(")
	for i, a := range given {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(a.Name) + ` := "_".` + quoteIdent(a.Name))
	}
	b.WriteString(")")
	return b.String()
}

// function finds the overload whose arguments match the given names:
// every required one present, no unknown one. None is PGRST202.
func (s *Schema) function(name string, args map[string]json.RawMessage) (*Function, *Error) {
	var match []*Function
	for _, f := range s.Functions[name] {
		ok := true
		for _, a := range f.Args {
			if _, given := args[a.Name]; a.Required && !given {
				ok = false
			}
		}
		for k := range args {
			if !slices.ContainsFunc(f.Args, func(a Arg) bool { return a.Name == k }) {
				ok = false
			}
		}
		if ok {
			match = append(match, f)
		}
	}
	qualified := exposedSchema + "." + name
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		with, params := " without parameters", "without parameters"
		if len(keys) > 0 {
			with = "(" + strings.Join(keys, ", ") + ")"
			params = "with parameters " + strings.Join(keys, ", ")
		}
		return nil, &Error{Status: http.StatusNotFound, Code: "PGRST202",
			Message: "Could not find the function " + qualified + with + " in the schema cache",
			Details: "Searched for the function " + qualified + " " + params + " or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.",
			Hint:    "If a new function was created in the database with this name and parameters, try reloading the schema cache."}
	}
	return nil, &Error{Status: http.StatusMultipleChoices, Code: "PGRST203",
		Message: "Could not choose the best candidate function between overloads of " + qualified,
		Hint:    "Try renaming the parameters or the function itself in the database so function overloading can be resolved"}
}
