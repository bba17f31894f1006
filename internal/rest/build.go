package rest

import (
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// sqlb accumulates one statement and its bind parameters. Identifiers come
// only from the schema cache (quoted there with pgx.Identifier); every
// value from the request becomes a $n parameter.
type sqlb struct {
	strings.Builder
	args    [][]byte // text format; PostgreSQL infers each type from its use
	aliases int
	counted map[*node]bool // to-many spreads whose rows are already counted (spreadItem)
}

func (q *sqlb) param(v string) {
	q.args = append(q.args, []byte(v))
	q.WriteByte('$')
	q.WriteString(strconv.Itoa(len(q.args)))
}

// alias returns a fresh table alias; aliases are generated, never taken
// from the request, so self-joins and repeated embeds cannot collide.
func (q *sqlb) alias(prefix string) string {
	q.aliases++
	return `"` + prefix + strconv.Itoa(q.aliases) + `"`
}

func quoteIdent(s string) string { return pgx.Identifier{s}.Sanitize() }

// level writes SELECT <items> FROM <source> AS alias WHERE … ORDER BY …
// LIMIT … for one node. source is the node's table unless a write or a
// function call supplies the rows; parent is the parent level's alias.
// rootOfWrite skips the root's own conditions and range, which the write
// statement has already applied.
//
// A level that skips rows (an offset) and reads more than its own columns (embeds, spreads,
// computed columns) takes its page first, in a subquery (pagedLevel): otherwise PostgreSQL
// computes every embed of the skipped rows too, only for LIMIT to throw them away.
func (q *sqlb) level(n *node, alias, parent, source string, rootOfWrite bool) {
	if source == "" {
		source = q.source(n, parent)
	}
	if !rootOfWrite && n.offset > 0 && !n.aggregated() {
		if cols, ok := n.pageColumns(); ok {
			q.pagedLevel(n, alias, parent, source, cols)
			return
		}
	}
	q.selectList(n, alias)
	q.WriteString(" FROM ")
	q.WriteString(source)
	q.WriteString(" AS ")
	q.WriteString(alias)
	junction := q.from(n)
	if rootOfWrite {
		if inner := n.innerEmbeds(); len(inner) > 0 {
			q.WriteString(" WHERE ")
			q.conjunction(nil, alias, parent, junction, inner)
		}
	} else {
		q.where(n, alias, parent, junction)
	}
	if n.aggregated() {
		q.groupBy(n, alias)
	}
	q.orderBy(n, alias)
	if !rootOfWrite {
		q.limit(n.limit, n.offset)
	}
}

// pagedLevel writes a level as SELECT <items> FROM (SELECT <cols> FROM <source> WHERE …
// ORDER BY … LIMIT … OFFSET …) AS alias ORDER BY …: the filters, order and range pick the
// page's rows inside, and the select list (embeds included) is computed outside over those
// rows only. The subquery keeps the alias, so the select list reads as it would over the
// table; it carries cols, the columns the select list and the order read. The outer ORDER BY
// repeats the inner one (over plain columns PostgreSQL sees the rows already in that order and
// does not sort again), so the page keeps its order whatever the plan.
func (q *sqlb) pagedLevel(n *node, alias, parent, source string, cols []string) {
	q.selectList(n, alias)
	q.WriteString(" FROM (SELECT ")
	if cols == nil {
		q.WriteString(alias + ".*")
	}
	for i, c := range cols {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(alias + "." + c)
	}
	q.WriteString(" FROM ")
	q.WriteString(source)
	q.WriteString(" AS ")
	q.WriteString(alias)
	q.where(n, alias, parent, q.from(n))
	q.orderBy(n, alias)
	q.limit(n.limit, n.offset)
	q.WriteString(") AS ")
	q.WriteString(alias)
	q.orderBy(n, alias)
}

// pageColumns says whether n is worth paging first (pagedLevel): ok when its select list or
// order reads more than its own plain columns. cols are the quoted columns of n those read,
// each once, or nil when something reads the whole row (a computed column or relationship
// takes the row itself), so the page must carry every column.
func (n *node) pageColumns() (cols []string, ok bool) {
	whole := false
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			cols = append(cols, quoteIdent(name))
		}
	}
	rel := func(r *Relationship) {
		ok = true
		switch {
		case r.computed != "":
			whole = true
		case r.Junction != nil:
			for _, p := range r.Junction.Left {
				add(p.To)
			}
		default:
			for _, p := range r.Cols {
				add(p.From)
			}
		}
	}
	col := func(c *Column) {
		if c.computed != "" {
			ok, whole = true, true
			return
		}
		add(c.Name)
	}
	for _, o := range n.out {
		switch {
		case len(o.via) > 0:
			rel(o.via[0].rel)
		case o.embed != nil:
			rel(o.embed.rel)
		case o.col != nil:
			col(o.col)
		}
	}
	for _, o := range n.order {
		if o.embed != nil {
			rel(o.embed.rel)
		} else {
			col(o.col)
		}
	}
	if whole {
		return nil, ok
	}
	return cols, ok
}

// selectList writes SELECT and n's items over alias, each named by its key.
func (q *sqlb) selectList(n *node, alias string) {
	q.WriteString("SELECT ")
	for i, o := range n.out {
		if i > 0 {
			q.WriteString(", ")
		}
		q.outItem(o, alias)
		q.WriteString(" AS ")
		if o.embed == nil && o.col != nil && len(o.via) == 0 && o.name == o.col.Name {
			q.WriteString(o.col.quoted) // the common case, quoted once in the cache
		} else {
			q.WriteString(quoteIdent(o.name))
		}
	}
}

// from adds the junction table of a many-to-many embed and returns its
// alias ("" for direct relationships).
func (q *sqlb) from(n *node) string {
	if n.rel == nil || n.rel.Junction == nil {
		return ""
	}
	j := q.alias("j")
	q.WriteString(", ")
	q.WriteString(pgx.Identifier{exposedSchema, n.rel.Junction.Table}.Sanitize())
	q.WriteString(" AS ")
	q.WriteString(j)
	return j
}

func (q *sqlb) limit(limit, offset int64) {
	if limit >= 0 {
		q.WriteString(" LIMIT ")
		q.param(strconv.FormatInt(limit, 10))
	}
	if offset > 0 {
		q.WriteString(" OFFSET ")
		q.param(strconv.FormatInt(offset, 10))
	}
}

func (n *node) innerEmbeds() []*node {
	var out []*node
	for _, e := range n.embeds {
		if e.join == JoinInner {
			out = append(out, e)
		}
	}
	return out
}

// where writes the join to the parent, the node's conditions and one
// EXISTS per !inner embed, joined with AND.
func (q *sqlb) where(n *node, alias, parent, junction string) {
	if n.rel == nil && len(n.conds) == 0 && len(n.innerEmbeds()) == 0 {
		return
	}
	q.WriteString(" WHERE ")
	q.conjunction(n, alias, parent, junction, n.innerEmbeds())
}

// conjunction writes join AND conds AND inner exists; n may be nil to
// write only the inner embeds.
func (q *sqlb) conjunction(n *node, alias, parent, junction string, inner []*node) {
	first := true
	and := func() {
		if !first {
			q.WriteString(" AND ")
		}
		first = false
	}
	if n != nil && n.rel != nil {
		and()
		q.join(n.rel, alias, parent, junction)
	}
	if n != nil {
		for _, c := range n.conds {
			and()
			q.cond(c, alias)
		}
	}
	for _, e := range inner {
		and()
		q.exists(e, alias)
	}
}

// join writes the relationship condition between a level (alias) and its
// parent: equal key columns, or both keys of the junction table.
func (q *sqlb) join(r *Relationship, alias, parent, junction string) {
	pairs := func(a string, b string, ps []ColPair) {
		for i, p := range ps {
			if i > 0 {
				q.WriteString(" AND ")
			}
			q.WriteString(a + "." + quoteIdent(p.From) + " = " + b + "." + quoteIdent(p.To))
		}
	}
	if r.computed != "" {
		// The function returns only the related rows: nothing to join on.
		q.WriteString("true")
		return
	}
	if j := r.Junction; j != nil {
		pairs(junction, parent, j.Left)
		q.WriteString(" AND ")
		pairs(junction, alias, j.Right)
		return
	}
	pairs(parent, alias, r.Cols)
}

// source is what an embedded level reads: its table, or, for a computed relationship, the
// function called with the parent level's row (aliased parent).
func (q *sqlb) source(e *node, parent string) string {
	if e.rel != nil && e.rel.computed != "" {
		return e.rel.computed + "(" + parent + "::" + e.rel.rowType + ")"
	}
	return e.table.quoted
}

// exists writes EXISTS (…) for a child level: the rows !inner and
// rel=not.is.null require.
func (q *sqlb) exists(e *node, parent string) {
	a := q.alias("x")
	q.WriteString("EXISTS (SELECT 1 FROM ")
	q.WriteString(q.source(e, parent))
	q.WriteString(" AS ")
	q.WriteString(a)
	j := q.from(e)
	q.where(e, a, parent, j)
	q.WriteByte(')')
}

func (q *sqlb) outItem(o outItem, alias string) {
	if o.agg != "" {
		q.aggregate(o, alias)
		return
	}
	if len(o.via) > 0 {
		q.spreadItem(o, o.via, alias)
		return
	}
	if o.embed == nil {
		if o.cast != "" {
			q.WriteByte('(')
		}
		q.column(alias, o.col, o.json)
		if o.cast != "" {
			q.WriteString(")::")
			q.WriteString(o.cast)
		}
		return
	}
	e := o.embed
	s := q.alias("s")
	a := q.alias("t")
	if e.rel.Card.ToOne() {
		q.WriteString("(SELECT row_to_json(" + s + ") FROM (")
		q.level(e, a, alias, "", false)
		q.WriteString(") AS " + s + ")")
		return
	}
	// Every row a to-many embed adds is counted against MASTHEAD_MAX_EMBEDDED_ROWS (009);
	// in the aggregate's FILTER it counts only rows that passed the embed's own filters.
	q.WriteString("COALESCE((SELECT json_agg(" + s + ") FILTER (WHERE app.embedded_row()) FROM (")
	q.level(e, a, alias, "", false)
	q.WriteString(") AS " + s + "), '[]'::json)")
}

// aggregate writes agg(value)[::cast]: count(*) for count() without a column; the value is the
// item's column (with its JSON path and input cast), possibly through to-one spreads, so a
// spread's columns aggregate at this level as PostgREST does.
func (q *sqlb) aggregate(o outItem, alias string) {
	if o.aggCast != "" {
		q.WriteByte('(')
	}
	q.WriteString(o.agg + "(")
	if o.col == nil {
		q.WriteByte('*')
	} else {
		inner := o
		inner.agg, inner.aggCast = "", ""
		q.outItem(inner, alias)
	}
	q.WriteByte(')')
	if o.aggCast != "" {
		q.WriteString(")::" + o.aggCast)
	}
}

// groupBy writes GROUP BY for a level with aggregates: its columns (its own and those of
// to-one spreads) by their position in the select list, and, for embeds, whose JSON cannot be
// compared, the columns the level joins them on (their values follow from those). Without
// any, the level is one group.
func (q *sqlb) groupBy(n *node, alias string) {
	var keys []string
	seen := map[string]bool{}
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	joinCols := func(r *Relationship) {
		if r.Junction != nil {
			for _, p := range r.Junction.Left {
				add(alias + "." + quoteIdent(p.To))
			}
			return
		}
		for _, p := range r.Cols {
			add(alias + "." + quoteIdent(p.From))
		}
	}
	for i, o := range n.out {
		switch {
		case o.agg != "":
		case o.embed != nil && len(o.via) > 0:
			joinCols(o.via[0].rel)
		case o.embed != nil:
			joinCols(o.embed.rel)
		default: // a column, its own or a to-one spread's: grouped by its value
			add(strconv.Itoa(i + 1))
		}
	}
	if len(keys) == 0 {
		return
	}
	q.WriteString(" GROUP BY " + strings.Join(keys, ", "))
}

// spreadItem writes an item that came through spread embeds (via, outermost first) from the
// level aliased parent: a subquery of the first spread's row for a to-one spread, or the JSON
// array of the item over its rows for a to-many one (its rows counted against the
// embedded-rows cap once, by the first of its items).
func (q *sqlb) spreadItem(o outItem, via []*node, parent string) {
	e := via[0]
	a := q.alias("p")
	inner := func() {
		if len(via) > 1 {
			q.spreadItem(o, via[1:], a)
		} else {
			o.via = nil
			q.outItem(o, a)
		}
	}
	if e.rel.Card.ToOne() {
		q.WriteString("(SELECT ")
		inner()
		q.WriteString(" FROM " + q.source(e, parent) + " AS " + a)
		q.where(e, a, parent, q.from(e))
		q.WriteString(")")
		return
	}
	s := q.alias("s")
	q.WriteString("COALESCE((SELECT json_agg(" + s + `."v")`)
	if !q.counted[e] {
		if q.counted == nil {
			q.counted = map[*node]bool{}
		}
		q.counted[e] = true
		q.WriteString(" FILTER (WHERE app.embedded_row())")
	}
	q.WriteString(" FROM (SELECT ")
	inner()
	q.WriteString(` AS "v" FROM ` + q.source(e, parent) + " AS " + a)
	q.where(e, a, parent, q.from(e))
	q.orderBy(e, a)
	q.limit(e.limit, e.offset)
	q.WriteString(") AS " + s + "), '[]'::json)")
}

// column writes alias.col with its JSON path; keys and indexes are
// parameters. A path into a column that is not JSON (an array, a composite)
// reads its to_jsonb form, as PostgREST does.
func (q *sqlb) column(alias string, c *Column, path []JSONStep) {
	toJSON := len(path) > 0 && c.Type != "json" && c.Type != "jsonb"
	if toJSON {
		q.WriteString("to_jsonb(")
	}
	if c.computed != "" {
		// A computed column: the function of the level's row.
		q.WriteString(c.computed + "(" + alias + "::" + c.rowType + ")")
	} else {
		q.WriteString(alias)
		q.WriteByte('.')
		q.WriteString(c.quoted)
	}
	if toJSON {
		q.WriteByte(')')
	}
	for _, st := range path {
		if st.Text {
			q.WriteString(" ->> ")
		} else {
			q.WriteString(" -> ")
		}
		q.param(st.Key)
		if st.Index {
			q.WriteString("::integer")
		} else {
			q.WriteString("::text")
		}
	}
}

var sqlOps = map[Operator]string{
	OpEq: "=", OpNeq: "<>", OpGt: ">", OpGte: ">=", OpLt: "<", OpLte: "<=",
	OpLike: "LIKE", OpILike: "ILIKE", OpMatch: "~", OpIMatch: "~*",
	OpCs: "@>", OpCd: "<@", OpOv: "&&", OpSl: "<<", OpSr: ">>", OpNxr: "&<", OpNxl: "&>", OpAdj: "-|-",
	OpIsDistinct: "IS DISTINCT FROM",
}

var ftsFuncs = map[Operator]string{
	OpFts: "to_tsquery", OpPlFts: "plainto_tsquery", OpPhFts: "phraseto_tsquery", OpWFts: "websearch_to_tsquery",
}

var isSQL = map[string]string{
	"null": " IS NULL", "not_null": " IS NOT NULL", "true": " IS TRUE", "false": " IS FALSE", "unknown": " IS UNKNOWN",
}

func (q *sqlb) cond(c cond, alias string) {
	if c.group {
		if c.not {
			q.WriteString("NOT ")
		}
		q.WriteByte('(')
		for i, k := range c.kids {
			if i > 0 {
				if c.or {
					q.WriteString(" OR ")
				} else {
					q.WriteString(" AND ")
				}
			}
			q.cond(k, alias)
		}
		q.WriteByte(')')
		return
	}
	e := c.expr
	if c.embed != nil {
		// embed=is.null means no related row; not.is.null and is.not_null
		// mean at least one.
		exists := (e.Value == "not_null") != e.Not
		if !exists {
			q.WriteString("NOT ")
		}
		q.exists(c.embed, alias)
		return
	}
	if e.Not {
		q.WriteString("NOT (")
	}
	if ftsFuncs[e.Op] != "" && (len(c.json) > 0 || c.col.Type != "tsvector") {
		q.WriteString("to_tsvector(")
		if e.Language != "" {
			q.param(e.Language)
			q.WriteString("::regconfig, ")
		}
		q.column(alias, c.col, c.json)
		q.WriteByte(')')
	} else {
		q.column(alias, c.col, c.json)
	}
	switch {
	case e.Op == OpIs:
		q.WriteString(isSQL[e.Value])
	case e.Op == OpIn:
		q.WriteString(" = ANY(")
		q.param(pg.ArrayLiteral(e.List))
		q.WriteByte(')')
	case ftsFuncs[e.Op] != "":
		// column was written above; a column that is not a tsvector is searched through
		// to_tsvector with the same configuration, as PostgREST does.
		q.WriteString(" @@ " + ftsFuncs[e.Op] + "(")
		if e.Language != "" {
			q.param(e.Language)
			q.WriteString("::regconfig, ")
		}
		q.param(e.Value)
		q.WriteByte(')')
	default:
		v := e.Value
		if e.Op == OpLike || e.Op == OpILike {
			v = strings.ReplaceAll(v, "*", "%")
		}
		q.WriteString(" " + sqlOps[e.Op] + " ")
		switch e.Quant {
		case QuantAny:
			q.WriteString("ANY(")
		case QuantAll:
			q.WriteString("ALL(")
		}
		q.param(v)
		if e.Quant != QuantNone {
			q.WriteByte(')')
		}
	}
	if e.Not {
		q.WriteByte(')')
	}
}

func (q *sqlb) orderBy(n *node, alias string) {
	if len(n.order) == 0 {
		return
	}
	q.WriteString(" ORDER BY ")
	for i, o := range n.order {
		if i > 0 {
			q.WriteString(", ")
		}
		if o.embed != nil {
			a := q.alias("o")
			q.WriteString("(SELECT ")
			q.column(a, o.col, o.json)
			q.WriteString(" FROM " + q.source(o.embed, alias) + " AS " + a + " WHERE ")
			q.join(o.embed.rel, a, alias, "")
			q.WriteByte(')')
		} else {
			q.column(alias, o.col, o.json)
		}
		switch o.dir {
		case DirAsc:
			q.WriteString(" ASC")
		case DirDesc:
			q.WriteString(" DESC")
		}
		switch o.nulls {
		case NullsFirst:
			q.WriteString(" NULLS FIRST")
		case NullsLast:
			q.WriteString(" NULLS LAST")
		}
	}
}

// stmt is the finished statement for pg.ExecAsCaller.
func (q *sqlb) stmt() pg.Stmt { return pg.Stmt{SQL: q.String(), Params: q.args} }
