package mcp

// SDKOnly turns s's fast path off, so every request is the SDK's to answer.
func SDKOnly(s *Server) { s.fast = nil }

// OnFast makes s call f for each request its fast path answers.
func OnFast(s *Server, f func()) { s.onFast = f }

// OnDecode makes s call f with each REST answer its read tools decode and what they decoded.
func OnDecode(s *Server, f func(body []byte, out any)) { s.onDecode = f }
