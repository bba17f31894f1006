package pg

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
)

// Stmt is one statement of a pipeline: SQL text and its parameters in
// text format. Parameter types are left to PostgreSQL to infer (OID 0), so
// a value written in a URL binds to whatever type its column has. Prepare
// keeps the statement prepared on the connection for the next request of
// the same shape, which saves PostgreSQL parsing and planning it again.
type Stmt struct {
	SQL     string
	Params  [][]byte
	Prepare bool
}

// maxPrepared caps the statements this package keeps prepared per
// connection; beyond it statements run unnamed.
const maxPrepared = 256

// preparedKey is where a connection's prepared statements (map[sql]description) live in its
// CustomData: the map belongs to the connection, so it needs no lock (a pooled connection has
// one user at a time) and goes away with it. The description (name and result columns, as
// PostgreSQL described the statement when it was prepared) lets a request bind the statement
// without asking PostgreSQL to describe its result again (see batched).
const preparedKey = "masthead.prepared"

var preparedSeq atomic.Int64

// preparedOn returns the statements prepared on conn, or nil on a connection through a
// transaction-mode pooler, where a statement prepared in one transaction may be gone (or on
// another server connection) in the next.
func preparedOn(conn *pgconn.PgConn) map[string]*pgconn.StatementDescription {
	data := conn.CustomData()
	if data[unpreparedKey] == true {
		return nil
	}
	if m, ok := data[preparedKey].(map[string]*pgconn.StatementDescription); ok {
		return m
	}
	m := map[string]*pgconn.StatementDescription{}
	data[preparedKey] = m
	return m
}

// ExecAsCaller runs c's setup and then stmts in one round trip. Every
// statement is parsed after the role switch, inside the request's
// transaction (the login role need not even see the schema), and prepared
// statements are prepared there too, the first time a connection sees
// them.
//
// Without explicitTx the pipeline is one implicit transaction: the
// extended protocol runs everything up to the single Sync as a unit that
// commits, or rolls back on the first error. With explicitTx a BEGIN goes
// first and the transaction stays open so the caller can inspect the
// results and then call EndTx; on error it is already rolled back.
// Settings are transaction-local, so nothing leaks to the next user of the
// connection. readOnly makes the transaction read-only (GET and HEAD).
//
// Results are in text format, one per statement of stmts.
func ExecAsCaller(ctx context.Context, conn *pgconn.PgConn, c Caller, readOnly, explicitTx bool, stmts ...Stmt) ([]*pgconn.Result, error) {
	if !knownRole(c.Role) {
		return nil, fmt.Errorf("pg: refusing unknown role %q", c.Role)
	}
	results, err := pipeline(ctx, conn, c, readOnly, explicitTx, stmts, nil)
	if err != nil && explicitTx && !conn.IsClosed() {
		_ = EndTx(ctx, conn, false)
	}
	return results, sessionError(err)
}

// StreamAsCaller is ExecAsCaller for a read (one implicit read-only transaction) whose last
// statement may return many rows: instead of collecting them, it hands each row's values to
// each as they arrive, so a large answer never sits whole in memory. The values are only valid
// during the call. When each returns an error the statement is cancelled and the connection
// closed (the pool replaces it), and that error is returned as is: a caller stops a response
// that grew too large without PostgreSQL finishing it. Results of the statements before the
// last are returned as ExecAsCaller returns them.
func StreamAsCaller(ctx context.Context, conn *pgconn.PgConn, c Caller, stmts []Stmt, each func(row [][]byte) error) ([]*pgconn.Result, error) {
	if !knownRole(c.Role) {
		return nil, fmt.Errorf("pg: refusing unknown role %q", c.Role)
	}
	results, err := pipeline(ctx, conn, c, true, false, stmts, each)
	return results, sessionError(err)
}

// stopped wraps the error a row callback returned, so pipeline can tell it from the database's.
type stopped struct{ err error }

func (s stopped) Error() string { return s.err.Error() }

// pipeline sends c's setup and stmts in one round trip and reads their results. The setup is
// the same text on every request and touches no table, so it is prepared once per connection
// like any read. A request whose statements are all prepared already (every request but a
// connection's first of its shape) goes as a batch (see batched); the others as a pipeline,
// which prepares what is new.
func pipeline(ctx context.Context, conn *pgconn.PgConn, c Caller, readOnly, explicitTx bool, stmts []Stmt, each func([][]byte) error) ([]*pgconn.Result, error) {
	names := preparedOn(conn)
	pp := setupParams.Get().(*[][]byte)
	sql, params := setup(c, readOnly, (*pp)[:0])
	defer func() {
		clear(params) // pin no request's values
		*pp = params[:0]
		setupParams.Put(pp)
	}()
	first := Stmt{SQL: sql, Params: params, Prepare: true}
	stmt := func(i int) Stmt {
		if i == 0 {
			return first
		}
		return stmts[i-1]
	}
	n := len(stmts) + 1
	if !explicitTx && names != nil && allPrepared(names, n, stmt) {
		return batched(ctx, conn, names, n, stmt, each)
	}
	return pipelined(ctx, conn, names, explicitTx, n, stmt, each)
}

// allPrepared says whether none of the n statements is to be prepared now: each is prepared on
// the connection already, or runs unnamed (not Prepare, or no room left for it).
func allPrepared(names map[string]*pgconn.StatementDescription, n int, stmt func(int) Stmt) bool {
	for i := range n {
		if s := stmt(i); s.Prepare && names[s.SQL] == nil && len(names) < maxPrepared {
			return false
		}
	}
	return true
}

// batched runs the n statements as one batch: Bind and Execute of each prepared statement (an
// unnamed one is parsed first), then one Sync, so they run as one implicit transaction. A
// prepared statement is bound with the description PostgreSQL gave when it was prepared, so
// PostgreSQL does not describe its result again and the answer carries no row description to
// decode. Against the pipeline (which also queues every request and result in lists) that
// took PostgreSQL's CPU per authenticated download from 68-91 to 61-74 µs and the media
// lookup's allocations from 34 to 27 (BenchmarkDownloadParts). Results and errors are as
// pipelined gives them; a statement is never prepared here.
func batched(ctx context.Context, conn *pgconn.PgConn, names map[string]*pgconn.StatementDescription, n int, stmt func(int) Stmt, each func([][]byte) error) ([]*pgconn.Result, error) {
	var b pgconn.Batch
	for i := range n {
		s := stmt(i)
		if sd := names[s.SQL]; s.Prepare && sd != nil {
			b.ExecStatement(sd, s.Params, nil, nil)
		} else {
			b.ExecParams(s.SQL, s.Params, nil, nil, nil)
		}
	}
	mrr := conn.ExecBatch(ctx, &b)
	var out []*pgconn.Result
	i := 0 // the statement whose result is read
	var stop error
	for ; mrr.NextResult(); i++ {
		rr := mrr.ResultReader()
		var res *pgconn.Result
		switch {
		case i == 0:
			// The setup's values (an echo of the claims) are of no use.
		case each != nil && i == n-1:
			for stop == nil && rr.NextRow() {
				stop = each(rr.Values())
			}
			res = &pgconn.Result{}
		default:
			res = rr.Read()
		}
		if stop != nil {
			break
		}
		tag, err := rr.Close()
		if err != nil {
			break // mrr holds the error, and i names the statement that failed
		}
		if res != nil {
			res.CommandTag = tag
			out = append(out, res)
		}
	}
	if stop != nil {
		abandon(ctx, conn)
		return nil, stop
	}
	if err := mrr.Close(); err != nil {
		forgetStale(names, err, stmt(min(i, n-1)).SQL)
		return nil, err
	}
	return out, nil
}

// forgetStale forgets what err says is no longer prepared as it was: the statement sql when
// the table under it changed shape, every statement when someone deallocated them.
func forgetStale(names map[string]*pgconn.StatementDescription, err error, sql string) {
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "0A000" && strings.Contains(pe.Message, "cached plan"):
		// The table changed shape under a prepared statement: prepare afresh next time.
		delete(names, sql)
	case errors.As(err, &pe) && pe.Code == "26000":
		// Someone deallocated our statements (DISCARD ALL): forget them all and prepare again.
		clear(names)
	}
}

// abandon stops PostgreSQL working on an answer that is not wanted, and closes the connection
// rather than drain it (a late cancel must not hit the next request); the pool replaces it.
func abandon(ctx context.Context, conn *pgconn.PgConn) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	_ = conn.CancelRequest(cctx)
	_ = conn.Close(cctx)
	cancel()
}

// pipelined runs the n statements in pipeline mode, preparing (parse and describe) each
// Prepare statement the connection does not have yet, with a BEGIN first when explicitTx.
func pipelined(ctx context.Context, conn *pgconn.PgConn, names map[string]*pgconn.StatementDescription, explicitTx bool, n int, stmt func(int) Stmt, each func([][]byte) error) ([]*pgconn.Result, error) {
	p := conn.StartPipeline(ctx)
	if explicitTx {
		p.SendQueryParams("begin", nil, nil, nil, nil)
	}
	var names4 [4]string // statements prepared in this pipeline; room for a download's two without allocating
	newName := names4[:0]
	if n > len(names4) {
		newName = make([]string, 0, n)
	}
	newName = newName[:n]
	for i := range n {
		s := stmt(i)
		name := ""
		if s.Prepare && names != nil {
			if sd := names[s.SQL]; sd != nil {
				name = sd.Name
			} else if len(names) < maxPrepared {
				name = "masthead_" + strconv.FormatInt(preparedSeq.Add(1), 10)
				newName[i] = name
				p.SendPrepare(name, s.SQL, nil)
			}
		}
		if name != "" {
			p.SendQueryPrepared(name, s.Params, nil, nil)
		} else {
			p.SendQueryParams(s.SQL, s.Params, nil, nil, nil)
		}
	}
	if err := p.Sync(); err != nil {
		_ = p.Close()
		return nil, err
	}
	// read reads the next result; stream hands its rows to each, discard drops them (the
	// setup's values are of no use, and copying its echo of the claims cost an allocation).
	read := func(stream, discard bool) (*pgconn.Result, error) {
		r, err := p.GetResults()
		if err != nil {
			return nil, err
		}
		rr, ok := r.(*pgconn.ResultReader)
		if !ok {
			return nil, fmt.Errorf("pg: pipeline: expected a result, got %T", r)
		}
		if discard {
			_, err := rr.Close()
			return nil, err
		}
		if !stream {
			res := rr.Read()
			return res, res.Err
		}
		for rr.NextRow() {
			if err := each(rr.Values()); err != nil {
				return nil, stopped{err}
			}
		}
		tag, err := rr.Close()
		return &pgconn.Result{CommandTag: tag}, err
	}
	var out []*pgconn.Result
	err := func() error {
		if explicitTx {
			if _, err := read(false, true); err != nil {
				return err
			}
		}
		for i := range n {
			if newName[i] != "" {
				r, err := p.GetResults()
				if err != nil {
					return err
				}
				sd, ok := r.(*pgconn.StatementDescription)
				if !ok {
					return fmt.Errorf("pg: pipeline: expected a statement description, got %T", r)
				}
				// Parsed and described: it exists on this connection now,
				// whether or not executing it succeeds. (The pipeline does not
				// name the description it returns.)
				sd.Name, sd.SQL = newName[i], stmt(i).SQL
				names[sd.SQL] = sd
			}
			res, err := read(each != nil && i == n-1, i == 0)
			if err != nil {
				forgetStale(names, err, stmt(i).SQL)
				return err
			}
			if i > 0 {
				out = append(out, res)
			}
		}
		return nil
	}()
	if stop, ok := err.(stopped); ok {
		abandon(ctx, conn)
		return nil, stop.err
	}
	if cerr := p.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EndTx commits or rolls back the transaction ExecAsCaller left open.
func EndTx(ctx context.Context, conn *pgconn.PgConn, commit bool) error {
	sql := "rollback"
	if commit {
		sql = "commit"
	}
	_, err := conn.Exec(ctx, sql).ReadAll()
	return err
}

// ArrayLiteral renders vals as a PostgreSQL array literal with every element quoted, so it is
// sent as one text parameter and PostgreSQL parses it as an array of the type it is cast to.
func ArrayLiteral(vals []string) string {
	n := 2
	for _, v := range vals {
		n += len(v) + 3
	}
	var b strings.Builder
	b.Grow(n + n/8) // room for a few escapes: one allocation
	b.WriteByte('{')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for j := 0; j < len(v); {
			if c := v[j]; c < utf8.RuneSelf {
				if c == '"' || c == '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(c)
				j++
				continue
			}
			r, size := utf8.DecodeRuneInString(v[j:]) // invalid UTF-8 becomes U+FFFD, as before
			b.WriteRune(r)
			j += size
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}
