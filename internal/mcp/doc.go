// Package mcp is Masthead's Model Context Protocol server at /mcp (Streamable HTTP, built on
// the official go-sdk) and the OAuth protected-resource metadata (RFC 9728) that tells AI
// clients which authorization server issues its tokens.
//
// It owns the tool catalogue an assistant sees: listing projects, searching and reading
// publications, the review queue and the schedule, one tool per workflow RPC and promo
// drafting. It decides nothing about access. Every tool is a request to the service's own
// /rest/v1 over HTTP (through internal/client; internal/server hands them over in process)
// carrying the caller's bearer token and the publishable key, so row-level security and the workflow functions judge an assistant
// exactly as they judge the person who connected it; nothing here runs as a privileged role.
//
// It may import internal/client, internal/channels, internal/metrics (tool calls are counted
// there) and internal/pg (for the pg.Caller its Authenticator returns); it must not import
// internal/auth, rest, storage, server, handlers or views. The identity check arrives through
// the Authenticator interface declared here.
package mcp
