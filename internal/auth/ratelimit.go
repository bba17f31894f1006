package auth

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"masthead/internal/metrics"
)

// Limit is Count requests per Per with bursts up to Burst; the zero value means no limit.
type Limit struct {
	Count int
	Per   time.Duration
	Burst int
}

// limiter is a token bucket per key (client IP, email). Buckets that have refilled completely
// carry no information and are dropped on the next sweep, so memory follows active clients.
type limiter struct {
	limit rate.Limit
	burst int
	every time.Duration // sweep interval: the time to refill a bucket completely

	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
	lastSweep time.Time

	metrics *metrics.Metrics // counts refusals as name; nil counts nothing
	name    string
}

func newLimiter(l Limit) *limiter {
	if l.Count <= 0 || l.Per <= 0 {
		return nil
	}
	burst := max(l.Burst, 1)
	lim := rate.Limit(float64(l.Count) / l.Per.Seconds())
	return &limiter{
		limit: lim, burst: burst, buckets: map[string]*rate.Limiter{},
		every: time.Duration(float64(burst) / float64(lim) * float64(time.Second)),
	}
}

// counted makes l count its refusals in m as the limit name; a nil l (no limit) stays nil.
func (l *limiter) counted(m *metrics.Metrics, name string) *limiter {
	if l != nil {
		l.metrics, l.name = m, name
	}
	return l
}

// allow takes one token for key, or says how long until one is available.
func (l *limiter) allow(key string, now time.Time) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > l.every {
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(l.burst) {
				delete(l.buckets, k)
			}
		}
		l.lastSweep = now
	}
	b, ok := l.buckets[key]
	if !ok {
		b = rate.NewLimiter(l.limit, l.burst)
		l.buckets[key] = b
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		l.metrics.RateLimited(l.name)
		return false, d
	}
	return true, 0
}
