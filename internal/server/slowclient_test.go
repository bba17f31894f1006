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

// trickle opens a connection and sends a request whose body comes a byte per gap, until the
// server answers or closes; it returns when that happened and the status line, if any.
func trickle(t *testing.T, addr, key string, gap time.Duration, stop <-chan struct{}) (time.Duration, string) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /auth/v1/token?grant_type=password HTTP/1.1\r\nHost: x\r\napikey: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", key)
	answered := make(chan string, 1)
	go func() {
		// The status line, then everything until the server closes the connection.
		br := bufio.NewReader(conn)
		line, _ := br.ReadString('\n')
		if _, err := io.Copy(io.Discard, br); err != nil {
			line += " (not closed: " + err.Error() + ")"
		}
		answered <- line
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

// TestTrickledBodyIsCut: a body trickled a byte at a time is cut (408, or the connection
// closed) long before a person would notice, while a normal sign-in answers at once; 500 such
// connections at the same time do not stop a normal client.
func TestTrickledBodyIsCut(t *testing.T) {
	t.Parallel()
	e, addr := serveSlow(t, nil)
	took, status := trickle(t, addr, e.Key, 100*time.Millisecond, nil)
	// Cut: the connection is closed (after whatever 4xx the surface gave the broken body).
	if took > 5*time.Second || strings.Contains(status, "not closed") || !(status == "" || strings.Contains(status, " 4")) {
		t.Fatalf("a trickled body: %q after %s, want the connection closed within 5 s", status, took)
	}
	t.Logf("a trickled body was cut after %s (%q)", took.Round(time.Millisecond), status)

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

// TestLargeUploadAtRealisticRate: a 50 MB image sent at a steady few MB/s is stored, the body
// guard does not mistake it for a trickle.
func TestLargeUploadAtRealisticRate(t *testing.T) {
	t.Parallel()
	e, addr := serveSlow(t, nil)
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
	res, body := get(t, http.MethodPost, "http://"+addr+"/auth/v1/token?grant_type=password",
		map[string]string{"apikey": e.Key, "Content-Type": "application/json"}, strings.NewReader(`{"email":"editor@upload.test","password":"a long password"}`))
	tok := string(body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("sign in: %d %s", res.StatusCode, body)
	}
	tok = tok[strings.Index(tok, `"access_token":"`)+16:]
	tok = tok[:strings.IndexByte(tok, '"')]

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
