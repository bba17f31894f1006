package auth_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"masthead/internal/config"
)

// Benchmarks run against the real service over HTTP and a real database, with production's
// bcrypt cost (10). Run: go test -run '^$' -bench . -benchmem ./internal/auth

func benchEnv(b *testing.B) *env {
	return newEnv(b, func(c *config.Config) { c.BcryptCost = bcrypt.DefaultCost })
}

// reportCPU adds "cpu-ms/op": the CPU time this process (client and service, not PostgreSQL)
// spent per operation. Unlike ns/op it does not grow when other work shares the machine, so
// 1000/(cpu-ms/op) is the per-core ceiling in operations per second.
func reportCPU(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() {
		b.ReportMetric(float64(cpu()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
}

// BenchmarkBcryptCompare is the floor of a password sign-in: one comparison at cost 10.
func BenchmarkBcryptCompare(b *testing.B) {
	hash, _ := bcrypt.GenerateFromPassword([]byte("correct horse battery"), bcrypt.DefaultCost)
	defer reportCPU(b)()
	for b.Loop() {
		_ = bcrypt.CompareHashAndPassword(hash, []byte("correct horse battery"))
	}
}

// BenchmarkPasswordGrant is one sign-in after another: ns/op is the per-core cost, so one
// core signs in at most 1e9/(ns/op) users per second.
func BenchmarkPasswordGrant(b *testing.B) {
	e := benchEnv(b)
	defer reportCPU(b)()
	for b.Loop() {
		e.signIn(b, e.user.Email, e.user.Password)
	}
}

// BenchmarkPasswordGrantParallel uses every core: the machine's sign-in ceiling.
func BenchmarkPasswordGrantParallel(b *testing.B) {
	e := benchEnv(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e.signIn(b, e.user.Email, e.user.Password)
		}
	})
}

// BenchmarkRefreshGrant rotates one session's token again and again.
func BenchmarkRefreshGrant(b *testing.B) {
	e := benchEnv(b)
	token := e.signIn(b, e.user.Email, e.user.Password).refresh
	defer reportCPU(b)()
	for b.Loop() {
		res := e.refresh(b, token)
		if res.status != http.StatusOK {
			b.Fatalf("refresh: %d %s", res.status, res.raw)
		}
		token = res.body["refresh_token"].(string)
	}
}

// BenchmarkRefreshGrantParallel rotates many sessions at once (one per goroutine).
func BenchmarkRefreshGrantParallel(b *testing.B) {
	e := benchEnv(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		token := e.signIn(b, e.user.Email, e.user.Password).refresh
		for pb.Next() {
			res := e.refresh(b, token)
			if res.status != http.StatusOK {
				b.Errorf("refresh: %d %s", res.status, res.raw)
				return
			}
			token = res.body["refresh_token"].(string)
		}
	})
}

// BenchmarkVerify is the offline cost every authenticated request pays: ES256 signature and
// claims, no database.
func BenchmarkVerify(b *testing.B) {
	e := newEnv(b, nil)
	token := e.signIn(b, e.user.Email, e.user.Password).access
	v := e.Server.Auth().Verifier()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := v.Verify(token); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCaller is what REST, storage and MCP pay per request: Verify plus the session
// check in the database.
func BenchmarkCaller(b *testing.B) {
	e := newEnv(b, nil)
	token := e.signIn(b, e.user.Email, e.user.Password).access
	svc := e.Server.Auth()
	var failed atomic.Bool
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := httptest.NewRequest(http.MethodGet, "/rest/v1/publications", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		for pb.Next() {
			if _, err := svc.Caller(r); err != nil && !failed.Swap(true) {
				b.Error(err)
			}
		}
	})
}
