package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"masthead/internal/config"
	"masthead/internal/server/servertest"
)

// serveSlow starts the real service (Serve, with its connection cap and body guard) with
// tight body limits, and returns its address.
func serveSlow(t *testing.T, change func(*config.Config)) (*servertest.Env, string) {
	t.Helper()
	e := servertest.New(t, func(c *config.Config) {
		c.BodyIdleTimeout = 300 * time.Millisecond
		c.BodyMinRate = 2000
		c.RequestTimeout = 20 * time.Second
		if change != nil {
			change(c)
		}
	})
	return e, strings.TrimPrefix(e.Loopback(t), "http://")
}

// trickle opens a connection and sends a sign-in whose body comes a byte per gap, until the
// server answers and closes; it returns when that happened and the answer, if any, as it came
// (status line, header and body).
func trickle(t *testing.T, addr, key string, gap time.Duration, stop <-chan struct{}) (time.Duration, string) {
	return trickleTo(t, addr, "POST /auth/v1/token?grant_type=password", "application/json", "apikey: "+key, gap, stop)
}

// trickleTo is trickle for a request of another method, path and content type, with another
// header line.
func trickleTo(t *testing.T, addr, methodPath, contentType, header string, gap time.Duration, stop <-chan struct{}) (time.Duration, string) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "%s HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: %s\r\nContent-Length: 100000\r\n\r\n{", methodPath, header, contentType)
	answered := make(chan string, 1)
	go func() {
		// Everything until the server closes the connection.
		answer, err := io.ReadAll(conn)
		if err != nil {
			answer = append(answer, " (not closed: "+err.Error()+")"...)
		}
		answered <- string(answer)
	}()
	tick := time.NewTicker(gap)
	defer tick.Stop()
	giveUp := time.After(15 * time.Second)
	for {
		select {
		case <-giveUp:
			return time.Since(start), "not closed: still open after 15 s"
		case line := <-answered:
			return time.Since(start), strings.TrimSpace(line)
		case <-stop:
			return time.Since(start), "still open"
		case <-tick.C:
			conn.SetWriteDeadline(time.Now().Add(time.Second))
			conn.Write([]byte(" ")) // an error here means the server closed it; the reader says so
		}
	}
}

// TestTrickledBodyIsCut: a body trickled a byte at a time is cut long before a person would
// notice, with a 408 in the surface's error shape that names the limits, and the connection
// closed; a normal sign-in answers at once; 500 such connections at the same time do not stop
// a normal client.
func TestTrickledBodyIsCut(t *testing.T) {
	t.Parallel()
	e, addr := serveSlow(t, nil)
	key, editor := "apikey: "+e.Key, "apikey: "+e.Key+"\r\nAuthorization: Bearer "+uploadEditor(t, e, addr)
	for _, tc := range []struct{ surface, request, contentType, header, shape string }{
		{"auth", "POST /auth/v1/token?grant_type=password", "application/json", key,
			`"code":408,"error_code":"request_timeout","msg":"the request body arrived too slowly`},
		{"rest", "POST /rest/v1/promos", "application/json", key,
			`{"code":"MH003","details":null,"hint":"Send the body without pauses.","message":"the request body arrived too slowly`},
		{"storage", "POST /storage/v1/object/media/big/trickle.png", "image/png", editor,
			`{"error":"Request Timeout","message":"the request body arrived too slowly`},
	} {
		took, answer := trickleTo(t, addr, tc.request, tc.contentType, tc.header, 100*time.Millisecond, nil)
		head, body, _ := strings.Cut(answer, "\r\n\r\n")
		if took > 5*time.Second || !strings.HasPrefix(head, "HTTP/1.1 408 ") || !strings.Contains(strings.ToLower(head), "\r\nconnection: close") ||
			!strings.Contains(body, tc.shape) || !strings.Contains(body, "MASTHEAD_BODY_IDLE_TIMEOUT") || !strings.Contains(body, "MASTHEAD_BODY_MIN_RATE") {
			t.Fatalf("%s: a trickled body after %s was answered\n%s\nwant a 408 in the surface's shape (%s) naming the limits, then the connection closed",
				tc.surface, took, answer, tc.shape)
		}
		t.Logf("%s: a trickled body was cut after %s", tc.surface, took.Round(time.Millisecond))
	}

	// 500 at once, each a byte every 100 ms; a normal client meanwhile.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var worst time.Duration
	for range 500 {
		wg.Go(func() {
			d, _ := trickle(t, addr, e.Key, 100*time.Millisecond, stop)
			mu.Lock()
			worst = max(worst, d)
			mu.Unlock()
		})
	}
	start := time.Now()
	res, body := get(t, http.MethodGet, "http://"+addr+"/healthz", nil, nil)
	if res.StatusCode != http.StatusOK {
		t.Errorf("healthz while 500 bodies trickle: %d %s", res.StatusCode, body)
	}
	res, _ = get(t, http.MethodPost, "http://"+addr+"/auth/v1/token?grant_type=password",
		map[string]string{"apikey": e.Key, "Content-Type": "application/json"}, strings.NewReader(`{"email":"x@y.test","password":"x"}`))
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("a normal sign-in while 500 bodies trickle: %d", res.StatusCode)
	}
	normal := time.Since(start)
	wg.Wait()
	close(stop)
	if normal > 5*time.Second || worst > 10*time.Second {
		t.Errorf("normal client took %s; the slowest trickle was cut after %s", normal, worst)
	}
	t.Logf("with 500 trickling connections: a normal client answered in %s; every trickle cut within %s", normal.Round(time.Millisecond), worst.Round(time.Millisecond))
}

// TestRequestCeiling: a body that keeps arriving, fast enough for the body guard, is still cut
// at MASTHEAD_REQUEST_TIMEOUT, with a 408 naming that setting.
func TestRequestCeiling(t *testing.T) {
	t.Parallel()
	e, addr := serveSlow(t, func(c *config.Config) {
		c.RequestTimeout = time.Second
		c.BodyMinRate = 1 // a byte every 100 ms keeps ahead of it
	})
	took, answer := trickle(t, addr, e.Key, 100*time.Millisecond, nil)
	head, body, _ := strings.Cut(answer, "\r\n\r\n")
	if took < time.Second || took > 5*time.Second || !strings.HasPrefix(head, "HTTP/1.1 408 ") ||
		!strings.Contains(body, `"msg":"the request took longer than this service allows, 1s (MASTHEAD_REQUEST_TIMEOUT)"`) {
		t.Fatalf("a body still arriving after the request's ceiling, after %s:\n%s\nwant a 408 naming MASTHEAD_REQUEST_TIMEOUT after 1 s", took, answer)
	}
}

// uploadEditor makes an editor of a project "big" and returns their access token, signed in
// at addr.
func uploadEditor(t *testing.T, e *servertest.Env, addr string) string {
	t.Helper()
	own := e.DB.Owner(t)
	bg := context.Background()
	u := e.CreateUser(t, "editor@upload.test", "a long password")
	var project string
	if err := own.QueryRow(bg, `insert into projects (slug, name) values ('big', 'Big') returning id`).Scan(&project); err != nil {
		t.Fatal(err)
	}
	if _, err := own.Exec(bg, `insert into project_members (project_id, user_id, role) values ($1, $2, 'editor')`, project, u.ID); err != nil {
		t.Fatal(err)
	}
	return accessToken(t, "http://"+addr, e.Key, "editor@upload.test", "a long password")
}

// TestLargeUploadAtRealisticRate: a 50 MB image sent at a steady few MB/s is stored, the body
// guard does not mistake it for a trickle.
func TestLargeUploadAtRealisticRate(t *testing.T) {
	t.Parallel()
	e, addr := serveSlow(t, nil)
	tok := uploadEditor(t, e, addr)

	// Noise does not compress: a 3700×3500 picture is a PNG of about 50 MB.
	img := image.NewNRGBA(image.Rect(0, 0, 3700, 3500))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.UintN(256))
	}
	img.Set(0, 0, color.NRGBA{A: 255})
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 50<<20 || buf.Len() < 45<<20 {
		t.Fatalf("test image is %d bytes", buf.Len())
	}
	size := buf.Len()
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/storage/v1/object/media/big/huge.png", &paced{r: &buf, rate: 25 << 20})
	req.ContentLength = int64(size)
	req.Header.Set("apikey", e.Key)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "image/png")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a %d MB upload at 25 MB/s: %d %s", size>>20, resp.StatusCode, b)
	}
	t.Logf("%d MB uploaded at a paced 25 MB/s in %s", size>>20, time.Since(start).Round(time.Millisecond))
}

// paced reads from r at about rate bytes a second, as a client on a real link sends.
type paced struct {
	r     io.Reader
	rate  int
	start time.Time
	n     int
}

func (p *paced) Read(b []byte) (int, error) {
	if p.start.IsZero() {
		p.start = time.Now()
	}
	if due := p.start.Add(time.Duration(float64(p.n) / float64(p.rate) * float64(time.Second))); time.Until(due) > 0 {
		time.Sleep(time.Until(due)) // the link's pace, not synchronisation
	}
	n, err := p.r.Read(b[:min(len(b), 64<<10)])
	p.n += n
	return n, err
}

// TestMaxConnections: MASTHEAD_MAX_CONNECTIONS caps the connections one instance holds open. With
// the cap held by two idle keep-alive connections, a third client is not answered; once one of
// them closes, it is.
func TestMaxConnections(t *testing.T) {
	t.Parallel()
	_, addr := serveSlow(t, func(c *config.Config) { c.MaxConnections = 2 })
	held := make([]net.Conn, 2)
	for i := range held {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// Answered: the server has taken the connection, which stays open (keep-alive).
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("connection %d: %v %v", i, res, err)
		}
		res.Body.Close()
		held[i] = conn
	}
	third := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if res, err := third.Get("http://" + addr + "/healthz"); err == nil {
		res.Body.Close()
		t.Fatalf("a third connection was answered (%d) while two held the cap", res.StatusCode)
	}
	held[0].Close()
	third.Timeout = 10 * time.Second
	res, err := third.Get("http://" + addr + "/healthz")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("once a connection closed: %v %v", res, err)
	}
	res.Body.Close()
}
