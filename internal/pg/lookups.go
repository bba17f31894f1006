package pg

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Lookups runs small reads of many callers, several to a round trip. Each read is what
// StreamAsCaller makes of one statement: its own implicit read-only transaction, the caller's
// setup (role, claims, session check) and then the statement, ended by a Sync. PostgreSQL runs
// the reads of one round trip one after another on one connection, and a Sync between them
// keeps each in a transaction of its own: one caller's settings end with its transaction, and
// one caller's error (a session that has ended) skips only the rest of its own read.
//
// A read that finds fewer than lanes round trips in flight goes at once, alone; one that finds
// them all busy queues, and the next round trip to start carries every read queued by then (up
// to MaxLookupBatch). So a read waits for no one when the service is quiet, and under load one
// write wakes PostgreSQL and one read wakes the service for a whole batch, where each read
// asking alone woke both every time: the round trip, not the statements, was most of what an
// authenticated download cost (see internal/storage's BenchmarkFloorDownload).
//
// The read that starts a round trip runs it (no goroutine of the Lookups' own stands between a
// request and PostgreSQL), then hands the next batch, if one has queued, to the first read in
// it. Each row handler runs on that goroutine, while its own read waits; it must copy what it
// keeps.
type Lookups struct {
	pool    *pgxpool.Pool
	lanes   int
	timeout time.Duration

	mu      sync.Mutex
	queue   []*lookup
	running int // round trips in flight, each with its leader

	reads, batches atomic.Int64 // see Stats
}

// Stats says how many reads l has run and in how many batches, each batch one round trip
// once its connection has prepared the statements: reads over batches is how many share one.
func (l *Lookups) Stats() (reads, batches int64) { return l.reads.Load(), l.batches.Load() }

// MaxLookupBatch caps the reads of one round trip: enough to carry every request a busy
// service has waiting, small enough that what is written never fills a socket buffer while
// PostgreSQL's answers wait to be read.
const MaxLookupBatch = 64

// DefaultLookupTimeout bounds one round trip of Lookups, from taking a connection of the pool
// to reading the last answer. It runs on behalf of several requests, so no one request's
// context may end it.
const DefaultLookupTimeout = 30 * time.Second

// NewLookups returns Lookups on pool with at most lanes round trips in flight (at least one),
// each bounded by timeout (0 means DefaultLookupTimeout).
func NewLookups(pool *pgxpool.Pool, lanes int, timeout time.Duration) *Lookups {
	if timeout <= 0 {
		timeout = DefaultLookupTimeout
	}
	return &Lookups{pool: pool, lanes: max(lanes, 1), timeout: timeout}
}

// lookup is one read of Lookups.
type lookup struct {
	caller Caller
	stmt   Stmt
	each   func(row [][]byte) error
	err    error
	// turn says, once, that the read is done (false: err is its outcome) or that it leads the
	// round trip of batch (true).
	turn  chan bool
	batch []*lookup
	taken bool // under Lookups.mu: in a batch, so it can no longer leave the queue
}

// Read runs stmt as c in a read-only implicit transaction of its own and hands each row of its
// answer to each, as StreamAsCaller does, sharing the round trip with other reads. stmt is
// prepared on each connection the first time it meets it. An error that each returns ends
// nothing early: the row handler of a small read has nothing to stop.
func (l *Lookups) Read(ctx context.Context, c Caller, stmt Stmt, each func(row [][]byte) error) error {
	if !knownRole(c.Role) {
		return fmt.Errorf("pg: refusing unknown role %q", c.Role)
	}
	stmt.Prepare = true
	r := &lookup{caller: c, stmt: stmt, each: each, turn: make(chan bool, 1)}
	l.mu.Lock()
	if l.running < l.lanes {
		l.running++
		r.taken = true
		r.batch = []*lookup{r}
		l.mu.Unlock()
		l.lead(ctx, r)
		return sessionError(r.err)
	}
	l.queue = append(l.queue, r)
	l.mu.Unlock()
	var lead bool
	select {
	case lead = <-r.turn:
	case <-ctx.Done():
		l.mu.Lock()
		if !r.taken {
			l.queue = slices.DeleteFunc(l.queue, func(q *lookup) bool { return q == r })
			l.mu.Unlock()
			return ctx.Err()
		}
		l.mu.Unlock()
		lead = <-r.turn // in a batch already: it answers soon, and may fall to r to run
	}
	if lead {
		l.lead(ctx, r)
	}
	return sessionError(r.err)
}

// lead runs r's batch, tells every other read of it that it is done, and passes the lead to
// the next batch, or gives up its lane when nothing is queued.
func (l *Lookups) lead(ctx context.Context, r *lookup) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.timeout)
	l.roundTrip(rctx, r.batch)
	cancel()
	for _, q := range r.batch {
		if q != r {
			q.turn <- false
		}
	}
	l.mu.Lock()
	if len(l.queue) == 0 {
		l.running--
		l.mu.Unlock()
		return
	}
	n := min(len(l.queue), MaxLookupBatch)
	next := slices.Clone(l.queue[:n])
	l.queue = slices.Delete(l.queue, 0, n)
	for _, q := range next {
		q.taken = true
	}
	l.mu.Unlock()
	next[0].batch = next
	next[0].turn <- true
}

// roundTrip runs batch on one connection of the pool and sets each read's outcome.
func (l *Lookups) roundTrip(ctx context.Context, batch []*lookup) {
	l.batches.Add(1)
	l.reads.Add(int64(len(batch)))
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		for _, r := range batch {
			r.err = err
		}
		return
	}
	defer conn.Release()
	pc := conn.Conn().PgConn()
	names := preparedOn(pc)
	// A read whose statements this connection has not prepared goes alone, through the
	// pipeline that prepares them inside its transaction, after the role switch (see
	// ExecAsCaller). So does every read through a transaction-mode pooler (names is nil),
	// where one round trip's transactions may land on different server connections.
	ready := make([]*lookup, 0, len(batch))
	for i, r := range batch {
		if l.prepared(names, r) {
			ready = append(ready, r)
			continue
		}
		var failed error // as in receive, a failing row handler stops nothing
		_, r.err = pipeline(ctx, pc, r.caller, true, false, []Stmt{r.stmt}, func(row [][]byte) error {
			if failed == nil {
				failed = r.each(row)
			}
			return nil
		})
		r.err = cmp.Or(r.err, failed)
		if pc.IsClosed() {
			for _, q := range append(ready, batch[i+1:]...) {
				q.err = r.err
			}
			return
		}
	}
	batch = ready
	if len(batch) == 0 {
		return
	}
	if err := l.send(ctx, pc, names, batch); err != nil {
		for _, r := range batch {
			r.err = err
		}
		return
	}
	if err := receive(pc, names, batch); err != nil {
		_ = pc.Close(ctx)
	}
}

// prepared says whether r's setup and statement are both prepared on the connection whose
// statements are names.
func (l *Lookups) prepared(names map[string]*pgconn.StatementDescription, r *lookup) bool {
	return names != nil && names[setupSQL(r.caller, true)] != nil && names[r.stmt.SQL] != nil
}

// send writes every read of batch, each as Bind and Execute of its setup and of its
// statement and then a Sync, and flushes them to PostgreSQL in one write. The round trip's
// deadline is the connection's until receive has read the last answer.
func (l *Lookups) send(ctx context.Context, pc *pgconn.PgConn, names map[string]*pgconn.StatementDescription, batch []*lookup) error {
	if d, ok := ctx.Deadline(); ok {
		if err := pc.Conn().SetDeadline(d); err != nil {
			return err
		}
	}
	fe := pc.Frontend()
	pp := setupParams.Get().(*[][]byte)
	for _, r := range batch {
		sql, params := setup(r.caller, true, (*pp)[:0])
		fe.SendBind(&pgproto3.Bind{PreparedStatement: names[sql].Name, Parameters: params})
		fe.SendExecute(&pgproto3.Execute{})
		fe.SendBind(&pgproto3.Bind{PreparedStatement: names[r.stmt.SQL].Name, Parameters: r.stmt.Params})
		fe.SendExecute(&pgproto3.Execute{})
		fe.SendSync(&pgproto3.Sync{})
		clear(params) // pin no request's values
		*pp = params[:0]
	}
	setupParams.Put(pp)
	if err := fe.Flush(); err != nil {
		_ = pc.Close(ctx)
		return err
	}
	return nil
}

// receive reads the answers to batch, read by read, up to each one's ReadyForQuery: the rows
// of its statement (the second) go to its row handler, an error is its outcome. It fails, and
// the reads it had not finished with it, when the connection does; then the connection is of
// no further use.
func receive(pc *pgconn.PgConn, names map[string]*pgconn.StatementDescription, batch []*lookup) error {
	defer pc.Conn().SetDeadline(time.Time{})
	for i, r := range batch {
		stmt := 0 // 0: the setup, 1: the statement
		for done := false; !done; {
			msg, err := pc.ReceiveMessage(context.Background()) // the deadline is the connection's
			if err != nil {
				for _, q := range batch[i:] {
					q.err = err
				}
				return err
			}
			switch m := msg.(type) {
			case *pgproto3.DataRow:
				if stmt == 1 && r.err == nil {
					r.err = r.each(m.Values)
				}
			case *pgproto3.CommandComplete:
				stmt++
			case *pgproto3.ErrorResponse:
				r.err = pgconn.ErrorResponseToPgError(m)
				sql := r.stmt.SQL
				if stmt == 0 {
					sql = setupSQL(r.caller, true)
				}
				forgetStale(names, r.err, sql)
			case *pgproto3.ReadyForQuery:
				done = true
			}
		}
	}
	return nil
}
