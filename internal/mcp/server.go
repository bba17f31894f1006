package mcp

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"masthead/internal/client"
	"masthead/internal/metrics"
	"masthead/internal/pg"
)

// Paths this package serves. The metadata lives at the root document and at the path-suffixed
// one RFC 9728 derives from the resource URL, since clients try either.
const (
	Path               = "/mcp"
	MetadataPath       = "/.well-known/oauth-protected-resource"
	MetadataMCPPath    = MetadataPath + Path
	version            = "1.0.0"
	defaultRESTTimeout = 15 * time.Second
)

// Authenticator decides who an /mcp request is from its Authorization header. Two kinds fit:
// TokenVerifier (offline: signature and claims), which internal/server uses, and
// *auth.Service, whose Caller also looks the session up, refusing a signed-out token at
// /mcp itself at the price of a database transaction per request.
type Authenticator interface {
	Caller(r *http.Request) (pg.Caller, error)
}

// Config is what the MCP server needs. APIURL and PublishableKey are how it reaches /rest/v1,
// exactly like the dashboard; PublicURL is the base clients see (links, resource identifier,
// issuer).
type Config struct {
	// APIURL is the service base the tools call, e.g. http://127.0.0.1:8080.
	APIURL string
	// PublishableKey is sent as apikey with every REST call.
	PublishableKey string
	// PublicURL is the public base URL: the resource is PublicURL+"/mcp", the authorization
	// server PublicURL+"/auth/v1", and dashboard links start with it.
	PublicURL string
	// Auth checks bearer tokens.
	Auth Authenticator
	// InvalidToken is the error Auth wraps when it refuses a token (auth.ErrInvalidToken); such
	// requests are answered 401, any other Auth error is an outage (500, cause logged). Nil
	// makes every refusal a 401.
	InvalidToken error
	// HTTPClient carries the REST calls; nil means a pooled client with a 15 s timeout.
	HTTPClient *http.Client
	// Logger receives one line per tool call; nil discards.
	Logger *slog.Logger
	// Metrics counts tool calls by tool and outcome; nil counts nothing.
	Metrics *metrics.Metrics
}

// Server is the MCP endpoint and its metadata documents.
type Server struct {
	api      *client.Client
	base     string
	log      *slog.Logger
	metrics  *metrics.Metrics
	auth     Authenticator
	invalid  error
	mcp      *sdk.Server
	fast     map[string]*fastTool       // read tools by name, for fastReads
	onFast   func()                     // tests: called for each request fastReads answers
	onDecode func(body []byte, out any) // tests: called with each answer get decoded
	handler  http.Handler
	metadata http.Handler
}

// New builds the server and registers every tool.
func New(cfg Config) (*Server, error) {
	if cfg.Auth == nil {
		return nil, errors.New("mcp: an Authenticator is required")
	}
	base := strings.TrimRight(cfg.PublicURL, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("mcp: public URL %q must be an absolute http(s) URL", cfg.PublicURL)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		// The default transport keeps two idle connections per host; every tool call goes to the
		// same host, so a larger pool avoids a new TCP connection per concurrent call.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns, t.MaxIdleConnsPerHost = 256, 256
		hc = &http.Client{Timeout: defaultRESTTimeout, Transport: t}
	}
	api, err := client.New(cfg.APIURL, cfg.PublishableKey, hc)
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		api: api, base: base, log: log, metrics: cfg.Metrics, auth: cfg.Auth, invalid: cfg.InvalidToken,
	}
	s.mcp = sdk.NewServer(implementation, &sdk.ServerOptions{Instructions: instructions})
	s.addReadTools()
	s.addWorkflowTools()
	s.addRoundTools()
	s.addPromoTool()
	s.addDraftTools()

	// Stateless: every POST carries everything needed, so any instance behind a load balancer
	// can answer it and nothing lives in memory between requests, as for the rest of the
	// service. JSON answers instead of SSE streams, since no tool streams progress.
	streamable := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.mcp },
		&sdk.StreamableHTTPOptions{
			Stateless:    true,
			JSONResponse: true,
			Logger:       log,
			// The SDK's DNS-rebinding guard refuses loopback connections whose Host is not
			// loopback, which is every request behind a reverse proxy on the same machine. The
			// attack it prevents needs ambient credentials; /mcp accepts only bearer tokens,
			// which a rebinding page cannot hold.
			DisableLocalhostProtection: true,
		})
	requireToken := sdkauth.RequireBearerToken(s.verify, &sdkauth.RequireBearerTokenOptions{
		ResourceMetadataURL: base + MetadataPath,
		ClockSkew:           30 * time.Second,
	})
	s.handler = cors(requireToken(s.fastReads(streamable)))
	s.metadata = sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               base + Path,
		AuthorizationServers:   []string{base + "/auth/v1"},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Masthead",
	})
	return s, nil
}

// implementation is how the server names itself to clients.
var implementation = &sdk.Implementation{Name: "masthead", Title: "Masthead", Version: version}

// instructions is what a model reads about the server as a whole when it connects.
const instructions = `Masthead is an editorial workflow: publications move draft → reviewing → approved → scheduled → published (or changes_requested, archived). You act as the person who connected you, with their role in each project; the service refuses what they may not do. Text, promos and media change only while a publication is a draft or has changes requested; a lead can reopen an approved or scheduled one to draft.
Start with list_projects to learn the projects, your role in each and their collections. Find work with search_publications, review_queue or list_schedule, read one with get_publication, then act with the workflow tools (named after the workflow's own functions) or upsert_promo. Pass the version you last saw as expected_version so a change made meanwhile by someone else is refused instead of overwritten. Every result has a url to the same item in the dashboard; give it to the person.`

// Handler serves /mcp (token required) for use outside Echo.
func (s *Server) Handler() http.Handler { return s.handler }

// Mount adds /mcp and both metadata documents to e. None asks for the publishable key: MCP
// clients never hold it.
func (s *Server) Mount(e *echo.Echo) {
	e.Any(Path, func(c echo.Context) error {
		// Tool calls reach /rest/v1 as the assistant's own address and User-Agent, with this
		// request's id, so the service's access log shows who made them and which call they
		// belong to.
		r := c.Request()
		ctx := client.ForRequest(r.Context(), c.RealIP(), r.UserAgent(), c.Response().Header().Get(echo.HeaderXRequestID))
		s.handler.ServeHTTP(c.Response(), r.WithContext(ctx))
		return nil
	})
	e.GET(MetadataPath, echo.WrapHandler(s.metadata))
	e.GET(MetadataMCPPath, echo.WrapHandler(s.metadata))
	e.OPTIONS(MetadataPath, echo.WrapHandler(s.metadata))
	e.OPTIONS(MetadataMCPPath, echo.WrapHandler(s.metadata))
}
