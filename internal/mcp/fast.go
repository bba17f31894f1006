package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// The fast path for read tools. Most of what reaches /mcp is tools/call of a read tool, one
// JSON-RPC request per POST with a JSON answer, and in stateless mode the SDK builds a whole
// session for each one: a connection, its goroutines and a fresh 32 kB decoder buffer for
// every JSON value it parses (several per message), which cost more CPU than the REST request
// behind a small read. fastReads answers exactly that request itself, after the SDK's own
// bearer-token middleware, with the same checks, the same tool code and the same bytes on the
// wire (TestFastPathAnswersAsTheSDK compares them). Anything else, and any request it is not
// certain of (another method, a batch, _meta, arguments the schema refuses, an unknown or newer
// protocol version, a body too large), goes to the SDK untouched, which stays the MCP server
// for initialize, tools/list and every error.
//
// Beyond skipping the SDK's session, the fast path writes the JSON-RPC answer itself
// (appendResult) into pooled buffers, the list tools write their results' JSON by hand
// (encode.go), and a call without arguments is validated once per tool. Measured on the demo
// data with the in-process REST hop of `masthead serve` (CPU profiles on a loaded, shared
// 2-core machine): search_publications' fast path spent ~0.55 ms of CPU of its own per call
// and now ~0.06 ms; most of what is left is the REST request and internal/client decoding
// its rows, as for any other client of /rest/v1.

// fastTool is a read tool as the fast path calls it.
type fastTool struct {
	input *jsonschema.Resolved
	// noArgs is the validated input of a call without arguments (absent, null or {}), nil when
	// the schema refuses one. It is worked out once: the schema does not change, and
	// list_projects, for one, is never called with arguments; validating {} on each call was
	// a sixth of what the fast path itself spent on it.
	noArgs []byte
	// run decodes validated arguments and calls the tool as the SDK's handler would, returning
	// the JSON of its result or the tool error; errNotFast when the arguments do not decode,
	// for the SDK to word the error.
	// The JSON is appended to dst (when the result writes its own, see encodeResult).
	run func(ctx context.Context, id identity, args, dst []byte) ([]byte, error)
}

// errNotFast sends a request to the SDK after all.
var errNotFast = errors.New("mcp: not for the fast path")

// fastProtocols are the protocol versions (Mcp-Protocol-Version) whose stateless handling the
// fast path reproduces; any other goes to the SDK.
var fastProtocols = map[string]bool{"2025-03-26": true, "2025-06-18": true, "2025-11-25": true, newProtocol: true}

// newProtocol is the version the go-sdk client speaks (SEP-2575): every request carries the
// client's identity in params._meta and names its method and tool in Mcp-Method and Mcp-Name
// headers, and every result names the server in _meta and says resultType "complete".
const newProtocol = "2026-07-28"

// Keys of params._meta in newProtocol requests.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// addFastTool lets the fast path call the tool name; schema is its input schema, resolved as
// the SDK resolves it.
func (s *Server) addFastTool(name string, schema *jsonschema.Schema, run func(ctx context.Context, id identity, args, dst []byte) ([]byte, error)) {
	resolved, err := schema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic("mcp: resolve input schema of " + name + ": " + err.Error()) // caught by every test that builds the server
	}
	if s.fast == nil {
		s.fast = map[string]*fastTool{}
	}
	tool := &fastTool{input: resolved, run: run}
	var generic any = map[string]any{}
	if resolved.ApplyDefaults(&generic) == nil && resolved.Validate(&generic) == nil {
		tool.noArgs, _ = json.Marshal(generic)
	}
	s.fast[name] = tool
}

// fastReads answers tools/call of a read tool and hands every other request to next (the
// SDK's handler), body intact.
func (s *Server) fastReads(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !fastProtocols[r.Header.Get("Mcp-Protocol-Version")] ||
			!isJSON(r.Header.Get("Content-Type")) || !acceptsJSONAndStream(r.Header.Values("Accept")) {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, sdk.DefaultMaxRequestBodyBytes+1))
		// toSDK hands the request on with its body as read so far and the rest unread.
		toSDK := func() {
			r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			next.ServeHTTP(w, r)
		}
		if err != nil || len(body) > sdk.DefaultMaxRequestBodyBytes {
			toSDK()
			return
		}
		bufs := buffers.Get().(*fastBuffers)
		defer bufs.put()
		out, ok := s.fastCall(r.Context(), r.Header, body, bufs)
		if !ok {
			toSDK()
			return
		}
		if s.onFast != nil {
			s.onFast()
		}
		h := w.Header()
		h.Set("Cache-Control", "no-cache, no-transform")
		h.Set("Content-Type", "application/json")
		// With its length known, an answer larger than net/http's 2 kB buffer goes out in one
		// piece instead of chunked, which the client also reads without decoding chunks.
		h.Set("Content-Length", strconv.Itoa(len(out)))
		_, _ = w.Write(out)
	})
}

// fastBuffers hold a fast answer while it is written: the result's JSON and the JSON-RPC
// response around it, together about twice the result (20 kB for a search page). Reused,
// they are allocated and zeroed once instead of per call.
type fastBuffers struct{ result, answer []byte }

var buffers = sync.Pool{New: func() any { return new(fastBuffers) }}

// maxPooled bounds what a pooled buffer keeps, so one large answer does not stay in memory.
const maxPooled = 256 << 10

func (b *fastBuffers) put() {
	if cap(b.result) > maxPooled {
		b.result = nil
	}
	if cap(b.answer) > maxPooled {
		b.answer = nil
	}
	buffers.Put(b)
}

type readCloser struct {
	io.Reader
	io.Closer
}

// fastCall runs the tools/call in body and returns the JSON-RPC response, or false when the
// request is not one the fast path is sure to answer as the SDK would.
func (s *Server) fastCall(ctx context.Context, header http.Header, body []byte, bufs *fastBuffers) ([]byte, bool) {
	// The message and its params are read with the decoder the SDK reads them with, matching
	// member names exactly as it does, and refusing any member besides the ones named here (an
	// unknown one, a name in another case), which sends the request to the SDK.
	var msg struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if len(body) == 0 || body[0] != '{' || !strict(body, &msg) ||
		string(msg.JSONRPC) != `"2.0"` || string(msg.Method) != `"tools/call"` {
		return nil, false
	}
	id, ok := requestID(msg.ID)
	if !ok {
		return nil, false
	}
	var params struct {
		Name      json.RawMessage `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      json.RawMessage `json:"_meta"`
	}
	if len(msg.Params) == 0 || msg.Params[0] != '{' || !strict(msg.Params, &params) {
		return nil, false
	}
	newer := header.Get("Mcp-Protocol-Version") == newProtocol
	args, hasArgs := params.Arguments, params.Arguments != nil
	if (params.Meta != nil) != newer {
		return nil, false // _meta is for newProtocol, which requires it
	}
	var name string
	if params.Name == nil || segjson.Unmarshal(params.Name, &name) != nil {
		return nil, false
	}
	if newer && (header.Get("Mcp-Method") != "tools/call" || header.Get("Mcp-Name") != name || !newProtocolMeta(params.Meta)) {
		return nil, false
	}
	tool := s.fast[name]
	if tool == nil {
		return nil, false
	}
	// Arguments are validated (and defaults applied) on their generic form, as the SDK does;
	// absent or null arguments are an empty object (a client that marshals a nil map sends null).
	input := tool.noArgs
	if !hasArgs || string(args) == "null" || emptyObject(args) {
		if input == nil {
			return nil, false
		}
	} else {
		v := map[string]any{}
		if len(args) == 0 || args[0] != '{' || segjson.Unmarshal(args, &v) != nil {
			return nil, false
		}
		var generic any = v
		if tool.input.ApplyDefaults(&generic) != nil || tool.input.Validate(&generic) != nil {
			return nil, false
		}
		var err error
		if input, err = json.Marshal(generic); err != nil {
			return nil, false
		}
	}
	who, err := identityOf(sdkauth.TokenInfoFromContext(ctx))
	if err != nil {
		return nil, false
	}
	structured, err := tool.run(ctx, who, input, bufs.result[:0])
	if errors.Is(err, errNotFast) {
		return nil, false
	}
	if err == nil {
		bufs.result = structured
		bufs.answer = appendResult(bufs.answer[:0], id, newer, structured)
		return bufs.answer, true
	}
	// A tool's failure is a result the model reads, as in the SDK's typed handlers.
	res := &sdk.CallToolResult{}
	res.SetError(err)
	if newer {
		res.Meta = sdk.Meta{metaServerInfo: implementation}
	}
	result, err := marshalNoEscape(res)
	if err != nil {
		return nil, false
	}
	if newer {
		// The SDK's unexported resultType field, last in its encoding of a result.
		result = append(result[:len(result)-1], `,"resultType":"complete"}`...)
	}
	out, err := marshalNoEscape(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      any             `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", id, result})
	if err != nil {
		return nil, false
	}
	return out, true
}

// appendResult appends the JSON-RPC response carrying a tool's successful result, structured
// being the JSON of its value (from json.Marshal), byte for byte as the SDK writes it:
//
//	{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"<structured as a string>"}],"structuredContent":<structured>}}
//
// (in newProtocol with the server's _meta first and resultType last). The SDK gets there through
// three nested json.Marshal calls, each of which re-scans ("compacts") the JSON its inner one
// produced, so the result's bytes were scanned four times and copied as often: for
// search_publications' 10 kB that was 0.4 ms of CPU on the test machine, more than the rest of
// the tool call. Here they are escaped once into the text and copied once.
func appendResult(dst []byte, id any, newer bool, structured []byte) []byte {
	// Room for the envelope, the structured JSON twice and the text's escapes (one per quote).
	dst = slices.Grow(dst, 256+len(newMeta)+len(structured)*9/4)
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	switch id := id.(type) { // an int64 or a string (requestID)
	case int64:
		dst = strconv.AppendInt(dst, id, 10)
	default:
		idJSON, _ := marshalNoEscape(id)
		dst = append(dst, idJSON...)
	}
	dst = append(dst, `,"result":{`...)
	if newer {
		dst = append(dst, `"_meta":`...)
		dst = append(dst, newMeta...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"content":[{"type":"text","text":`...)
	dst = appendString(dst, structured)
	dst = append(dst, `}],"structuredContent":`...)
	dst = append(dst, structured...)
	if newer {
		dst = append(dst, `,"resultType":"complete"`...)
	}
	return append(dst, "}}"...)
}

// newMeta is the _meta of a newProtocol result as the SDK encodes it (json.Marshal of sdk.Meta).
var newMeta = func() []byte {
	b, err := json.Marshal(sdk.Meta{metaServerInfo: implementation})
	if err != nil {
		panic("mcp: encode result _meta: " + err.Error())
	}
	return b
}()

// newProtocolMeta checks params._meta of a newProtocol request as the SDK does, decoding the
// client's identity into the SDK's own types; it accepts only the keys the SDK reads, leaving
// any other (a progress token, say) to the SDK.
func newProtocolMeta(raw json.RawMessage) bool {
	var keys struct {
		ProtocolVersion    json.RawMessage `json:"io.modelcontextprotocol/protocolVersion"`
		ClientInfo         json.RawMessage `json:"io.modelcontextprotocol/clientInfo"`
		ClientCapabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		LogLevel           json.RawMessage `json:"io.modelcontextprotocol/logLevel"`
	}
	if len(raw) == 0 || raw[0] != '{' || !strict(raw, &keys) || string(keys.ProtocolVersion) != `"`+newProtocol+`"` {
		return false
	}
	if keys.ClientInfo != nil {
		var impl *sdk.Implementation
		if json.Unmarshal(keys.ClientInfo, &impl) != nil || impl == nil {
			return false
		}
	}
	var caps *struct {
		sdk.ClientCapabilities
		// Roots has the shape of the SDK's RootCapabilities (deprecated with the roots
		// feature, still read by the SDK): a malformed value is refused here as there.
		Roots *struct {
			ListChanged bool `json:"listChanged,omitempty"`
		} `json:"roots,omitempty"`
	}
	if json.Unmarshal(keys.ClientCapabilities, &caps) != nil || caps == nil {
		return false
	}
	if keys.LogLevel != nil {
		var l string
		if json.Unmarshal(keys.LogLevel, &l) != nil {
			return false
		}
	}
	return true
}

// strictFlags read a JSON-RPC message's members as the SDK's decoder does (names matched
// exactly), refuse members the destination does not name, and leave raw members pointing into
// the request's body instead of copying them.
const strictFlags = segjson.DontMatchCaseInsensitiveStructFields | segjson.DisallowUnknownFields | segjson.ZeroCopy

// strict decodes the JSON object raw into the struct v with strictFlags; false when raw is
// not exactly one valid JSON value or has a member v does not name.
func strict(raw []byte, v any) bool {
	if !segjson.Valid(raw) {
		return false
	}
	rest, err := segjson.Parse(raw, v, strictFlags)
	return err == nil && len(bytes.TrimSpace(rest)) == 0
}

// requestID reads a JSON-RPC id the way the SDK keeps it (an integer or a string), to write it
// back the way the SDK writes it. The SDK reads a number as a float64 first, so an integer
// beyond ±2^53 comes back rounded; such ids are left to it.
func requestID(raw json.RawMessage) (any, bool) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		return s, true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n > 1<<53 || n < -1<<53 {
		return nil, false
	}
	return n, true
}

// identityOf is caller for a request the SDK has not parsed: the token info its bearer
// middleware put in the context.
func identityOf(info *sdkauth.TokenInfo) (identity, error) {
	if info == nil {
		return identity{}, errNotFast
	}
	return caller(&sdk.CallToolRequest{Extra: &sdk.RequestExtra{TokenInfo: info}})
}

// marshalNoEscape encodes v as the SDK's JSON-RPC layer does: no HTML escaping, no newline.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// emptyObject reports whether raw (a valid JSON value) is {} give or take whitespace.
func emptyObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) >= 2 && raw[0] == '{' && raw[len(raw)-1] == '}' && len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0
}

func isJSON(contentType string) bool {
	t, _, err := mime.ParseMediaType(contentType)
	return err == nil && t == "application/json"
}

// acceptsJSONAndStream is the SDK's check that a stateless POST accepts both answers; the SDK
// also takes wildcards, which the fast path leaves to it.
func acceptsJSONAndStream(values []string) (ok bool) {
	var j, s bool
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json":
				j = true
			case "text/event-stream":
				s = true
			}
		}
	}
	return j && s
}
