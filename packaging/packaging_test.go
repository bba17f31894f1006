// Package packaging holds Masthead's deployment files (the container image, the systemd unit,
// the database roles, …) and the tests that keep the image and the unit working as far as this
// machine can check: no Docker engine runs here, so the
// Dockerfile's build stage is run as the plain `go build` it contains (its flags read from the
// file, so the two cannot drift), and its HEALTHCHECK command runs against a live service; the
// unit goes through `systemd-analyze verify` and `security`, the sysusers file through
// `systemd-sysusers --dry-run`. roles.sql is exercised by cmd/masthead's backup test.
package packaging

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"masthead/internal/pg/pgtest"
	"masthead/internal/server/servertest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// instruction is one Dockerfile instruction with its continuation lines joined.
type instruction struct {
	cmd  string // FROM, RUN, … in upper case
	args string
}

// stage is one FROM … section; global holds the ARGs before the first FROM.
type stage struct {
	from, name string
	body       []instruction
}

func parseDockerfile(t *testing.T, path string) (global map[string]string, stages []*stage) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	global = map[string]string{}
	var cur strings.Builder
	var ins []instruction
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if strings.HasPrefix(line, "#") { // a comment inside a continued instruction
			continue
		}
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`) + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		ins = append(ins, instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, in := range ins {
		switch {
		case in.cmd == "FROM":
			words := strings.Fields(in.args)
			s := &stage{from: os.Expand(words[0], func(k string) string { return global[k] })}
			if len(words) == 3 && strings.EqualFold(words[1], "AS") {
				s.name = words[2]
			}
			stages = append(stages, s)
		case len(stages) == 0 && in.cmd == "ARG":
			k, v, _ := strings.Cut(in.args, "=")
			global[k] = v
		case len(stages) > 0:
			stages[len(stages)-1].body = append(stages[len(stages)-1].body, in)
		}
	}
	return global, stages
}

// vars are the ARG defaults and ENV values a stage has set by the end.
func (s *stage) vars(t *testing.T) map[string]string {
	t.Helper()
	v := map[string]string{}
	for _, in := range s.body {
		switch in.cmd {
		case "ARG":
			k, val, _ := strings.Cut(in.args, "=")
			v[k] = val
		case "ENV":
			for _, w := range shellWords(t, in.args, v) {
				k, val, ok := strings.Cut(w, "=")
				if !ok {
					t.Fatalf("ENV %q: use the KEY=value form", in.args)
				}
				v[k] = val
			}
		}
	}
	return v
}

func (s *stage) all(cmd string) []string {
	var out []string
	for _, in := range s.body {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

// shellWords splits a command line as sh does for the simple lines a Dockerfile holds: words
// separated by blanks, single and double quotes, and ${VAR} / $VAR expanded from vars.
func shellWords(t *testing.T, line string, vars map[string]string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord := false
	expand := func(s string) string { return os.Expand(s, func(k string) string { return vars[k] }) }
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				t.Fatalf("unclosed %c in %q", c, line)
			}
			part := line[i+1 : i+1+end]
			if c == '"' {
				part = expand(part)
			}
			w.WriteString(part)
			inWord = true
			i += end + 1
		case c == '$':
			j := i + 1
			if j < len(line) && line[j] == '{' {
				j = i + strings.IndexByte(line[i:], '}') + 1
			} else {
				for j < len(line) && (line[j] == '_' || line[j] >= 'A' && line[j] <= 'Z' || line[j] >= 'a' && line[j] <= 'z' || line[j] >= '0' && line[j] <= '9') {
					j++
				}
			}
			w.WriteString(expand(line[i:j]))
			inWord = true
			i = j - 1
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// dockerBuild is the build stage's `go build` command: its environment assignments, its
// arguments, and the path it writes the binary to inside the image.
type dockerBuild struct {
	env  []string
	args []string // after "go"
	out  string
}

func findBuild(t *testing.T, s *stage) dockerBuild {
	t.Helper()
	vars := s.vars(t)
	var found []dockerBuild
	for _, run := range s.all("RUN") {
		if !strings.Contains(run, "go build") {
			continue
		}
		if strings.ContainsAny(run, ";|") || strings.Contains(run, "&&") {
			t.Fatalf("the build RUN %q chains commands; keep `go build` alone on its line so this test can run it", run)
		}
		words := shellWords(t, run, vars)
		var b dockerBuild
		for k, v := range vars {
			b.env = append(b.env, k+"="+v)
		}
		i := 0
		for ; i < len(words) && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(words[i]); i++ {
			b.env = append(b.env, words[i])
		}
		if i+1 >= len(words) || words[i] != "go" || words[i+1] != "build" {
			t.Fatalf("build RUN %q: want [VAR=value …] go build …", run)
		}
		b.args = words[i+1:]
		for j, a := range b.args {
			if a == "-o" && j+1 < len(b.args) {
				b.out = b.args[j+1]
			}
		}
		found = append(found, b)
	}
	if len(found) != 1 {
		t.Fatalf("want one `go build` in the build stage, found %d", len(found))
	}
	return found[0]
}

// TestPackaging builds the binary exactly as the image's build stage does (its ARG defaults
// for the version, its environment, its flags) and checks what the image relies on: a static
// binary (no dynamic loader, no shared libraries, as distroless/static has neither), cgo off,
// the version stamped by -ldflags, the build stage's Go matching go.mod's, the runtime stage
// running as a non-root user with the binary where its HEALTHCHECK, ENTRYPOINT and COPY say,
// and the HEALTHCHECK command itself, run with the runtime stage's environment, passing
// against a live service's /readyz and failing when nothing answers. The systemd unit is then
// checked with that binary as its ExecStart.
func TestPackaging(t *testing.T) {
	global, stages := parseDockerfile(t, "Dockerfile")
	if len(stages) < 2 || stages[0].name == "" {
		t.Fatalf("want a named build stage and a runtime stage, got %d stages", len(stages))
	}
	buildStage, final := stages[0], stages[len(stages)-1]
	b := findBuild(t, buildStage)
	if !contains(b.env, "CGO_ENABLED=0") {
		t.Errorf("the build sets %v; want CGO_ENABLED=0 for a static binary", b.env)
	}
	goMod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(goMod)
	if goLine == nil || !strings.HasPrefix(buildStage.from, "golang:"+string(goLine[1])) {
		t.Errorf("build stage FROM %s (GO_VERSION %q); go.mod asks for go %s", buildStage.from, global["GO_VERSION"], goLine[1])
	}

	bin := filepath.Join(t.TempDir(), "masthead")
	args := append([]string(nil), b.args...)
	for i := range args {
		if i > 0 && args[i-1] == "-o" {
			args[i] = bin
		}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = ".." // WORKDIR /src holds the repository (COPY . .)
	cmd.Env = append(os.Environ(), b.env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("built as the Dockerfile does: %s go %q", strings.Join(b.env, " "), b.args)

	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary names a dynamic loader; distroless/static has none")
		}
	}
	if libs, _ := ef.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
	version := buildStage.vars(t)["VERSION"]
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "masthead "+version+" ") {
		t.Errorf("version: %q, %v; want the ARG default %q stamped by -ldflags", out, err, version)
	}

	// The runtime stage.
	users := final.all("USER")
	if len(users) == 0 {
		t.Fatal("the runtime stage sets no USER, so it would run as root")
	}
	if u := strings.Split(users[len(users)-1], ":")[0]; u == "root" || u == "0" {
		t.Errorf("USER %s is root", users[len(users)-1])
	}
	var binInImage string
	for _, c := range final.all("COPY") {
		w := strings.Fields(c)
		if contains(w, "--from="+buildStage.name) && contains(w, b.out) {
			binInImage = w[len(w)-1]
		}
	}
	if binInImage == "" {
		t.Fatalf("no COPY --from=%s of %s in the runtime stage", buildStage.name, b.out)
	}
	hc := final.all("HEALTHCHECK")
	if len(hc) != 1 {
		t.Fatalf("want one HEALTHCHECK, got %d", len(hc))
	}
	_, execForm, ok := strings.Cut(hc[0], "CMD ")
	var hcArgs []string
	if !ok || json.Unmarshal([]byte(execForm), &hcArgs) != nil || len(hcArgs) == 0 || hcArgs[0] != binInImage {
		t.Fatalf("HEALTHCHECK %q: want CMD [\"%s\", …] in exec form (the image has no shell)", hc[0], binInImage)
	}
	if ep := final.all("ENTRYPOINT"); len(ep) != 1 || !strings.Contains(ep[0], `"`+binInImage+`"`) {
		t.Errorf("ENTRYPOINT %v does not run %s", ep, binInImage)
	}

	env := servertest.New(t, nil)
	runtimeEnv := final.vars(t)
	check := func(addr string) (string, error) {
		c := exec.Command(bin, hcArgs[1:]...)
		c.Env = []string{}
		for k, v := range runtimeEnv {
			if k == "MASTHEAD_ADDR" {
				v = addr // where this test's service listens instead of the container's port
			}
			c.Env = append(c.Env, k+"="+v)
		}
		out, err := c.CombinedOutput()
		return string(out), err
	}
	if _, ok := runtimeEnv["MASTHEAD_ADDR"]; !ok {
		t.Error("the runtime stage does not set MASTHEAD_ADDR, which both serve and healthcheck read")
	}
	if out, err := check(strings.TrimPrefix(env.URL, "http://")); err != nil {
		t.Errorf("HEALTHCHECK against a ready service: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	if out, err := check(closed); err == nil || !strings.Contains(out, "not ready") {
		t.Errorf("HEALTHCHECK with nothing listening passed: %v %s", err, out)
	}

	t.Run("systemd unit", func(t *testing.T) { checkSystemdUnit(t, bin) })
}

// checkSystemdUnit verifies the unit with systemd's own checker (a copy whose ExecStart is the
// binary the Dockerfile's build stage made, as verify insists the program exists), requires the hardening
// options by name and an overall exposure of at most 2.0 from `systemd-analyze security`, and
// checks that the sysusers file creates the user the unit runs as.
func checkSystemdUnit(t *testing.T, bin string) {
	unit, err := os.ReadFile("masthead.service")
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string][]string{}
	for _, line := range strings.Split(string(unit), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && !strings.HasPrefix(line, "#") {
			settings[k] = append(settings[k], v)
		}
	}
	for k, want := range map[string]string{
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
		"PrivateDevices": "yes", "ProtectKernelTunables": "yes", "ProtectControlGroups": "yes",
		"RestrictSUIDSGID": "yes", "CapabilityBoundingSet": "", "ExecStart": "/usr/local/bin/masthead serve",
		"StateDirectory": "masthead",
		// systemctl reload: SIGHUP, on which serve reloads its schema cache (the README's promise).
		"ExecReload": "/bin/kill -HUP $MAINPID",
	} {
		if got := settings[k]; len(got) != 1 || got[0] != want {
			t.Errorf("%s=%v, want %q", k, got, want)
		}
	}
	if env := settings["Environment"]; !contains(env, "MASTHEAD_STORAGE_DIR=/var/lib/masthead/media") {
		t.Errorf("Environment=%v: media must live under the StateDirectory, the one writable path", env)
	}

	dir := t.TempDir()
	copyPath := filepath.Join(dir, "masthead.service")
	test := strings.Replace(string(unit), "ExecStart=/usr/local/bin/masthead ", "ExecStart="+bin+" ", 1)
	if err := os.WriteFile(copyPath, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("systemd-analyze", "verify", copyPath).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		// verify exits 0 on unknown keys and bad values, and only says so: any output fails.
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err = exec.Command("systemd-analyze", "security", "--offline=true", "--threshold=20", copyPath).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze security: exposure above 2.0 (%v)\n%s", err, out)
	}
	if m := regexp.MustCompile(`Overall exposure level for \S+: (\S+ \S+)`).FindSubmatch(out); m != nil {
		t.Logf("systemd-analyze security: %s", m[1])
	}

	abs, err := filepath.Abs("masthead.sysusers")
	if err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command("systemd-sysusers", "--root="+t.TempDir(), "--dry-run", abs).CombinedOutput()
	user := settings["User"]
	if err != nil || len(user) != 1 || !strings.Contains(string(out), fmt.Sprintf("Creating user '%s'", user[0])) {
		t.Errorf("systemd-sysusers --dry-run (unit User=%v): %v\n%s", user, err, out)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
