package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// The OpenAPI document: GET /rest/v1/ answers the Swagger 2.0 description PostgREST serves at
// its root (in its default openapi-mode, follow-privileges), built from the schema cache and
// cut down to what the caller's role may use. The cache knows the structure (tables, views,
// columns, types, keys, functions, comments); one query run as the caller says which of them
// its grants reach. RLS still decides which rows any of it returns.

const mediaOpenAPI = "application/openapi+json"

// privilegesSQL lists, as the caller, the tables and views of the exposed schema it holds any
// privilege on (with what it may write and the columns it may use) and the functions it may
// execute, by oid. Writes need both the grant and, for a view, that the view can take them.
const privilegesSQL = `
select json_build_object(
  'tables', coalesce((select json_agg(json_build_object(
      'oid', c.oid::int8,
      'insert', (has_table_privilege(c.oid, 'INSERT') or has_any_column_privilege(c.oid, 'INSERT'))
                and (c.relkind in ('r', 'p') or pg_relation_is_updatable(c.oid, true) & 8 = 8),
      'update', (has_table_privilege(c.oid, 'UPDATE') or has_any_column_privilege(c.oid, 'UPDATE'))
                and (c.relkind in ('r', 'p') or pg_relation_is_updatable(c.oid, true) & 4 = 4),
      'delete', has_table_privilege(c.oid, 'DELETE')
                and (c.relkind in ('r', 'p') or pg_relation_is_updatable(c.oid, true) & 16 = 16),
      'columns', (select coalesce(json_agg(a.attname), '[]') from pg_attribute a
                  where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
                    and has_column_privilege(c.oid, a.attnum, 'SELECT, INSERT, UPDATE'))))
    from pg_class c
    where c.relnamespace = $1::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'f')
      and (has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE')
           or has_any_column_privilege(c.oid, 'SELECT, INSERT, UPDATE'))), '[]'),
  'functions', coalesce((select json_agg(p.oid::int8) from pg_proc p
    where p.pronamespace = $1::regnamespace and has_function_privilege(p.oid, 'EXECUTE')), '[]'))::text`

// grants is privilegesSQL's answer.
type grants struct {
	Tables []struct {
		OID                    uint32
		Insert, Update, Delete bool
		Columns                []string
	}
	Functions []uint32
}

// openapi serves GET and HEAD /rest/v1/ (and /rest/v1).
func (h *Handler) openapi(c echo.Context) error {
	r := c.Request()
	caller, err := h.auth.Caller(r)
	if err != nil {
		return h.fail(c, h.authError(err))
	}
	if p := r.Header.Get("Accept-Profile"); p != "" && p != exposedSchema {
		return h.fail(c, errProfile(p))
	}
	if accept := r.Header.Get("Accept"); !acceptsOpenAPI(accept) {
		return h.fail(c, errMedia(accept))
	}
	rq := &request{c: c, caller: caller, schema: h.schema.Schema(), path: "/"}
	var g grants
	stmt := pg.Stmt{SQL: privilegesSQL, Params: [][]byte{[]byte(exposedSchema)}}
	err = h.run(rq, false, []pg.Stmt{stmt}, func(rs []*pgconn.Result) error {
		if len(rs) != 1 || len(rs[0].Rows) != 1 {
			return errors.New("rest: privileges query did not return one row")
		}
		return json.Unmarshal(rs[0].Rows[0][0], &g)
	})
	if err != nil {
		return h.fail(c, err)
	}
	if r.Method == http.MethodHead {
		c.Response().Header().Set(echo.HeaderContentType, mediaOpenAPI+"; charset=utf-8")
		return c.NoContent(http.StatusOK)
	}
	// PostgREST writes its notes' markup (<pk/>, <fk …/>) as is, not \u003c-escaped.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(buildOpenAPI(rq.schema, &g, c.Request().Host, c.Scheme())); err != nil {
		return h.fail(c, err)
	}
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return blob(c, http.StatusOK, mediaOpenAPI+"; charset=utf-8", body)
}

// acceptsOpenAPI says whether Accept allows the document: absent, */*, application/* or either
// of the two media types PostgREST answers it in.
func acceptsOpenAPI(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case mediaOpenAPI, mediaJSON, "*/*", "application/*":
			return true
		}
	}
	return false
}

// The document's parts, in Swagger 2.0's vocabulary. Maps marshal with sorted keys, so the
// same schema and grants give the same bytes.
type (
	swagger struct {
		Swagger      string                `json:"swagger"`
		Info         swaggerInfo           `json:"info"`
		Host         string                `json:"host"`
		BasePath     string                `json:"basePath"`
		Schemes      []string              `json:"schemes"`
		Consumes     []string              `json:"consumes"`
		Produces     []string              `json:"produces"`
		Paths        map[string]pathItem   `json:"paths"`
		Definitions  map[string]*schemaObj `json:"definitions"`
		Parameters   map[string]*param     `json:"parameters"`
		ExternalDocs externalDocs          `json:"externalDocs"`
	}
	swaggerInfo struct {
		Description string `json:"description"`
		Title       string `json:"title"`
		Version     string `json:"version"`
	}
	externalDocs struct {
		Description string `json:"description"`
		URL         string `json:"url"`
	}
	pathItem  map[string]*operation // method → operation
	operation struct {
		Description string              `json:"description,omitempty"`
		Summary     string              `json:"summary,omitempty"`
		Tags        []string            `json:"tags"`
		Produces    []string            `json:"produces,omitempty"`
		Parameters  []any               `json:"parameters,omitempty"` // *param or ref
		Responses   map[string]response `json:"responses"`
	}
	response struct {
		Description string     `json:"description"`
		Schema      *schemaObj `json:"schema,omitempty"`
	}
	ref struct {
		Ref string `json:"$ref"`
	}
	schemaObj struct {
		Ref         string                `json:"$ref,omitempty"`
		Description string                `json:"description,omitempty"`
		Default     json.RawMessage       `json:"default,omitempty"`
		Format      string                `json:"format,omitempty"`
		MaxLength   int                   `json:"maxLength,omitempty"`
		Type        string                `json:"type,omitempty"`
		Items       *schemaObj            `json:"items,omitempty"`
		Properties  map[string]*schemaObj `json:"properties,omitempty"`
		Required    []string              `json:"required,omitempty"`
	}
	param struct {
		Name             string     `json:"name"`
		Description      string     `json:"description,omitempty"`
		Required         bool       `json:"required"`
		In               string     `json:"in"`
		Type             string     `json:"type,omitempty"`
		Format           string     `json:"format,omitempty"`
		Enum             []string   `json:"enum,omitempty"`
		Default          string     `json:"default,omitempty"`
		Items            *schemaObj `json:"items,omitempty"`
		CollectionFormat string     `json:"collectionFormat,omitempty"`
		Schema           *schemaObj `json:"schema,omitempty"`
	}
)

// mediaTypes are what tables answer and take, as PostgREST lists them.
var mediaTypes = []string{mediaJSON, mediaObject + ";nulls=stripped", mediaObject, mediaCSV}

// buildOpenAPI writes the document for the tables and functions g names, as PostgREST's
// OpenAPI module does: one definition, one path and row filters per table or view, one path per
// function (POST, and GET unless it is volatile), the shared parameters.
func buildOpenAPI(s *Schema, g *grants, host, scheme string) *swagger {
	doc := &swagger{
		Swagger: "2.0",
		Info: swaggerInfo{Title: "Masthead", Version: "13",
			Description: "PostgREST-compatible interface to Masthead's public schema, as the caller's role sees it."},
		Host: host, BasePath: "/rest/v1", Schemes: []string{scheme},
		Consumes: mediaTypes, Produces: mediaTypes,
		Paths: map[string]pathItem{"/": {"get": {
			Tags: []string{"Introspection"}, Summary: "OpenAPI description (this document)",
			Produces: []string{mediaOpenAPI, mediaJSON}, Responses: map[string]response{"200": {Description: "OK"}},
		}}},
		Definitions:  map[string]*schemaObj{},
		Parameters:   commonParams(),
		ExternalDocs: externalDocs{Description: "PostgREST Documentation", URL: "https://postgrest.org/en/v13/references/api.html"},
	}
	byOID := map[uint32]*Table{}
	for _, t := range s.Tables {
		byOID[t.OID] = t
	}
	for _, tg := range g.Tables {
		t := byOID[tg.OID]
		if t == nil {
			continue // created after the cache was loaded
		}
		var cols []*Column
		for _, name := range tg.Columns {
			if c := t.ColumnByName[name]; c != nil {
				cols = append(cols, c)
			}
		}
		doc.Definitions[t.Name] = tableDefinition(t, cols)
		doc.Parameters["body."+t.Name] = &param{Name: t.Name, Description: t.Name, In: "body", Schema: &schemaObj{Ref: "#/definitions/" + t.Name}}
		for _, c := range cols {
			doc.Parameters["rowFilter."+t.Name+"."+c.Name] = &param{Name: c.Name, Description: c.Doc.Comment,
				In: "query", Type: "string", Format: c.Doc.BaseType}
		}
		doc.Paths["/"+t.Name] = tablePath(t, cols, tg.Insert || tg.Update || tg.Delete)
	}
	executable := map[uint32]bool{}
	for _, oid := range g.Functions {
		executable[oid] = true
	}
	for name, overloads := range s.Functions {
		for _, f := range overloads {
			if executable[f.OID] {
				doc.Paths["/rpc/"+name] = functionPath(f)
				break
			}
		}
	}
	return doc
}

// commonParams are PostgREST's shared parameter definitions.
func commonParams() map[string]*param {
	query := func(name, desc string) *param {
		return &param{Name: name, Description: desc, In: "query", Type: "string"}
	}
	prefer := func(values ...string) *param {
		return &param{Name: "Prefer", Description: "Preference", In: "header", Type: "string", Enum: values}
	}
	returns := []string{"return=representation", "return=minimal", "return=none"}
	return map[string]*param{
		// PostgREST v12 dropped params=single-object; its document keeps the parameter, empty.
		"preferParams": prefer(),
		"preferReturn": prefer(returns...),
		"preferCount":  prefer("count=none"),
		"preferPost":   prefer(append(returns, "resolution=ignore-duplicates", "resolution=merge-duplicates")...),
		"select":       query("select", "Filtering Columns"),
		"on_conflict":  query("on_conflict", "On Conflict"),
		"order":        query("order", "Ordering"),
		"range":        {Name: "Range", Description: "Limiting and Pagination", In: "header", Type: "string"},
		"rangeUnit":    {Name: "Range-Unit", Description: "Limiting and Pagination", In: "header", Type: "string", Default: "items"},
		"offset":       query("offset", "Limiting and Pagination"),
		"limit":        query("limit", "Limiting and Pagination"),
	}
}

// tableDefinition describes a table's or view's row: its columns the caller may use, with
// type, format, default, length bound and description (the column's comment, then PostgREST's
// notes on primary and foreign keys); required are those NOT NULL.
func tableDefinition(t *Table, cols []*Column) *schemaObj {
	d := &schemaObj{Type: "object", Description: t.Comment, Properties: map[string]*schemaObj{}}
	for _, c := range cols {
		p := typeSchema(c.Doc.BaseType)
		p.Description = columnDescription(t, c)
		p.Default = defaultValue(c.Doc.BaseType, c.Doc.Default)
		p.MaxLength = c.Doc.MaxLength
		d.Properties[c.Name] = p
		if c.Doc.NotNull {
			d.Required = append(d.Required, c.Name)
		}
	}
	return d
}

// columnDescription is the column's comment followed, for a key, by PostgREST's notes (which
// tools such as Supabase's table editor read).
func columnDescription(t *Table, c *Column) string {
	notes := []string{"Note:"}
	for _, pk := range t.PK {
		if pk == c.Name {
			notes = append(notes, "This is a Primary Key.<pk/>")
		}
	}
	for _, r := range t.Rels {
		if r.Forward && r.Junction == nil && r.computed == "" && len(r.Cols) == 1 && r.Cols[0].From == c.Name {
			f, col := r.Foreign, r.Cols[0].To
			notes = append(notes, "This is a Foreign Key to `"+f+"."+col+"`.<fk table='"+f+"' column='"+col+"'/>")
			break
		}
	}
	if len(notes) == 1 {
		return c.Doc.Comment
	}
	if c.Doc.Comment != "" {
		return c.Doc.Comment + "\n\n" + strings.Join(notes, "\n")
	}
	return strings.Join(notes, "\n")
}

// swaggerType maps a PostgreSQL type to Swagger's as PostgREST does: JSON is untyped (""),
// arrays are arrays, every other type not numeric or boolean is a string.
func swaggerType(typ string) string {
	switch typ {
	case "character varying", "character", "text":
		return "string"
	case "boolean":
		return "boolean"
	case "smallint", "integer", "bigint":
		return "integer"
	case "numeric", "real", "double precision":
		return "number"
	case "json", "jsonb":
		return ""
	}
	if strings.HasSuffix(typ, "[]") {
		return "array"
	}
	return "string"
}

// typeSchema is the schema of a value of typ: its Swagger type, typ as its format, and the
// element type of an array.
func typeSchema(typ string) *schemaObj {
	s := &schemaObj{Type: swaggerType(typ), Format: typ}
	if s.Type == "array" {
		s.Items = &schemaObj{Type: swaggerType(strings.TrimSuffix(typ, "[]"))}
	}
	return s
}

// defaultValue renders a column default as PostgREST does: for a string type the literal
// without its cast and quotes ('draft'::text is "draft", gen_random_uuid() is
// "gen_random_uuid()"); any other default only when it is JSON already (0, true).
func defaultValue(typ, def string) json.RawMessage {
	if def == "" {
		return nil
	}
	if swaggerType(typ) == "string" {
		if lit, ok := strings.CutSuffix(def, "::"+typ); ok {
			def = strings.Trim(lit, "'")
		}
		b, _ := json.Marshal(def)
		return b
	}
	if !json.Valid([]byte(def)) {
		return nil
	}
	return json.RawMessage(def)
}

// tablePath is a table's or view's operations: GET always; POST, PATCH and DELETE when the
// caller may write it at all.
func tablePath(t *Table, cols []*Column, writable bool) pathItem {
	refs := func(names ...string) []any {
		out := make([]any, 0, len(cols)+len(names))
		for _, n := range names {
			if n == "rowFilters" {
				for _, c := range cols {
					out = append(out, ref{"#/parameters/rowFilter." + t.Name + "." + c.Name})
				}
				continue
			}
			out = append(out, ref{"#/parameters/" + n})
		}
		return out
	}
	summary, desc, _ := strings.Cut(t.Comment, "\n")
	desc = strings.TrimLeft(desc, "\n")
	op := func(params []any, responses map[string]response) *operation {
		return &operation{Tags: []string{t.Name}, Summary: summary, Description: desc, Parameters: params, Responses: responses}
	}
	p := pathItem{"get": op(refs("rowFilters", "select", "order", "range", "rangeUnit", "offset", "limit", "preferCount"),
		map[string]response{
			"200": {Description: "OK", Schema: &schemaObj{Type: "array", Items: &schemaObj{Ref: "#/definitions/" + t.Name}}},
			"206": {Description: "Partial Content"},
		})}
	if writable {
		p["post"] = op(refs("body."+t.Name, "select", "preferPost"), map[string]response{"201": {Description: "Created"}})
		p["patch"] = op(refs("rowFilters", "body."+t.Name, "preferReturn"), map[string]response{"204": {Description: "No Content"}})
		p["delete"] = op(refs("rowFilters", "preferReturn"), map[string]response{"204": {Description: "No Content"}})
	}
	return p
}

// functionPath is a function's operations: POST with its arguments as a JSON object, and, unless
// it is volatile, GET with them as query parameters (a variadic one repeated).
func functionPath(f *Function) pathItem {
	summary, desc, _ := strings.Cut(f.Comment, "\n")
	desc = strings.TrimLeft(desc, "\n")
	op := func(params []any) *operation {
		return &operation{Tags: []string{"(rpc) " + f.Name}, Summary: summary, Description: desc,
			Produces: []string{mediaJSON, mediaObject + ";nulls=stripped", mediaObject}, Parameters: params,
			Responses: map[string]response{"200": {Description: "OK"}}}
	}
	args := &schemaObj{Type: "object", Description: f.Comment, Properties: map[string]*schemaObj{}}
	var query []any
	for _, a := range f.Args {
		args.Properties[a.Name] = typeSchema(a.Type)
		if a.Required {
			args.Required = append(args.Required, a.Name)
		}
		q := &param{Name: a.Name, Required: a.Required, In: "query"}
		switch t := swaggerType(a.Type); {
		case a.Variadic:
			elem := strings.TrimSuffix(a.Type, "[]")
			q.Type, q.CollectionFormat = t, "multi"
			q.Items = &schemaObj{Type: swaggerType(elem), Format: elem}
		case t == "array" || t == "":
			q.Type, q.Format = "string", a.Type // arrays go as {a,b}; JSON as text
		default:
			q.Type, q.Format = t, a.Type
		}
		query = append(query, q)
	}
	p := pathItem{"post": op([]any{&param{Name: "args", Required: true, In: "body", Schema: args}, ref{"#/parameters/preferParams"}})}
	if f.Volatile != 'v' {
		p["get"] = op(query)
	}
	return p
}
