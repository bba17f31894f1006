package pg

// Arms is how many times a's timer has been armed.
func (a *Acquirer) Arms() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.arms
}

// Waiting is how many acquires a has in progress.
func (a *Acquirer) Waiting() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for w := a.head; w != nil; w = w.next {
		n++
	}
	return n
}

// Queued is how many reads wait in l's queue, in no round trip yet.
func (l *Lookups) Queued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue)
}
