package pg

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// BatchSender is what SendAsCaller sends on: *pgx.Conn or pgx.Tx.
type BatchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// batchSetupSQL applies a caller and any further settings in one fixed
// statement, so it is prepared once per connection whatever the settings.
const batchSetupSQL = `select set_config('role', $1, true), set_config('request.jwt.claims', $2, true),
  (select count(set_config(k, v, true)) from unnest($3::text[], $4::text[]) as s(k, v))`

// SendAsCaller sends c's setup followed by b's statements as one pipeline:
// one round trip and one implicit transaction, because the extended
// protocol runs everything up to the single Sync as a unit that commits
// or rolls back together. Settings are transaction-local, so nothing
// leaks to the next user of the connection. readOnly makes the
// transaction read-only (GET and HEAD).
//
// conn is a *pgx.Conn for the one-round-trip implicit transaction, or a
// pgx.Tx when the caller needs an explicit transaction (to roll back
// after inspecting the result) and only wants setup and statement
// pipelined.
//
// The setup's result is consumed here; the caller reads its own results in
// queue order and must Close them.
func SendAsCaller(ctx context.Context, conn BatchSender, c Caller, readOnly bool, b *pgx.Batch) (pgx.BatchResults, error) {
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
	full := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(b.QueuedQueries)+1)}
	full.Queue(batchSetupSQL, c.Role, claims, keys, vals)
	full.QueuedQueries = append(full.QueuedQueries, b.QueuedQueries...)
	br := conn.SendBatch(ctx, full)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return nil, fmt.Errorf("pg: set caller: %w", err)
	}
	return br, nil
}
