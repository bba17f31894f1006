package metrics

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// poolCollector reads a pgx pool's statistics at each scrape: gauges for the connections as
// they are now, counters for what the pool has done since it opened. Acquires that found no
// idle connection had to wait; their count and time tell a pool that is too small.
type poolCollector struct {
	stat func() *pgxpool.Stat

	acquired, idle, total, constructing, max               *prometheus.Desc
	acquires, acquireSeconds, waits, waitSeconds, canceled *prometheus.Desc
	newConns, lifetimeDestroyed, idleDestroyed             *prometheus.Desc
}

func newPoolCollector(name string, stat func() *pgxpool.Stat) *poolCollector {
	labels := prometheus.Labels{"pool": name}
	desc := func(metric, help string) *prometheus.Desc {
		return prometheus.NewDesc("masthead_db_pool_"+metric, help, nil, labels)
	}
	return &poolCollector{
		stat:              stat,
		acquired:          desc("acquired_connections", "Connections in use by a request, the scheduler or a listener."),
		idle:              desc("idle_connections", "Open connections waiting in the pool."),
		total:             desc("total_connections", "Open connections, acquired, idle and being opened."),
		constructing:      desc("constructing_connections", "Connections being opened."),
		max:               desc("max_connections", "Most connections the pool opens."),
		acquires:          desc("acquires_total", "Connections handed out."),
		acquireSeconds:    desc("acquire_seconds_total", "Time spent handing out connections, waits included."),
		waits:             desc("acquire_waits_total", "Acquires that found no idle connection and waited for one to open or come back."),
		waitSeconds:       desc("acquire_wait_seconds_total", "Time acquires spent waiting for a connection."),
		canceled:          desc("canceled_acquires_total", "Acquires given up because their request ended first."),
		newConns:          desc("new_connections_total", "Connections opened."),
		lifetimeDestroyed: desc("max_lifetime_destroyed_total", "Connections closed for reaching their maximum lifetime."),
		idleDestroyed:     desc("max_idle_destroyed_total", "Connections closed for idling too long."),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.acquired, c.idle, c.total, c.constructing, c.max, c.acquires,
		c.acquireSeconds, c.waits, c.waitSeconds, c.canceled, c.newConns, c.lifetimeDestroyed, c.idleDestroyed} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stat()
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(c.acquired, float64(s.AcquiredConns()))
	gauge(c.idle, float64(s.IdleConns()))
	gauge(c.total, float64(s.TotalConns()))
	gauge(c.constructing, float64(s.ConstructingConns()))
	gauge(c.max, float64(s.MaxConns()))
	counter(c.acquires, float64(s.AcquireCount()))
	counter(c.acquireSeconds, s.AcquireDuration().Seconds())
	counter(c.waits, float64(s.EmptyAcquireCount()))
	counter(c.waitSeconds, s.EmptyAcquireWaitTime().Seconds())
	counter(c.canceled, float64(s.CanceledAcquireCount()))
	counter(c.newConns, float64(s.NewConnsCount()))
	counter(c.lifetimeDestroyed, float64(s.MaxLifetimeDestroyCount()))
	counter(c.idleDestroyed, float64(s.MaxIdleDestroyCount()))
}
