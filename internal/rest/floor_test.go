package rest

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"masthead/internal/pg"
)

// floorEndpoint is the best a hand-written net/http endpoint can do for one read: the same
// Authenticator (token verification), the same caller setup (role, claims, the session check,
// read-only), the same SQL text our engine produces for the request, on the same pool, in one
// round trip, the rows' JSON copied from PostgreSQL into the body as they arrive. What it leaves
// out is exactly the engine: parsing the URL, planning, building SQL, PostgREST's per-request
// settings and headers. The benchmarks measure our handler against it.
type floorEndpoint struct {
	pool  *pgxpool.Pool
	auth  Authenticator
	sql   string
	param string // the query-string key whose eq. value is bound where idx says; "" for none
	idx   int
	args  [][]byte
}

// newFloor builds the endpoint for the read at path (relative to /rest/v1, with a query) from
// the SQL our planner writes for it. param, when set, is the filter whose value the endpoint
// takes from each request's URL, as a hand-written handler would.
func newFloor(t testing.TB, f *fixture, path, param string) *floorEndpoint {
	t.Helper()
	u, err := url.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParseQuery(u.RawQuery, false)
	if err != nil {
		t.Fatal(err)
	}
	s := f.h.schema.Schema()
	tbl, perr := s.table(strings.TrimPrefix(u.Path, "/"))
	if perr != nil {
		t.Fatal(perr)
	}
	root, perr := s.planRead(tbl, q, f.h.planOpts())
	if perr != nil {
		t.Fatal(perr)
	}
	root.limit = f.h.cfg.MaxRows
	st := buildRows(root, true, false).stmt()
	fe := &floorEndpoint{pool: f.db.Pool, auth: f.h.auth, sql: st.SQL, param: param, idx: -1, args: st.Params}
	if param != "" {
		want := strings.TrimPrefix(u.Query().Get(param), "eq.")
		for i, a := range fe.args {
			if string(a) == want {
				fe.idx = i
			}
		}
		if fe.idx < 0 {
			t.Fatalf("floor: %s is not a parameter of %s", param, st.SQL)
		}
	}
	return fe
}

func (fe *floorEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	caller, err := fe.auth.Caller(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	value := ""
	if fe.idx >= 0 {
		value = strings.TrimPrefix(r.URL.Query().Get(fe.param), "eq.")
	}
	var body bytes.Buffer
	if err := fe.read(r.Context(), caller, value, &body); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(body.Bytes())
}

// read is the endpoint without HTTP: the statement with value bound for the filter (when the
// endpoint has one), as caller, in one round trip on a pooled connection, the rows' JSON
// written to body as one array. It is also the in-process floor: pgx alone.
func (fe *floorEndpoint) read(ctx context.Context, caller pg.Caller, value string, body *bytes.Buffer) error {
	args := fe.args
	if fe.idx >= 0 {
		args = append([][]byte(nil), fe.args...)
		args[fe.idx] = []byte(value)
	}
	conn, err := fe.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	n := 0
	_, err = pg.StreamAsCaller(ctx, conn.Conn().PgConn(), caller,
		[]pg.Stmt{{SQL: fe.sql, Params: args, Prepare: true}}, func(row [][]byte) error {
			if n == 0 {
				body.WriteByte('[')
			} else {
				body.WriteString(aggSep)
			}
			n++
			body.Write(row[0])
			return nil
		})
	conn.Release()
	if err != nil {
		return err
	}
	if n == 0 {
		body.WriteString("[]")
	} else {
		body.WriteByte(']')
	}
	return nil
}
