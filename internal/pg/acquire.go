package pg

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrAcquireTimeout is what Acquirer.Acquire returns when no connection of the pool came free
// within its timeout. It matches context.DeadlineExceeded too (errors.Is), as the timeout was
// a deadline on the wait.
var ErrAcquireTimeout error = acquireTimeout{}

type acquireTimeout struct{}

func (acquireTimeout) Error() string { return "pg: timed out acquiring a pooled connection" }

func (acquireTimeout) Is(target error) bool { return target == context.DeadlineExceeded }

// Acquirer takes connections from a pool waiting at most a fixed time for one, without a timer
// of its own per acquire. context.WithTimeout around pgxpool's Acquire armed a runtime timer on
// every request, and arming a timer that is the earliest of its P wakes the network poller (a
// futex wake-up): about 3.6 µs of the 35 µs of Go CPU an in-process REST read cost, to bound a
// wait that almost never happens, since an idle connection is taken at once.
//
// Instead each acquire gets a plain cancellable context and joins a list of acquires in
// progress, in the order they started (so in the order of their deadlines); one timer per
// Acquirer, armed for the oldest entry's deadline, cancels those past it. An acquire that takes
// an idle connection leaves the list at once; under steady traffic the timer fires about once
// per timeout, finds the entries it was armed for long gone and re-arms for the oldest one left.
type Acquirer struct {
	timeout time.Duration

	mu         sync.Mutex
	head, tail *acquireWait // acquires in progress, oldest first
	timer      *time.Timer  // fires at the head's deadline or later; nil before the first acquire
	armed      bool         // timer is pending
	arms       int          // times the timer was armed, for tests
}

// acquireWait is one acquire in progress.
type acquireWait struct {
	deadline   time.Time
	cancel     context.CancelFunc
	expired    bool // the timer cancelled it
	prev, next *acquireWait
}

var acquireWaits = sync.Pool{New: func() any { return new(acquireWait) }}

// NewAcquirer makes an Acquirer that waits at most timeout for a connection.
func NewAcquirer(timeout time.Duration) *Acquirer {
	return &Acquirer{timeout: timeout}
}

// Timeout is how long Acquire waits for a connection.
func (a *Acquirer) Timeout() time.Duration { return a.timeout }

// Acquire takes a connection from pool, waiting at most the Acquirer's timeout for one to come
// free: past it the error is ErrAcquireTimeout. When ctx ends first, the error is ctx's.
func (a *Acquirer) Acquire(ctx context.Context, pool *pgxpool.Pool) (*pgxpool.Conn, error) {
	actx, cancel := context.WithCancel(ctx)
	w := acquireWaits.Get().(*acquireWait)
	w.cancel = cancel
	a.join(w)
	conn, err := pool.Acquire(actx)
	expired := a.leave(w)
	cancel()
	*w = acquireWait{}
	acquireWaits.Put(w)
	switch {
	case err == nil:
		// Taken, even if the timer went off meanwhile: the connection is good and the caller's
		// own context governs what runs on it.
		return conn, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case expired:
		return nil, ErrAcquireTimeout
	}
	return nil, err
}

// join appends w to the acquires in progress, with its deadline, and arms the timer if it is
// not pending.
func (a *Acquirer) join(w *acquireWait) {
	a.mu.Lock()
	w.deadline = time.Now().Add(a.timeout) // under the lock: deadlines grow along the list
	w.prev = a.tail
	if a.tail != nil {
		a.tail.next = w
	} else {
		a.head = w
	}
	a.tail = w
	if !a.armed {
		a.arm(a.timeout)
	}
	a.mu.Unlock()
}

// leave takes w off the list, unless the timer did, and says whether the timer cancelled it.
func (a *Acquirer) leave(w *acquireWait) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if w.expired {
		return true
	}
	a.unlink(w)
	return false
}

func (a *Acquirer) unlink(w *acquireWait) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		a.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		a.tail = w.prev
	}
	w.prev, w.next = nil, nil
}

// arm sets the timer to fire after d; a.mu is held.
func (a *Acquirer) arm(d time.Duration) {
	a.armed = true
	a.arms++
	if a.timer == nil {
		a.timer = time.AfterFunc(d, a.expire)
		return
	}
	a.timer.Reset(d)
}

// expire cancels the acquires past their deadline and re-arms the timer for the oldest one
// left, if any.
func (a *Acquirer) expire() {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	for w := a.head; w != nil && !w.deadline.After(now); w = a.head {
		a.unlink(w)
		w.expired = true
		w.cancel()
	}
	a.armed = false
	if a.head != nil {
		a.arm(a.head.deadline.Sub(now))
	}
}
