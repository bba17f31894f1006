package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"masthead/internal/auth"
)

func init() {
	commands["keys"] = command{summary: keysSummary, run: func(_ context.Context, args []string, stdout io.Writer, _ *slog.Logger) error {
		return runKeys(args, os.Stdin, stdout)
	}}
}

const keysSummary = "make and rotate production keys: keys generate | add | promote <kid> | retire <kid> | list"

const keysUsage = `usage: masthead keys <command> [flags]

  generate        a new publishable key and a JWT key set with one signing key, as an env file
  add             add a new key to a set: it verifies tokens at once and signs only once promoted
  promote <kid>   make <kid> the key that signs new tokens (the others keep verifying)
  retire <kid>    remove <kid> from the set: tokens it signed stop verifying
  list            the keys of a set and what each does (prints no secret)

add, promote, retire and list read the set from --file FILE (add, promote and retire rewrite it
in place) or from stdin (they then write the changed set to stdout). A set is the JSON that
MASTHEAD_JWT_KEYS takes, or an env file with a MASTHEAD_JWT_KEYS= line (as generate writes);
the output keeps the form of the input and every other line of the file.

Rotating without downtime: add, roll the set out to every instance; promote the new key, roll
out; once every token the old key signed has expired (MASTHEAD_JWT_EXP after the last instance
stopped signing with it), retire it and roll out. The README's production section has the
details.

Run 'masthead keys <command> -h' for its flags`

// jwtKeysVar is the environment variable the service reads its key set from.
const jwtKeysVar = "MASTHEAD_JWT_KEYS"

// runKeys is the keys command with its input given, so tests need no real stdin.
func runKeys(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(keysUsage)
	}
	switch args[0] {
	case "generate":
		return keysGenerate(args[1:], stdout)
	case "add":
		return keysChange("add", "add a new key that verifies at once and signs only once promoted", "", args[1:], stdin, stdout, addKey)
	case "promote":
		return keysChange("promote", "make <kid> the key that signs new tokens", "<kid>", args[1:], stdin, stdout, promoteKey)
	case "retire":
		return keysChange("retire", "remove <kid> from the set; tokens it signed stop verifying", "<kid>", args[1:], stdin, stdout, retireKey)
	case "list":
		return keysList(args[1:], stdin, stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, keysUsage)
		return flag.ErrHelp
	}
	return fmt.Errorf("unknown keys command %q (want generate, add, promote, retire or list)\n\n%s", args[0], keysUsage)
}

// keysGenerate writes a fresh publishable key and key set as an env file, to stdout or to a
// new file (never over an existing one, which may hold the keys in use).
func keysGenerate(args []string, stdout io.Writer) error {
	fs := newFlags("keys generate", "a new publishable key and a JWT key set with one signing key, as an env file\n(for systemd's EnvironmentFile= and docker's --env-file)")
	out := fs.String("out", "", "write to this new file (mode 0600) instead of stdout; an existing file is never overwritten")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set, err := auth.GenerateKeySet()
	if err != nil {
		return errors.New("could not generate a key: " + strings.TrimPrefix(err.Error(), "auth: "))
	}
	kid := ""
	if ks, err := parseKeySet(set); err == nil {
		kid = ks.keys[0].kid
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Masthead's secrets, made by `masthead keys generate`: keep this file secret (mode 0600).\n")
	fmt.Fprintf(&b, "# An env file for systemd (EnvironmentFile=) and docker (--env-file); not for a shell's `source`.\n")
	fmt.Fprintf(&b, "# Rotate the JWT keys with: masthead keys add|promote|retire --file <this file>\n")
	fmt.Fprintf(&b, "MASTHEAD_PUBLISHABLE_KEY=%s\n", auth.GeneratePublishableKey())
	fmt.Fprintf(&b, "%s=%s\n", jwtKeysVar, set)
	if *out == "" {
		_, err := stdout.Write(b.Bytes())
		return err
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s already exists and may hold the keys in use: rotate them with 'masthead keys add --file %s', or choose another file", *out, *out)
	}
	if err != nil {
		return errors.New(plainPathError(err))
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return errors.New(plainPathError(err))
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return errors.New(plainPathError(err))
	}
	if err := f.Close(); err != nil {
		return errors.New(plainPathError(err))
	}
	fmt.Fprintf(stdout, "wrote %s: a publishable key and a JWT key set whose key %s signs\n", *out, kid)
	return nil
}

// keyChange changes a key set for one argument (a kid, or empty) and says what it did.
type keyChange func(ks *keySet, kid string) (summary string, err error)

// keysChange runs add, promote or retire: read the set, change it, check that the service
// would accept the result, and write it back in the form it came in.
func keysChange(name, summary, argName string, args []string, stdin io.Reader, stdout io.Writer, change keyChange) error {
	fs := newFlags("keys "+name, summary)
	if argName != "" {
		fs.Usage = func() {
			fmt.Fprintf(fs.Output(), "usage: masthead keys %s %s [flags]\n\n%s\n\nflags:\n", name, argName, summary)
			fs.PrintDefaults()
		}
	}
	file := fs.String("file", "", "the key set to change in place (JSON or an env file); without it, read stdin and write stdout")
	pos, err := parseInterleaved(fs, args, stdout)
	if err != nil {
		return err
	}
	kid := ""
	switch {
	case argName == "" && len(pos) > 0:
		return fmt.Errorf("unexpected argument %q", pos[0])
	case argName != "" && len(pos) == 0:
		return fmt.Errorf("name the key: masthead keys %s %s (see the kids with 'masthead keys list')", name, argName)
	case argName != "" && len(pos) > 1:
		return fmt.Errorf("one kid at a time, got %d", len(pos))
	case argName != "":
		kid = pos[0]
	}
	src, err := readKeySource(*file, stdin)
	if err != nil {
		return err
	}
	ks, err := parseKeySet(src.set)
	if err != nil {
		return fmt.Errorf("%s: %w", src.name, err)
	}
	note, err := change(ks, kid)
	if err != nil {
		return err
	}
	set, err := ks.marshal()
	if err != nil {
		return err
	}
	// The service must accept what we write: check it with the service's own parser.
	if _, err := auth.ParseKeySet(set); err != nil {
		return fmt.Errorf("the changed set would not load: %s", strings.TrimPrefix(err.Error(), "auth: "))
	}
	out := src.render(set)
	if *file == "" {
		_, err := stdout.Write(out)
		return err
	}
	if err := replaceFile(*file, out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s\n", *file, note)
	return nil
}

func addKey(ks *keySet, _ string) (string, error) {
	gen, err := auth.GenerateKeySet()
	if err != nil {
		return "", errors.New("could not generate a key: " + strings.TrimPrefix(err.Error(), "auth: "))
	}
	fresh, err := parseKeySet(gen)
	if err != nil {
		return "", err
	}
	k := fresh.keys[0]
	if ks.index(k.kid) >= 0 {
		return "", fmt.Errorf("the new key's kid %s is already in the set", k.kid)
	}
	ks.keys = append(ks.keys, k) // after the signing key, so it verifies but does not sign
	return fmt.Sprintf("added %s: it verifies tokens now and signs none until promoted (masthead keys promote %s) once every instance runs this set", k.kid, k.kid), nil
}

func promoteKey(ks *keySet, kid string) (string, error) {
	i, err := ks.find(kid)
	if err != nil {
		return "", err
	}
	k := ks.keys[i]
	if !k.private {
		return "", fmt.Errorf("key %s holds only a public key: it can verify tokens but never sign them", kid)
	}
	old := ks.signer()
	if old == kid {
		return fmt.Sprintf("%s already signs new tokens; nothing changed", kid), nil
	}
	ks.keys = append([]jwkEntry{k}, append(ks.keys[:i:i], ks.keys[i+1:]...)...)
	return fmt.Sprintf("%s signs new tokens once instances run this set; %s still verifies until retired (masthead keys retire %s) after the tokens it signed have expired", kid, old, old), nil
}

func retireKey(ks *keySet, kid string) (string, error) {
	i, err := ks.find(kid)
	if err != nil {
		return "", err
	}
	if ks.signer() == kid {
		return "", fmt.Errorf("key %s signs new tokens, so it cannot be retired: add and promote another key first (masthead keys add, then masthead keys promote <new kid>)", kid)
	}
	ks.keys = append(ks.keys[:i:i], ks.keys[i+1:]...)
	return fmt.Sprintf("retired %s: tokens it signed no longer verify on instances running this set", kid), nil
}

// keysList prints each key's kid and role, never key material.
func keysList(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := newFlags("keys list", "the keys of a set and what each does (prints no secret)")
	file := fs.String("file", "", "the key set to read (JSON or an env file); without it, read stdin")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	src, err := readKeySource(*file, stdin)
	if err != nil {
		return err
	}
	ks, err := parseKeySet(src.set)
	if err != nil {
		return fmt.Errorf("%s: %w", src.name, err)
	}
	signer := ks.signer()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KID\tUSE")
	for _, k := range ks.keys {
		use := "verifies"
		switch {
		case k.kid == signer:
			use = "signs new tokens, verifies"
		case !k.private:
			use = "verifies (public key only)"
		}
		fmt.Fprintf(tw, "%s\t%s\n", k.kid, use)
	}
	return tw.Flush()
}

// parseInterleaved parses flags that may come before or after positional arguments
// ("promote KID --file f" as well as "promote --file f KID") and returns the positionals. A kid
// is base64url and may begin with '-', so an argument that names no flag of fs is a positional
// wherever it stands, not a flag nobody defined; a flag's value is the argument after it unless
// written as --flag=value. Everything after "--" is positional.
func parseInterleaved(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	var pos, flags []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(arg, "-") && namesFlag(fs, arg):
			flags = append(flags, arg)
			if !strings.Contains(arg, "=") && takesValue(fs, arg) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			pos = append(pos, arg)
		}
	}
	// flags holds flags and their values only, so nothing is left over for fs.Args.
	if err := parseFlags(fs, flags, stdout); err != nil {
		return nil, err
	}
	return pos, nil
}

// takesValue reports whether the flag arg names reads a value (every flag but a boolean one).
func takesValue(fs *flag.FlagSet, arg string) bool {
	f := fs.Lookup(strings.TrimLeft(arg, "-"))
	if f == nil {
		return false // -h and -help
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// namesFlag reports whether arg ("-file", "--file=x", "-h") names a flag fs knows.
func namesFlag(fs *flag.FlagSet, arg string) bool {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name == "h" || name == "help" || fs.Lookup(name) != nil
}

// keySource is where a key set came from: bare JSON, or one line of an env file whose other
// lines must survive a rewrite untouched.
type keySource struct {
	name string // the file, or "stdin"
	set  []byte // the JSON key set
	// For an env file: its lines, the index of the MASTHEAD_JWT_KEYS line, and what surrounds
	// the value on it ("MASTHEAD_JWT_KEYS=" or "export MASTHEAD_JWT_KEYS=", and a quote).
	lines  []string
	line   int
	prefix string
	quote  string
}

// readKeySource reads the set from file, or from stdin when file is empty.
func readKeySource(file string, stdin io.Reader) (*keySource, error) {
	var data []byte
	var err error
	src := &keySource{name: file}
	if file == "" {
		src.name = "stdin"
		if f, ok := stdin.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				return nil, errors.New("no key set given: name a file with --file, or pipe the set on stdin")
			}
		}
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, errors.New(plainPathError(err))
	}
	text := strings.TrimSpace(string(data))
	if text == "" {
		return nil, fmt.Errorf("%s is empty: give a key set (masthead keys generate makes one)", src.name)
	}
	if strings.HasPrefix(text, "{") {
		src.set = []byte(text)
		return src, nil
	}
	src.lines = strings.Split(string(data), "\n")
	src.line = -1
	for i, l := range src.lines {
		trimmed := strings.TrimLeft(l, " \t")
		name := strings.TrimPrefix(trimmed, "export ")
		if !strings.HasPrefix(name, jwtKeysVar+"=") {
			continue
		}
		if src.line >= 0 {
			return nil, fmt.Errorf("%s sets %s twice (lines %d and %d); keep one", src.name, jwtKeysVar, src.line+1, i+1)
		}
		src.line = i
		src.prefix = l[:len(l)-len(name)] + jwtKeysVar + "="
		value := strings.TrimSpace(strings.TrimPrefix(name, jwtKeysVar+"="))
		switch {
		case len(value) >= 2 && value[0] == '\'' && value[len(value)-1] == '\'':
			src.quote, value = "'", value[1:len(value)-1]
		case strings.HasPrefix(value, `"`):
			return nil, fmt.Errorf("%s line %d: write the %s value unquoted or in single quotes; in double quotes the JSON's own quotes end it", src.name, i+1, jwtKeysVar)
		}
		src.set = []byte(value)
	}
	if src.line < 0 {
		return nil, fmt.Errorf("%s is neither a JWK set ({\"keys\":[…]}) nor an env file with a %s= line", src.name, jwtKeysVar)
	}
	return src, nil
}

// render is the source with its key set replaced by set.
func (s *keySource) render(set []byte) []byte {
	if s.lines == nil {
		return append(set, '\n')
	}
	lines := append([]string(nil), s.lines...)
	lines[s.line] = s.prefix + s.quote + string(set) + s.quote
	return []byte(strings.Join(lines, "\n"))
}

// keySet is a JWK set kept as the raw JSON of each key, so a rewrite changes only the order
// and membership of keys, never a key's own fields.
type keySet struct {
	keys  []jwkEntry
	other map[string]json.RawMessage // members of the set besides "keys", kept as they were
}

type jwkEntry struct {
	raw     json.RawMessage
	kid     string
	private bool
}

// parseKeySet reads a JWK set and checks it exactly as the service will when it starts.
func parseKeySet(data []byte) (*keySet, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not a JWK set: want a JSON object {\"keys\":[…]}: %v", err)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(top["keys"], &raws); err != nil || len(raws) == 0 {
		return nil, errors.New(`not a JWK set: want a JSON object with a non-empty "keys" array`)
	}
	delete(top, "keys")
	ks := &keySet{other: top}
	for i, raw := range raws {
		var k struct {
			Kid string `json:"kid"`
			D   string `json:"d"`
		}
		if err := json.Unmarshal(raw, &k); err != nil {
			return nil, fmt.Errorf("key %d is not a JSON object", i+1)
		}
		ks.keys = append(ks.keys, jwkEntry{raw: raw, kid: k.Kid, private: k.D != ""})
	}
	if _, err := auth.ParseKeySet(data); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "auth: "))
	}
	return ks, nil
}

func (ks *keySet) marshal() ([]byte, error) {
	raws := make([]json.RawMessage, len(ks.keys))
	for i, k := range ks.keys {
		raws[i] = k.raw
	}
	top := map[string]any{"keys": raws}
	for name, v := range ks.other {
		top[name] = v
	}
	return json.Marshal(top)
}

func (ks *keySet) index(kid string) int {
	for i, k := range ks.keys {
		if k.kid == kid {
			return i
		}
	}
	return -1
}

// find returns the position of kid, or an error listing the kids there are.
func (ks *keySet) find(kid string) (int, error) {
	if i := ks.index(kid); i >= 0 {
		return i, nil
	}
	kids := make([]string, len(ks.keys))
	for i, k := range ks.keys {
		kids[i] = k.kid
	}
	return -1, fmt.Errorf("no key %q in the set; its kids are %s", kid, strings.Join(kids, ", "))
}

// signer is the kid of the key that signs: the first with a private part, as the service picks.
func (ks *keySet) signer() string {
	for _, k := range ks.keys {
		if k.private {
			return k.kid
		}
	}
	return ""
}

// replaceFile writes data over path atomically (a new file renamed into place), keeping the
// old file's permissions and owner, so a crash leaves either the old set or the new one.
func replaceFile(path string, data []byte) error {
	st, err := os.Stat(path)
	if err != nil {
		return errors.New(plainPathError(err))
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return errors.New(plainPathError(err))
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		return errors.New(plainPathError(err))
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && (int(sys.Uid) != os.Geteuid() || int(sys.Gid) != os.Getegid()) {
		if err := tmp.Chown(int(sys.Uid), int(sys.Gid)); err != nil {
			return fmt.Errorf("cannot keep the owner of %s (%d:%d) on its new version: %s; run as its owner or as root", path, sys.Uid, sys.Gid, plainPathError(err))
		}
	}
	if _, err := tmp.Write(data); err != nil {
		return errors.New(plainPathError(err))
	}
	if err := tmp.Sync(); err != nil {
		return errors.New(plainPathError(err))
	}
	if err := tmp.Close(); err != nil {
		return errors.New(plainPathError(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return errors.New(plainPathError(err))
	}
	done = true
	return nil
}

// plainPathError words a file error as "open x: no such file or directory" without Go's
// type names.
func plainPathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s %s: %v", pe.Op, pe.Path, pe.Err)
	}
	return err.Error()
}
