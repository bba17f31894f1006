package mcp

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// Hand-written JSON for the results of list_projects and search_publications. json.Marshal
// finds its way through these types by reflection on every call: ~24 µs of CPU for a page of
// 20 publications on the (loaded, shared) test machine, where appending the fields in order
// takes ~5 µs. The bytes are exactly json.Marshal's (TestAppendJSONAsEncodingJSON compares
// them on every field's edge cases), so the SDK path and the fast path, which both call
// encodeResult, answer as before.

// jsonAppender is a result that writes its own JSON. appendJSON returns false when it meets
// something it does not write as json.Marshal would (a time outside years 0–9999, which
// json.Marshal refuses), for encodeResult to fall back to json.Marshal.
type jsonAppender interface {
	appendJSON(dst []byte) ([]byte, bool)
}

func (p ProjectsOut) appendJSON(dst []byte) ([]byte, bool) {
	dst = appendArray(append(dst, `{"projects":`...), p.Projects, func(dst []byte, pr Project) []byte { return pr.appendJSON(dst) })
	return append(dst, '}'), true
}

func (p *Project) appendJSON(dst []byte) []byte {
	dst = appendField(dst, `{"id":`, p.ID)
	dst = appendField(dst, `,"slug":`, p.Slug)
	dst = appendField(dst, `,"name":`, p.Name)
	dst = appendField(dst, `,"role":`, p.Role)
	dst = appendField(dst, `,"timezone":`, p.Timezone)
	dst = appendArray(append(dst, `,"default_channels":`...), p.DefaultChannels, appendString[string])
	dst = appendArray(append(dst, `,"collections":`...), p.Collections, func(dst []byte, c Collection) []byte {
		dst = appendField(dst, `{"id":`, c.ID)
		dst = appendField(dst, `,"slug":`, c.Slug)
		dst = appendField(dst, `,"name":`, c.Name)
		dst = appendField(dst, `,"kind":`, c.Kind)
		return append(dst, '}')
	})
	dst = appendField(dst, `,"queue_url":`, p.QueueURL)
	dst = appendField(dst, `,"schedule_url":`, p.ScheduleURL)
	return append(dst, '}')
}

func (p PageOut) appendJSON(dst []byte) ([]byte, bool) {
	dst = append(dst, `{"total":`...)
	dst = strconv.AppendInt(dst, int64(p.Total), 10)
	dst = append(dst, `,"publications":`...)
	if p.Publications == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range p.Publications {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = p.Publications[i].appendJSON(dst); !ok {
				return dst, false
			}
		}
		dst = append(dst, ']')
	}
	if p.NextOffset != nil {
		dst = append(dst, `,"next_offset":`...)
		dst = strconv.AppendInt(dst, int64(*p.NextOffset), 10)
	}
	return append(dst, '}'), true
}

func (p *Publication) appendJSON(dst []byte) ([]byte, bool) {
	dst = appendField(dst, `{"id":`, p.ID)
	dst = appendField(dst, `,"project":`, p.Project)
	dst = appendField(dst, `,"title":`, p.Title)
	dst = appendField(dst, `,"status":`, p.Status)
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, int64(p.Version), 10)
	if p.Collection != "" {
		dst = appendField(dst, `,"collection":`, p.Collection)
	}
	if p.Author != "" {
		dst = appendField(dst, `,"author":`, p.Author)
	}
	if p.Summary != "" {
		dst = appendField(dst, `,"summary":`, p.Summary)
	}
	ok := true
	if p.ScheduledFor != nil {
		dst = append(dst, `,"scheduled_for":`...)
		dst, ok = appendTime(dst, *p.ScheduledFor)
	}
	if p.PublishedAt != nil && ok {
		dst = append(dst, `,"published_at":`...)
		dst, ok = appendTime(dst, *p.PublishedAt)
	}
	if !ok {
		return dst, false
	}
	dst = append(dst, `,"updated_at":`...)
	if dst, ok = appendTime(dst, p.UpdatedAt); !ok {
		return dst, false
	}
	dst = appendField(dst, `,"url":`, p.URL)
	return append(dst, '}'), true
}

// appendArray appends items as a JSON array, each written by each, and a nil slice as null
// (as json.Marshal does).
func appendArray[T any](dst []byte, items []T, each func([]byte, T) []byte) []byte {
	if items == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = each(dst, it)
	}
	return append(dst, ']')
}

// appendField appends a key (with its punctuation) and a string value.
func appendField(dst []byte, key, value string) []byte {
	return appendString(append(dst, key...), value)
}

// appendTime writes t as time.Time's MarshalJSON does, which refuses years outside 0–9999.
func appendTime(dst []byte, t time.Time) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, false
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"'), true
}

// appendString appends s as a JSON string exactly as encoding/json writes a string with HTML
// escaping on (json.Marshal, which the SDK's TextContent uses): \" and \\ escaped, control
// characters as \n or \u00XX, <, > and & as \u003c…, U+2028 and U+2029 escaped, invalid
// UTF-8 as \ufffd. TestAppendStringAsEncodingJSON holds it to that.
func appendString[S []byte | string](dst []byte, s S) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if plain[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		n := min(len(s)-i, utf8.UTFMax)
		c, size := utf8.DecodeRuneInString(string(s[i : i+n]))
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plain marks the ASCII bytes a JSON string holds as they are (encoding/json's htmlSafeSet).
var plain = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()
