// Package docs holds Masthead's design notes beyond the README, and the measurements they
// quote: BenchmarkCapacity is where docs/scale.md's per-request costs come from.
package docs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"masthead/internal/config"
	"masthead/internal/pg/pgtest"
	"masthead/internal/seed"
	"masthead/internal/server/servertest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// BenchmarkCapacity serves the demo data (seed) with the whole service on loopback HTTP and
// measures, per request, the CPU time of this Go process (the service and the load generator
// together) and of the PostgreSQL server (the postmaster's children: the backends the pool
// holds), with 16 concurrent clients signed in as one editor:
//
//	go test ./docs -run '^$' -bench Capacity -benchtime 2000x
//
// healthz is the floor: HTTP on both ends and the access log, no database. transition is one
// workflow RPC (submit_for_review and withdraw alternating, each client on its own draft).
func BenchmarkCapacity(b *testing.B) {
	env := servertest.New(b, func(c *config.Config) {
		c.PoolShare = 64 // one user drives all 16 clients here; the share is per user
	})
	if _, err := seed.Run(b.Context(), env.DB.OwnerURL, seed.Options{MediaDir: env.Config.StorageDir}); err != nil {
		b.Fatal(err)
	}
	cl := &client{base: env.URL, key: env.Key, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	cl.token = cl.signIn(b, "editor@northwind.test", seed.DefaultPassword)

	var pubs []struct {
		ID string `json:"id"`
	}
	cl.getJSON(b, "/rest/v1/publications?select=id&status=eq.published&order=id&limit=1", &pubs)
	var media []struct {
		Path  string `json:"storage_path"`
		Bytes int    `json:"bytes"`
	}
	cl.getJSON(b, "/rest/v1/media?select=storage_path,bytes&order=bytes.desc&limit=1", &media)
	var projects []struct {
		ID string `json:"id"`
	}
	cl.getJSON(b, "/rest/v1/projects?select=id&slug=eq.northwind", &projects)
	if len(pubs) != 1 || len(media) != 1 || len(projects) != 1 {
		b.Fatal("the seed made no published publication, media or northwind project")
	}
	const clients = 16
	drafts := make([]string, clients)
	for i := range drafts {
		var d struct {
			ID string `json:"id"`
		}
		body := fmt.Sprintf(`{"project_id":%q,"title":"Capacity draft %d","summary":"s","body":"b"}`, projects[0].ID, i)
		cl.postJSON(b, "/rest/v1/rpc/create_draft", body, &d)
		drafts[i] = d.ID
	}
	// Which way each client's draft goes next: submitted drafts are withdrawn and back.
	var submitted [clients]bool

	workloads := []struct {
		name string
		req  func(worker int) (method, path, body string)
	}{
		{"healthz", func(int) (string, string, string) { return "GET", "/healthz", "" }},
		{"queue", func(int) (string, string, string) {
			return "GET", "/rest/v1/publications?status=eq.reviewing&order=created_at.desc&select=id,title,status,scheduled_for", ""
		}},
		{"detail", func(int) (string, string, string) {
			return "GET", "/rest/v1/publications?select=*,promos(*),publication_media(position,media(*))&id=eq." + pubs[0].ID, ""
		}},
		{"download_" + strconv.Itoa(media[0].Bytes/1000) + "kB", func(int) (string, string, string) {
			return "GET", "/storage/v1/object/authenticated/media/" + media[0].Path, ""
		}},
		{"transition", func(w int) (string, string, string) {
			fn, body := "submit_for_review", fmt.Sprintf(`{"publication_id":%q,"note":"capacity"}`, drafts[w])
			if submitted[w] {
				fn = "withdraw"
			}
			submitted[w] = !submitted[w]
			return "POST", "/rest/v1/rpc/" + fn, body
		}},
	}
	for _, wl := range workloads {
		b.Run(wl.name, func(b *testing.B) {
			var next atomic.Int64
			var wg sync.WaitGroup
			pg0, self0 := postgresCPU(b), selfCPU()
			start := time.Now()
			b.ResetTimer()
			for w := range clients {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						method, path, body := wl.req(w)
						cl.do(b, method, path, body, nil)
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			wall := time.Since(start)
			pg, self := postgresCPU(b)-pg0, selfCPU()-self0
			n := float64(b.N)
			b.ReportMetric(n/wall.Seconds(), "req/s")
			b.ReportMetric(float64(self.Microseconds())/n, "go-cpu-µs/req")
			b.ReportMetric(float64(pg.Microseconds())/n, "pg-cpu-µs/req")
			b.ReportMetric(float64((self+pg).Microseconds())/n, "cpu-µs/req")
		})
	}
}

type client struct {
	base, key, token string
	http             *http.Client
}

func (c *client) do(b *testing.B, method, path, body string, into any) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		b.Error(err)
		return
	}
	req.Header.Set("apikey", c.key)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/vnd.pgrst.object+json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		b.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
		return
	}
	if into != nil {
		if err := json.Unmarshal(data, into); err != nil {
			b.Errorf("%s: %v", path, err)
		}
	}
}

func (c *client) getJSON(b *testing.B, path string, into any) { c.do(b, "GET", path, "", into) }
func (c *client) postJSON(b *testing.B, path, body string, into any) {
	c.do(b, "POST", path, body, into)
}

func (c *client) signIn(b *testing.B, email, password string) string {
	req, _ := http.NewRequest("POST", c.base+"/auth/v1/token?grant_type=password",
		bytes.NewReader(fmt.Appendf(nil, `{"email":%q,"password":%q}`, email, password)))
	req.Header.Set("apikey", c.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		b.Fatalf("sign in: %d %v", resp.StatusCode, err)
	}
	return tok.AccessToken
}

// selfCPU is the user and system CPU time of this process so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTick is the unit of /proc/<pid>/stat's CPU times: USER_HZ, 100 on Linux.
const clockTick = 10 * time.Millisecond

// postgresCPU is the CPU time of the PostgreSQL server this process started (pgtest's private
// cluster): the postmaster and every process it forked that is still alive. The pool keeps
// its backends for the whole run, so a difference of two readings is what the run cost.
func postgresCPU(b *testing.B) time.Duration {
	procs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		b.Fatal(err)
	}
	type stat struct {
		ppid int
		cpu  time.Duration
	}
	all := map[int]stat{}
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // the process ended
		}
		s := string(data)
		// pid (comm) state ppid … utime(14) stime(15): comm may hold spaces, so cut at ')'.
		closing := strings.LastIndexByte(s, ')')
		if closing < 0 {
			continue
		}
		fields := strings.Fields(s[closing+1:])
		pid, _ := strconv.Atoi(strings.Fields(s)[0])
		ppid, _ := strconv.Atoi(fields[1])
		ut, _ := strconv.Atoi(fields[11])
		st, _ := strconv.Atoi(fields[12])
		all[pid] = stat{ppid: ppid, cpu: time.Duration(ut+st) * clockTick}
	}
	var total time.Duration
	self := os.Getpid()
	for pid, s := range all {
		if s.ppid == self {
			// A child of this process: the postmaster. Count it and its children.
			total += s.cpu
			for _, c := range all {
				if c.ppid == pid {
					total += c.cpu
				}
			}
		}
	}
	if total == 0 {
		b.Fatal("no PostgreSQL server among this process's children")
	}
	return total
}
