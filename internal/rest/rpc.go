package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

const mediaForm = "application/x-www-form-urlencoded"

// errRPCMethod is PostgREST's answer to a method other than GET, HEAD or POST on /rpc.
func errRPCMethod(method string) *Error {
	return &Error{Status: http.StatusMethodNotAllowed, Code: "PGRST101",
		Message: "Cannot use the " + method + " method on RPC"}
}

// rpcInput is the arguments of a call as the request gave them: a JSON object (POST with a JSON
// body), or text values by name (GET's query string, a POST form), where a name may repeat.
type rpcInput struct {
	json     map[string]json.RawMessage
	text     map[string][]string
	jsonBody bool // the arguments came as a JSON body (PGRST202 then mentions json parameters)
}

func (in *rpcInput) names() []string {
	var out []string
	if in.json != nil {
		for k := range in.json {
			out = append(out, k)
		}
	} else {
		for k := range in.text {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// args is the JSON object of arguments for fn. A text value is a JSON string (PostgreSQL reads
// it as the argument's type); a repeated name keeps its last value, except for a VARIADIC
// argument, whose values make its array, as PostgREST does.
func (in *rpcInput) args(fn *Function) map[string]json.RawMessage {
	if in.json != nil {
		return in.json
	}
	out := make(map[string]json.RawMessage, len(in.text))
	for name, vs := range in.text {
		i := slices.IndexFunc(fn.Args, func(a Arg) bool { return a.Name == name })
		if i >= 0 && fn.Args[i].Variadic {
			out[name] = mustJSON(vs)
			continue
		}
		out[name] = mustJSON(vs[len(vs)-1])
	}
	return out
}

// rpcArgs reads the arguments: the query string's non-filter parameters for GET and HEAD;
// for POST a JSON object (an array gives its first object, an empty body none) or a form.
func (h *Handler) rpcArgs(c echo.Context, rq *request, read bool) (*rpcInput, error) {
	if read {
		in := &rpcInput{text: map[string][]string{}}
		for _, p := range rq.query.Params {
			in.text[p.Name] = append(in.text[p.Name], p.Value)
		}
		return in, nil
	}
	body, mt, err := h.readBodyAs(c, mediaJSON, mediaForm)
	if err != nil {
		return nil, err
	}
	if mt == mediaForm {
		vals, perr := url.ParseQuery(string(bytes.TrimSpace(body)))
		if perr != nil {
			return nil, errBody("the form body does not decode: " + perr.Error())
		}
		return &rpcInput{text: vals}, nil
	}
	in := &rpcInput{json: map[string]json.RawMessage{}, jsonBody: true}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(body, &list); err != nil {
			return nil, errBody(err.Error())
		}
		body = nil
		if len(list) > 0 {
			body = list[0]
		}
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in.json); err != nil || in.json == nil {
			return nil, errBody("the arguments must be one JSON object")
		}
	}
	if cols := rq.query.Columns; cols != nil {
		for k := range in.json {
			if !slices.Contains(cols, k) {
				delete(in.json, k)
			}
		}
	}
	return in, nil
}

// rpc serves /rest/v1/rpc/:fn: POST with named JSON arguments (or a form), GET and HEAD with
// arguments in the query string; any other method is 405 PGRST101.
// Arguments reach the function through json_to_record, typed by the schema cache, so each
// value is one JSON parameter.
//
// A function whose result has a row shape (a table, a composite type, OUT or TABLE
// parameters) is read like a table: select, filters, order, limits and embeds apply, and a
// function returning one row answers one object. Any other function answers its value as
// JSON (null included); a set of values is an array.
func (h *Handler) rpc(c echo.Context) error {
	method := c.Request().Method
	if method != http.MethodGet && method != http.MethodHead && method != http.MethodPost {
		return h.fail(c, errRPCMethod(method))
	}
	read := method != http.MethodPost
	rq, err := h.begin(c, read)
	if err != nil {
		return h.fail(c, err)
	}
	if strings.Contains(c.Param("fn"), "/") {
		return h.fail(c, errInvalidPath())
	}
	if rq.csv {
		return h.fail(c, errMedia(c.Request().Header.Get("Accept")))
	}
	in, err := h.rpcArgs(c, rq, read)
	if err != nil {
		return h.fail(c, err)
	}
	fn, perr := rq.schema.function(c.Param("fn"), in.names(), in.jsonBody)
	if perr != nil {
		return h.fail(c, perr)
	}
	shape := fn.Result
	if shape == nil {
		// Values have no columns: any column the query names is unknown.
		shape = newTable(fn.Name, "")
	}
	root, perr := rq.schema.planRead(shape, rq.query, h.planOpts())
	if perr != nil {
		return h.fail(c, perr)
	}
	if err := h.window(rq, root); err != nil {
		return h.fail(c, err)
	}
	count := rq.prefer.Count != ""
	q, single := buildCall(fn, in.args(fn), root, count)
	if count {
		rq.prefer.Apply("count", rq.prefer.Count)
	}
	var res result
	// As PostgREST: only POST to a volatile function may write; anything
	// else runs read-only (a write attempt is 405 through SQLSTATE 25006).
	write := !read && fn.Volatile == 'v'
	// Calls repeat by shape (the arguments are one JSON parameter): keep the plan, as reads do.
	// Planning the dashboard's search statement cost about 0.4 ms of its 5.
	st := q.stmt()
	st.Prepare = true
	err = h.run(rq, write, []pg.Stmt{st}, func(rs []*pgconn.Result) error {
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
	withBody := method != http.MethodHead
	if single && fn.Result != nil {
		// A function returning one row answers one object (as application/json), as PostgREST.
		rq.object = true
		if res.page != 1 {
			return h.fail(c, errSingular(res.page))
		}
	}
	if !single || fn.Result != nil {
		return h.respondRows(rq, root.offset, res, http.StatusOK, withBody)
	}
	// One value is the range 0-0, of a total of 1 when a count was asked for.
	hdr := c.Response().Header()
	total := "*"
	if count {
		total = "1"
	}
	hdr.Set("Content-Range", "0-0/"+total)
	rq.prefer.setApplied(hdr)
	ctype := mediaJSON + "; charset=utf-8"
	if rq.single {
		ctype = mediaObject + "; charset=utf-8"
	}
	if !withBody {
		hdr.Set(echo.HeaderContentType, ctype)
		return c.NoContent(http.StatusOK)
	}
	if len(res.body) > h.cfg.MaxResponseBytes {
		return h.fail(c, errResponseBytes(h.cfg.MaxResponseBytes))
	}
	return blob(c, http.StatusOK, ctype, res.body)
}

// buildCall is the one statement that calls fn with args and reads its result as root says
// (select, filters, order, page), with the count of the result's rows when count is set. It
// returns one row: the count (NULL without), the rows in the page and the body. single says
// the answer is one value or one row, not an array.
func buildCall(fn *Function, args map[string]json.RawMessage, root *node, count bool) (*sqlb, bool) {
	q := &sqlb{}
	from, call := q.call(fn, args)
	single := false // one value or one row, answered without the array
	switch {
	case fn.ReturnsVoid:
		// In FROM, so the call runs even though nothing of it is read.
		if from != "" {
			from += ", LATERAL"
		} else {
			from = " FROM"
		}
		q.WriteString(`SELECT NULL::bigint, count(*), ''` + from + " " + call + ` AS "s0"`)
	case fn.Result != nil:
		// The call sits in a CTE so it runs once even when counted.
		if from != "" {
			from += ", LATERAL"
		} else {
			from = " FROM"
		}
		q.WriteString(`WITH "pgrst_source" AS (SELECT "pgrst_call".*` + from + " " + call + ` AS "pgrst_call") SELECT `)
		if count {
			// Counts of function results are exact: the planner cannot
			// estimate what a function returns.
			q.WriteString(`(SELECT count(*) FROM "pgrst_source" AS "c0"`)
			q.where(root, `"c0"`, "", "")
			q.WriteString("), ")
		} else {
			q.WriteString("NULL::bigint, ")
		}
		q.WriteString(`count(*), COALESCE(json_agg("s0"), '[]')::text FROM (`)
		q.level(root, `"t0"`, "", `"pgrst_source"`, false)
		q.WriteString(`) AS "s0"`)
		single = !fn.ReturnsSet
	case fn.ReturnsSet:
		q.WriteString(`WITH "pgrst_source" AS (SELECT ` + call + ` AS "pgrst_scalar"` + from + `) SELECT `)
		if count {
			q.WriteString(`(SELECT count(*) FROM "pgrst_source"), `)
		} else {
			q.WriteString("NULL::bigint, ")
		}
		q.WriteString(`count(*), COALESCE(json_agg("s0"."pgrst_scalar"), '[]')::text FROM (SELECT "pgrst_scalar" FROM "pgrst_source"`)
		q.limit(root.limit, root.offset)
		q.WriteString(`) AS "s0"`)
	default:
		single = true
		q.WriteString(`SELECT `)
		if count {
			q.WriteString("1::bigint, ")
		} else {
			q.WriteString("NULL::bigint, ")
		}
		q.WriteString(`1::bigint, COALESCE((SELECT to_json(` + call + `)` + from + `)::text, 'null')`)
	}
	return q, single
}

// call returns what calls fn: from is " FROM json_to_record(…) AS "_"(…)", which reads the
// arguments from one JSON parameter with the types of the schema cache ("" without
// arguments), and expr the call itself, naming each argument (VARIADIC for a variadic one).
func (q *sqlb) call(fn *Function, args map[string]json.RawMessage) (from, expr string) {
	name := quoteIdent(exposedSchema) + "." + quoteIdent(fn.Name)
	if len(args) == 0 {
		return "", name + "()"
	}
	obj, _ := json.Marshal(args)
	q.args = append(q.args, obj)
	var f, e strings.Builder
	f.WriteString(` FROM json_to_record($` + strconv.Itoa(len(q.args)) + `::json) AS "_"(`)
	e.WriteString(name + "(")
	n := 0
	for _, a := range fn.Args {
		if _, ok := args[a.Name]; !ok {
			continue
		}
		if n > 0 {
			f.WriteString(", ")
			e.WriteString(", ")
		}
		n++
		// a.Type is format_type() output from the catalog, not input.
		f.WriteString(quoteIdent(a.Name) + " " + a.Type)
		if a.Variadic {
			e.WriteString("VARIADIC ")
		}
		e.WriteString(quoteIdent(a.Name) + ` := "_".` + quoteIdent(a.Name))
	}
	f.WriteString(")")
	e.WriteString(")")
	return f.String(), e.String()
}

// function finds the overload whose arguments match the given names:
// every required one present, no unknown one. None is PGRST202.
func (s *Schema) function(name string, args []string, jsonBody bool) (*Function, *Error) {
	var match []*Function
	for _, f := range s.Functions[name] {
		ok := true
		for _, a := range f.Args {
			if a.Required && !slices.Contains(args, a.Name) {
				ok = false
			}
		}
		for _, k := range args {
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
		with, params := " without parameters", " without parameters"
		if len(args) > 0 {
			with = "(" + strings.Join(args, ", ") + ")"
			params = " with parameter " + strings.Join(args, ", ")
			if len(args) > 1 {
				params = " with parameters " + strings.Join(args, ", ")
			}
		}
		if jsonBody {
			params += " or with a single unnamed json/jsonb parameter"
		}
		return nil, &Error{Status: http.StatusNotFound, Code: "PGRST202",
			Message: "Could not find the function " + qualified + with + " in the schema cache",
			Details: "Searched for the function " + qualified + params + ", but no matches were found in the schema cache.",
			Hint:    s.functionHint(name, args)}
	}
	cands := make([]string, len(match))
	for i, f := range match {
		params := make([]string, len(f.Args))
		for j, a := range f.Args {
			params[j] = a.Name + " => " + a.Type
		}
		cands[i] = qualified + "(" + strings.Join(params, ", ") + ")"
	}
	return nil, &Error{Status: http.StatusMultipleChoices, Code: "PGRST203",
		Message: "Could not choose the best candidate function between: " + strings.Join(cands, ", "),
		Hint:    "Try renaming the parameters or the function itself in the database so function overloading can be resolved"}
}

// functionHint is PGRST202's "Perhaps you meant to call …": for a name with overloads, the
// parameter list closest to the one given; otherwise the closest function name.
func (s *Schema) functionHint(name string, args []string) string {
	prefix := "Perhaps you meant to call the function " + exposedSchema + "."
	if overloads := s.Functions[name]; len(overloads) > 0 {
		lists := make([]string, 0, len(overloads))
		for _, f := range overloads {
			names := make([]string, len(f.Args))
			for i, a := range f.Args {
				names[i] = a.Name
			}
			slices.Sort(names)
			lists = append(lists, "("+strings.Join(names, ", ")+")")
		}
		if best, _, ok := closest(lists, "("+strings.Join(args, ", ")+")", 0.33); ok {
			return prefix + name + best
		}
		return ""
	}
	names := make([]string, 0, len(s.Functions))
	for n := range s.Functions {
		names = append(names, n)
	}
	slices.Sort(names)
	if best, _, ok := closest(names, name, 0.75); ok {
		return prefix + best
	}
	return ""
}
