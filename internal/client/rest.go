package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Query is one read of a table through /rest/v1 in PostgREST's grammar. Build it with From and
// the chained setters; values are escaped by the encoder, and Quote makes a value safe inside
// in.(…) and or=(…) lists.
type Query struct {
	table  string
	params url.Values
	count  bool
	single bool
	// args, when set, makes table a function: its rows are read with POST /rpc/table and
	// these named arguments, and the query's select, filters, order and range apply to them.
	args map[string]any
}

// From starts a query on table.
func From(table string) *Query { return &Query{table: table, params: url.Values{}} }

// FromRPC starts a query on the rows of function fn called with args, e.g.
// FromRPC("search_publications", map[string]any{"phrase": "harbour"}). The arguments travel
// as a JSON body (POST), so no value of theirs is ever read as a filter; a stable function so
// called still runs read-only.
func FromRPC(fn string, args map[string]any) *Query {
	return &Query{table: fn, params: url.Values{}, args: args}
}

// Select sets the columns and embeds, e.g. "*,author:profiles!author_id(display_name)".
func (q *Query) Select(columns string) *Query { q.params.Set("select", columns); return q }

// Filter adds column=op.value, e.g. Filter("status", "eq", "reviewing"); column may name an
// embedded resource's column ("status_events.to_status") to filter that embed.
func (q *Query) Filter(column, op, value string) *Query {
	q.params.Add(column, op+"."+value)
	return q
}

// Eq adds column=eq.value.
func (q *Query) Eq(column, value string) *Query { return q.Filter(column, "eq", value) }

// In adds column=in.(v1,v2,…) with every value quoted.
func (q *Query) In(column string, values ...string) *Query {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = Quote(v)
	}
	return q.Filter(column, "in", "("+strings.Join(quoted, ",")+")")
}

// Or adds or=(expr), a disjunction of filters, e.g. "title.ilike.*x*,summary.ilike.*x*".
func (q *Query) Or(expr string) *Query { q.params.Add("or", "("+expr+")"); return q }

// Order sets order= on the root ("created_at.desc") or, with a path, on an embed
// (Param("reviews.order", "created_at.desc")).
func (q *Query) Order(expr string) *Query { q.params.Set("order", expr); return q }

// Param sets any other parameter, such as an embed's order or limit.
func (q *Query) Param(key, value string) *Query { q.params.Set(key, value); return q }

// Range sets limit and offset.
func (q *Query) Range(offset, limit int) *Query {
	q.params.Set("limit", strconv.Itoa(limit))
	q.params.Set("offset", strconv.Itoa(offset))
	return q
}

// Count asks for the exact number of matching rows (Prefer: count=exact).
func (q *Query) Count() *Query { q.count = true; return q }

// Single asks for exactly one row as a JSON object; none is a 406 from the service, which
// Get reports as an *Error with status 404 so callers see "not found".
func (q *Query) Single() *Query { q.single = true; return q }

// Quote makes v a PostgREST list or logic-tree value: double-quoted with backslash escapes, so
// commas, parentheses and dots in user input stay data.
func Quote(v string) string {
	return `"` + quoted.Replace(v) + `"`
}

// quoted escapes a Quote value; built once, like structural.
var quoted = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// Result is what a read says besides its rows.
type Result struct {
	// Total is the number of rows matching the filters when Count was asked, else -1.
	Total int
}

// Get runs q as the holder of accessToken and decodes the rows (or the one row, with Single)
// into out.
func (c *Client) Get(ctx context.Context, accessToken string, q *Query, out any) (Result, error) {
	body, res, err := c.GetRaw(ctx, accessToken, q)
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return Result{Total: -1}, fmt.Errorf("client: decode %s: %w", q.table, err)
	}
	return res, nil
}

// changed sends a PATCH of body (a DELETE when body is nil) to the rows of q's table that q's
// filters match, and says whether any row changed. Row-level security lets a write through to
// the rows the caller may change and answers the others as absent, so PostgREST's empty list
// (Prefer: return=representation, of q's select) is the only sign that nothing was changed.
func (c *Client) changed(ctx context.Context, accessToken string, q *Query, body any) (bool, error) {
	method := http.MethodPatch
	if body == nil {
		method = http.MethodDelete
	}
	res, err := c.do(ctx, request{method: method, path: "/rest/v1/" + url.PathEscape(q.table), query: q.params, token: accessToken,
		body: body, header: http.Header{"Prefer": {"return=representation"}}})
	if err != nil {
		return false, err
	}
	return string(res.body) != "[]", nil
}

// GetRaw runs q as Get does and returns the service's JSON as it came (the rows' array, or the
// one row's object with Single), for a caller that decodes it its own way (MCP's read tools use
// a faster decoder than encoding/json). Refusals are the same *Error as from Get. A counted
// page whose offset lies past the last row is no refusal to a reader: PostgREST answers it 416
// (PGRST103) with the total in Content-Range, and GetRaw returns no rows and that total, as
// the same read uncounted returns no rows.
func (c *Client) GetRaw(ctx context.Context, accessToken string, q *Query) ([]byte, Result, error) {
	h := http.Header{}
	if q.count {
		h.Set("Prefer", "count=exact")
	}
	if q.single {
		h.Set("Accept", "application/vnd.pgrst.object+json")
	}
	r := request{method: http.MethodGet, path: "/rest/v1/" + url.PathEscape(q.table),
		query: q.params, token: accessToken, header: h, pastEndEmpty: q.count && !q.single}
	if q.args != nil {
		r.method, r.path, r.body = http.MethodPost, "/rest/v1/rpc/"+url.PathEscape(q.table), q.args
	}
	res, err := c.do(ctx, r)
	if err != nil {
		if e, ok := ErrorOf(err); ok && q.single && e.Status == http.StatusNotAcceptable {
			e.Status = http.StatusNotFound
		}
		return nil, Result{Total: -1}, err
	}
	total := -1
	if q.count {
		total = parseContentRange(res.header.Get("Content-Range"))
	}
	return res.body, Result{Total: total}, nil
}

// RPC calls POST /rest/v1/rpc/fn with args as named arguments and decodes the answer into out
// (which may be nil to ignore it).
func (c *Client) RPC(ctx context.Context, accessToken, fn string, args any, out any) error {
	res, err := c.do(ctx, request{
		method: http.MethodPost, path: "/rest/v1/rpc/" + url.PathEscape(fn),
		token: accessToken, body: args,
	})
	if err != nil {
		return err
	}
	if out == nil || len(res.body) == 0 {
		return nil
	}
	if err := json.Unmarshal(res.body, out); err != nil {
		return fmt.Errorf("client: decode rpc %s: %w", fn, err)
	}
	return nil
}
