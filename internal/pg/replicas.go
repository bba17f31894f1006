package pg

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Pools is the primary and the read replicas behind it. Reads that may be served a moment late
// (REST GET and HEAD, storage's row lookups) take Read; everything else uses Primary. A replica
// whose replay is further behind than the allowed lag, or that cannot be reached, is passed over
// until it catches up, and a request that must see its own writes asks for the primary
// (ReadPrimary).
type Pools struct {
	Primary  *pgxpool.Pool
	replicas []*replica
	maxLag   time.Duration
	next     atomic.Uint64
}

type replica struct {
	pool *pgxpool.Pool
	// fresh says the last check found the replica within maxLag.
	fresh atomic.Bool
	// lag is the last measured lag in nanoseconds (-1: unreachable).
	lag atomic.Int64
}

// NewPools serves reads from replicas (possibly none) no further behind primary than maxLag.
// Replicas start out passed over; Watch measures them.
func NewPools(primary *pgxpool.Pool, replicas []*pgxpool.Pool, maxLag time.Duration) *Pools {
	p := &Pools{Primary: primary, maxLag: maxLag}
	for _, r := range replicas {
		p.replicas = append(p.replicas, &replica{pool: r})
	}
	return p
}

// Single is Pools with no replica: every read goes to pool.
func Single(pool *pgxpool.Pool) *Pools { return NewPools(pool, nil, 0) }

type primaryKey struct{}

// ReadPrimary marks ctx as needing the primary for its reads: the request follows a write of
// its own (read-your-writes) or asked for it.
func ReadPrimary(ctx context.Context) context.Context {
	return context.WithValue(ctx, primaryKey{}, true)
}

// Read returns the pool a read in ctx should use: a fresh replica in turn, else the primary.
func (p *Pools) Read(ctx context.Context) *pgxpool.Pool {
	if len(p.replicas) == 0 || ctx.Value(primaryKey{}) != nil {
		return p.Primary
	}
	n := uint64(len(p.replicas))
	start := p.next.Add(1)
	for i := range n {
		if r := p.replicas[(start+i)%n]; r.fresh.Load() {
			return r.pool
		}
	}
	return p.Primary
}

// Lags returns each replica's last measured lag, -1 for one that could not be reached.
func (p *Pools) Lags() []time.Duration {
	out := make([]time.Duration, len(p.replicas))
	for i, r := range p.replicas {
		out[i] = time.Duration(r.lag.Load())
	}
	return out
}

// Close closes the replicas' pools (the primary belongs to whoever opened it).
func (p *Pools) Close() {
	for _, r := range p.replicas {
		r.pool.Close()
	}
}

// lagSQL measures a replica against the primary's current WAL position: no lag when it has
// replayed up to it (an idle primary then keeps its replicas fresh), else the age of the last
// transaction it replayed.
const lagSQL = `select case when pg_last_wal_replay_lsn() >= $1::pg_lsn then 0
                       else coalesce(extract(epoch from now() - pg_last_xact_replay_timestamp()) * 1e9, 9e18)
                  end::bigint`

// Watch measures every replica each interval until ctx ends. Call it once, in its own goroutine;
// with no replica it returns at once.
func (p *Pools) Watch(ctx context.Context, interval time.Duration, log *slog.Logger) {
	if len(p.replicas) == 0 {
		return
	}
	for {
		p.Check(ctx, log)
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// Check measures every replica once, now.
func (p *Pools) Check(ctx context.Context, log *slog.Logger) {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var lsn string
	if err := p.Primary.QueryRow(cctx, `select pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		// Without the primary's position no replica can be judged: read from the primary, which
		// fails or recovers on its own.
		for _, r := range p.replicas {
			r.fresh.Store(false)
		}
		log.Warn("pg: replica lag unknown: primary unreachable", "err", err)
		return
	}
	for i, r := range p.replicas {
		var lag int64
		if err := r.pool.QueryRow(cctx, lagSQL, lsn).Scan(&lag); err != nil {
			r.lag.Store(-1)
			if r.fresh.Swap(false) {
				log.Warn("pg: replica unreachable, reading from the primary", "replica", i, "err", err)
			}
			continue
		}
		r.lag.Store(lag)
		fresh := time.Duration(lag) <= p.maxLag
		if was := r.fresh.Swap(fresh); was != fresh {
			log.Info("pg: replica lag", "replica", i, "lag", time.Duration(lag).String(), "serving_reads", fresh)
		}
	}
}
