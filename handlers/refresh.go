package handlers

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"masthead/internal/client"
)

// recentTTL is how long a refresh's result is handed to other requests that arrive with the
// same, now rotated, refresh token: htmx fires several requests at once, each carrying the
// cookie the browser had before the first answer replaced it.
const recentTTL = 30 * time.Second

// refresher makes at most one refresh per refresh token in this process: concurrent requests
// wait for the one in flight and share its result, and later stragglers within recentTTL get
// the same result. Without it, parallel requests would present the same token twice and rely
// on the service's reuse interval; with several instances that interval still covers them.
type refresher struct {
	api *client.Client
	now func() time.Time

	mu       sync.Mutex
	inflight map[[32]byte]*refreshCall
	recent   map[[32]byte]refreshResult
}

type refreshCall struct {
	done chan struct{}
	res  refreshResult
}

type refreshResult struct {
	sess *client.Session
	err  error
	at   time.Time
}

func newRefresher(api *client.Client, now func() time.Time) *refresher {
	return &refresher{api: api, now: now,
		inflight: map[[32]byte]*refreshCall{}, recent: map[[32]byte]refreshResult{}}
}

// Refresh exchanges refreshToken for a new session. Tokens are keyed by hash, so the maps hold
// no usable token.
func (r *refresher) Refresh(ctx context.Context, refreshToken string) (*client.Session, error) {
	key := sha256.Sum256([]byte(refreshToken))
	now := r.now()
	r.mu.Lock()
	for k, v := range r.recent {
		if now.Sub(v.at) > recentTTL {
			delete(r.recent, k)
		}
	}
	if res, ok := r.recent[key]; ok && res.err == nil {
		r.mu.Unlock()
		return res.sess, nil
	}
	if call, ok := r.inflight[key]; ok {
		r.mu.Unlock()
		select {
		case <-call.done:
			return call.res.sess, call.res.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	call := &refreshCall{done: make(chan struct{})}
	r.inflight[key] = call
	r.mu.Unlock()

	// The refresh outlives a cancelled request: others may be waiting on it, and a rotation the
	// service made but nobody stored would leave every waiting tab signed out.
	sess, err := r.api.Refresh(context.WithoutCancel(ctx), refreshToken)
	call.res = refreshResult{sess: sess, err: err, at: r.now()}

	r.mu.Lock()
	delete(r.inflight, key)
	if err == nil {
		r.recent[key] = call.res
	}
	r.mu.Unlock()
	close(call.done)
	return sess, err
}
