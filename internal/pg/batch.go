package pg

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Stmt is one statement of a pipeline: SQL text and its parameters in
// text format. Parameter types are left to PostgreSQL to infer (OID 0), so
// a value written in a URL binds to whatever type its column has.
type Stmt struct {
	SQL    string
	Params [][]byte
}

// batchSetupSQL applies a caller and further settings in one fixed
// statement whatever the settings.
const batchSetupSQL = `select set_config('role', $1, true), set_config('request.jwt.claims', $2, true),
  (select count(set_config(k, v, true)) from unnest($3::text[], $4::text[]) as s(k, v))`

// ExecAsCaller runs c's setup and then stmts in one round trip. Every
// statement is parsed after the role switch (unnamed statements, no
// preparing ahead as the login role, which may not even see the schema).
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
	claims := string(c.Claims)
	if claims == "" {
		claims = "{}"
	}
	keys := make([]string, 0, len(c.Settings)+1)
	vals := make([]string, 0, len(c.Settings)+1)
	if readOnly {
		keys, vals = append(keys, "transaction_read_only"), append(vals, "on")
	}
	for k, v := range c.Settings {
		keys, vals = append(keys, k), append(vals, v)
	}
	b := &pgconn.Batch{}
	skip := 1
	if explicitTx {
		b.ExecParams("begin", nil, nil, nil, nil)
		skip = 2
	}
	b.ExecParams(batchSetupSQL, [][]byte{[]byte(c.Role), []byte(claims), textArray(keys), textArray(vals)}, nil, nil, nil)
	for _, s := range stmts {
		b.ExecParams(s.SQL, s.Params, nil, nil, nil)
	}
	results, err := conn.ExecBatch(ctx, b).ReadAll()
	if err == nil {
		for _, r := range results {
			if r.Err != nil {
				err = r.Err
				break
			}
		}
	}
	if err != nil {
		if explicitTx && !conn.IsClosed() {
			_ = EndTx(ctx, conn, false)
		}
		return nil, err
	}
	if len(results) != len(stmts)+skip {
		return nil, fmt.Errorf("pg: pipeline returned %d results for %d statements", len(results), len(stmts)+skip)
	}
	return results[skip:], nil
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

// textArray renders a text[] literal with every element quoted.
func textArray(vals []string) []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for _, r := range v {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return []byte(b.String())
}
