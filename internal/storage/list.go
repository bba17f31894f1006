package storage

import (
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"
)

// listRequest is the body of POST /object/list/media (list), as supabase-js sends it.
type listRequest struct {
	Prefix *string `json:"prefix"`
	Limit  *int64  `json:"limit"`
	Offset *int64  `json:"offset"`
	Search *string `json:"search"`
	SortBy *struct {
		Column *string `json:"column"`
		Order  *string `json:"order"`
	} `json:"sortBy"`
}

// listEntry is one entry of a listing, in Supabase Storage's shape: a folder has only a name
// (every other field null), an object its row's id, times and file metadata.
type listEntry struct {
	Name           string        `json:"name"`
	ID             *string       `json:"id"`
	UpdatedAt      *time.Time    `json:"updated_at"`
	CreatedAt      *time.Time    `json:"created_at"`
	LastAccessedAt *time.Time    `json:"last_accessed_at"`
	Metadata       *listMetadata `json:"metadata"`
}

// listMetadata is Supabase Storage's object metadata, from the media row: no eTag, which only
// the stored file knows (info has it).
type listMetadata struct {
	Size           int64     `json:"size"`
	Mimetype       string    `json:"mimetype"`
	CacheControl   string    `json:"cacheControl"`
	LastModified   time.Time `json:"lastModified"`
	ContentLength  int64     `json:"contentLength"`
	HTTPStatusCode int       `json:"httpStatusCode"`
}

// removedEntry is one object of remove's answer: its full name, as Supabase Storage answers.
type removedEntry struct {
	listEntry
	BucketID string `json:"bucket_id"`
}

// listOrders are the orders list accepts (Supabase Storage's sortBy, "<column> <order>"), each
// a fixed ORDER BY of listSQL's output: folders first, by name; then objects by the column, by
// name within ties. Names compare byte by byte (collation "C"), so the order does not depend on
// the server's locale. Reads are not recorded, so last_accessed_at is the time of the last
// write.
var listOrders = map[string]string{
	"name asc":              `folder desc, name collate "C" asc`,
	"name desc":             `folder desc, name collate "C" desc`,
	"updated_at asc":        `folder desc, updated_at asc, name collate "C" asc`,
	"updated_at desc":       `folder desc, updated_at desc, name collate "C" desc`,
	"created_at asc":        `folder desc, created_at asc, name collate "C" asc`,
	"created_at desc":       `folder desc, created_at desc, name collate "C" desc`,
	"last_accessed_at asc":  `folder desc, updated_at asc, name collate "C" asc`,
	"last_accessed_at desc": `folder desc, updated_at desc, name collate "C" desc`,
}

// listSQL lists one folder ($1, a LIKE pattern: the escaped folder path and "%"; $2 its
// length in characters) as the caller sees it: the objects directly in it and the folders
// below it, which exist only as the paths of objects. $3 filters names by their start, ignoring
// case (an escaped LIKE pattern), $4 and $5 are limit and offset. %s is one of listOrders.
const listSQL = `with under as (
  select m.id, m.created_at, m.updated_at, m.mime_type, m.bytes, substr(m.storage_path, $2::int + 1) as rest
    from public.media m
   where m.storage_path like $1 and substr(m.storage_path, $2::int + 1) ilike $3
)
select name, folder, id, created_at, updated_at, mime_type, bytes from (
  select split_part(rest, '/', 1) as name, true as folder, null::text as id, null::timestamptz as created_at,
         null::timestamptz as updated_at, null::text as mime_type, null::bigint as bytes
    from under where strpos(rest, '/') > 0
   group by 1
  union all
  select rest, false, id::text, created_at, updated_at, mime_type, bytes
    from under where strpos(rest, '/') = 0
) entries
order by %s
limit $4 offset $5`

// listQueries is listSQL in each of listOrders, by the same keys: the statements list may run.
var listQueries = func() map[string]string {
	m := make(map[string]string, len(listOrders))
	for k, order := range listOrders {
		m[k] = fmt.Sprintf(listSQL, order)
	}
	return m
}()

// list serves POST /object/list/media (list): one page of the folder prefix, as the caller
// sees it under row-level security, so nobody learns of an object, or a folder, they may not
// read. Folders come first. The listing is of the media rows: an object is its row.
func (h *Handler) list(c echo.Context) error {
	ctx := c.Request().Context()
	if c.Param("bucket") != Bucket {
		return writeError(c, errNoBucket)
	}
	var body listRequest
	if aerr := h.readJSON(c, &body); aerr != nil {
		return writeError(c, aerr)
	}
	q, aerr := h.listQuery(body)
	if aerr != nil {
		return writeError(c, aerr)
	}
	caller, aerr := h.caller(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	out := []listEntry{}
	err := h.readAsCaller(ctx, caller, func(tx pgx.Tx) error {
		out = out[:0]
		rows, err := tx.Query(ctx, q.sql, q.pattern, utf8.RuneCountInString(q.folder), q.search, q.limit, q.offset)
		if err != nil {
			return err
		}
		var r listRow
		_, err = pgx.ForEachRow(rows, []any{&r.name, &r.folder, &r.id, &r.created, &r.updated, &r.mime, &r.bytes}, func() error {
			out = append(out, r.entry(r.name))
			return nil
		})
		return err
	})
	if err != nil {
		return writeError(c, h.internal(ctx, "storage: list media rows", err))
	}
	return c.JSON(http.StatusOK, out)
}

// listQuery is a validated list request: the statement to run and its parameters.
type listQuery struct {
	sql, folder, pattern, search string
	limit, offset                int64
}

// listQuery checks a list request against Supabase Storage's rules and ours: a prefix is
// required (supabase-js always sends one; "" is the bucket's top, the project folders); limit
// is 1 to MaxListLimit (default 100); offset is not negative; sortBy names a known column and
// order; search is at most one file name long.
func (h *Handler) listQuery(b listRequest) (listQuery, *apiError) {
	q := listQuery{limit: 100}
	if b.Prefix == nil {
		return q, invalid("prefix is required: the folder to list, \"\" for the top")
	}
	folder := strings.Trim(*b.Prefix, "/")
	if folder != "" {
		if !validFolder(folder) {
			return q, &apiError{http.StatusBadRequest, "InvalidKey", `prefix is not a valid folder path: folders start with a project's slug, as in "northwind/covers"`}
		}
		folder += "/"
	}
	q.folder, q.pattern = folder, escapeLike(folder)+"%"
	if b.Limit != nil {
		q.limit = *b.Limit
	}
	if q.limit < 1 || q.limit > h.opts.MaxListLimit {
		return q, invalid(fmt.Sprintf("limit must be a whole number from 1 to %d (MASTHEAD_STORAGE_MAX_LIST_LIMIT)", h.opts.MaxListLimit))
	}
	if b.Offset != nil {
		q.offset = *b.Offset
	}
	if q.offset < 0 {
		return q, invalid("offset must be a whole number, 0 or more")
	}
	column, order := "name", "asc"
	if b.SortBy != nil {
		if b.SortBy.Column != nil {
			column = *b.SortBy.Column
		}
		if b.SortBy.Order != nil {
			order = strings.ToLower(*b.SortBy.Order)
		}
	}
	var ok bool
	if q.sql, ok = listQueries[column+" "+order]; !ok {
		return q, invalid("sortBy.column must be one of name, updated_at, created_at, last_accessed_at, and sortBy.order asc or desc")
	}
	search := ""
	if b.Search != nil {
		search = *b.Search
	}
	if len(search) > maxSegmentLen || !utf8.ValidString(search) || strings.IndexFunc(search, unicode.IsControl) >= 0 {
		return q, invalid(fmt.Sprintf("search must be at most %d bytes of text, without control characters", maxSegmentLen))
	}
	q.search = escapeLike(search) + "%"
	return q, nil
}

// validFolder reports whether folder (no leading or trailing slash) could be the folder of a
// key: a project folder, or a path inside one.
func validFolder(folder string) bool {
	return validKey(folder) || (len(folder) <= maxSegmentLen && projectFolder.MatchString(folder))
}

// escapeLike makes s match itself in a LIKE pattern (escape character: backslash).
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// listRow is one row of listSQL or of remove's RETURNING; the pointers are null for a folder.
type listRow struct {
	name             string
	folder           bool
	id, mime         *string
	created, updated *time.Time
	bytes            *int64
}

// entry renders the row under name, copying what it points to (a scan may reuse it).
func (r *listRow) entry(name string) listEntry {
	e := listEntry{Name: name}
	if r.folder {
		return e
	}
	id, created, updated := deref(r.id), deref(r.created), deref(r.updated)
	e.ID, e.CreatedAt, e.UpdatedAt, e.LastAccessedAt = &id, &created, &updated, &updated
	e.Metadata = &listMetadata{Size: deref(r.bytes), Mimetype: deref(r.mime), CacheControl: cacheControl,
		LastModified: updated, ContentLength: deref(r.bytes), HTTPStatusCode: http.StatusOK}
	return e
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
