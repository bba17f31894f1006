package rest

import (
	"net/http"
	"slices"
	"strings"
)

// node is one level of a read: the root resource or one embed, with
// everything the query string asked of that level, checked against the
// schema cache. The SQL builder only ever reads names from here.
type node struct {
	table  *Table
	name   string        // JSON key of an embed
	rel    *Relationship // how the node joins its parent; nil at the root
	join   JoinType
	out    []outItem
	embeds []*node
	conds  []cond
	order  []orderItem
	offset int64
	limit  int64 // -1: none
}

// outItem is one key of the JSON object: a column, an aggregate or an embed,
// of the node itself or, through via, of the spread embeds it came from
// (outermost first).
type outItem struct {
	name    string
	col     *Column // nil for an embed and for count()
	json    []JSONStep
	cast    string // canonical SQL type from castTypes
	embed   *node
	via     []*node
	agg     string // count, sum, avg, max or min: the node's rows are grouped
	aggCast string // canonical SQL type for the aggregate's result
}

// castType checks a client's ::type against the allowlist ("" stays "").
func castType(name string) (string, *Error) {
	if name == "" {
		return "", nil
	}
	if t := castTypes[strings.ToLower(name)]; t != "" {
		return t, nil
	}
	return "", &Error{Status: http.StatusBadRequest, Code: "42704", Message: "type \"" + name + "\" does not exist"}
}

// aggregated says whether n's rows are grouped: one of its keys is an aggregate.
func (n *node) aggregated() bool {
	for _, o := range n.out {
		if o.agg != "" {
			return true
		}
	}
	return false
}

// planOpts are the handler's settings that change what a query may ask.
type planOpts struct {
	aggregates bool // MASTHEAD_DB_AGGREGATES_ENABLED: to-many spreads and aggregate functions
}

// errAggregates is PGRST123: an aggregate or a to-many spread while aggregates are off.
var errAggregates = &Error{Status: http.StatusBadRequest, Code: "PGRST123", Message: "Use of aggregate functions is not allowed"}

func errNotImplemented(details string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "PGRST127", Message: "Feature not implemented", Details: details}
}

// cond is a leaf condition on a column, a null test on an embed, or an
// and/or group of conds.
type cond struct {
	not, or bool
	kids    []cond
	group   bool
	col     *Column
	json    []JSONStep
	embed   *node
	expr    OpExpr
}

type orderItem struct {
	embed *node // set when ordering by a to-one embed's column
	col   *Column
	json  []JSONStep
	dir   Direction
	nulls Nulls
}

// castTypes is the allowlist for col::type: the key is what a client may
// write, the value the SQL emitted. Nothing else reaches SQL as a type.
var castTypes = map[string]string{
	"text": "text", "varchar": "varchar", "char": "char", "name": "name",
	"int": "integer", "integer": "integer", "int4": "integer", "int2": "smallint", "smallint": "smallint",
	"int8": "bigint", "bigint": "bigint", "numeric": "numeric", "decimal": "numeric",
	"real": "real", "float4": "real", "float8": "double precision", "double precision": "double precision",
	"boolean": "boolean", "bool": "boolean", "json": "json", "jsonb": "jsonb", "uuid": "uuid",
	"date": "date", "time": "time", "timestamp": "timestamp", "timestamptz": "timestamptz", "interval": "interval",
}

// errInvalidPath is PGRST125: the URL names no resource (/rest/v1/a/b, /rest/v1/rpc, …).
func errInvalidPath() *Error {
	return &Error{Status: http.StatusNotFound, Code: "PGRST125", Message: "Invalid path specified in request URL"}
}

// errNoTable is PGRST205, with the closest table's name as a hint when one is close enough.
func (s *Schema) errNoTable(name string) *Error {
	if strings.Contains(name, "/") { // no table is called that: the path itself is wrong
		return errInvalidPath()
	}
	e := &Error{Status: http.StatusNotFound, Code: "PGRST205",
		Message: "Could not find the table '" + exposedSchema + "." + name + "' in the schema cache"}
	names := make([]string, 0, len(s.Tables))
	for n := range s.Tables {
		names = append(names, n)
	}
	slices.Sort(names)
	if best, _, ok := closest(names, name, 0.75); ok {
		e.Hint = "Perhaps you meant the table '" + exposedSchema + "." + best + "'"
	}
	return e
}

func errNoColumn(t *Table, col string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "42703",
		Message: "column " + t.Name + "." + col + " does not exist"}
}

func errNotEmbedded(name string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "PGRST108",
		Message: "'" + name + "' is not an embedded resource in this request",
		Hint:    "Verify that '" + name + "' is included in the 'select' query parameter."}
}

// table looks up a table of the exposed schema by its URL name.
func (s *Schema) table(name string) (*Table, *Error) {
	t := s.Tables[name]
	if t == nil {
		return nil, s.errNoTable(name)
	}
	return t, nil
}

// planRead checks a parsed query against the schema and returns the tree
// of levels to read. maxRows caps the root, as PostgREST's db-max-rows.
func (s *Schema) planRead(t *Table, q *Query, opts planOpts) (*node, *Error) {
	root := &node{table: t, limit: -1}
	items := q.Select
	if len(items) == 0 {
		// select= with nothing is every column, as an absent select.
		items = []SelectItem{{Star: true}}
	}
	if err := s.planSelect(root, items, 0, opts); err != nil {
		return nil, err
	}
	if err := root.applyQuery(q); err != nil {
		return nil, err
	}
	return root, nil
}

// applyQuery attaches filters, logic trees, order and ranges to the
// levels their embed paths name.
func (root *node) applyQuery(q *Query) *Error {
	for _, f := range q.Filters {
		n, err := root.find(f.Path)
		if err != nil {
			return err
		}
		c, err := n.leaf(f.Field, f.Expr)
		if err != nil {
			return err
		}
		n.conds = append(n.conds, c)
	}
	for _, l := range q.Logic {
		n, err := root.find(l.Path)
		if err != nil {
			return err
		}
		c, err := n.tree(l.Tree)
		if err != nil {
			return err
		}
		n.conds = append(n.conds, c)
	}
	for _, o := range q.Order {
		n, err := root.find(o.Path)
		if err != nil {
			return err
		}
		n.order = n.order[:0]
		for _, t := range o.Terms {
			it, err := n.orderItem(t)
			if err != nil {
				return err
			}
			n.order = append(n.order, it)
		}
	}
	for _, r := range q.Ranges {
		n, err := root.find(r.Path)
		if err != nil {
			return err
		}
		n.offset = r.Offset
		if r.HasLimit {
			n.limit = r.Limit
		}
	}
	return nil
}

func (s *Schema) planSelect(n *node, items []SelectItem, depth int, opts planOpts) *Error {
	size := len(items)
	for _, it := range items {
		if it.Star {
			size += len(n.table.Columns)
		}
	}
	n.out = make([]outItem, 0, size)
	for _, it := range items {
		switch {
		case it.Star:
			for _, c := range n.table.Columns {
				n.out = append(n.out, outItem{name: c.Name, col: c})
			}
		case it.Embed != nil:
			rel, err := s.findRel(n.table, it.Embed.Relation, it.Embed.Hint)
			if err != nil {
				return err
			}
			child := &node{table: s.Tables[rel.Foreign], name: it.Name(), rel: rel, join: it.Embed.Join, limit: -1}
			if err := s.planSelect(child, it.Embed.Select, depth+1, opts); err != nil {
				return err
			}
			n.embeds = append(n.embeds, child)
			if it.Embed.Spread {
				if err := spreadInto(n, child, opts); err != nil {
					return err
				}
				continue
			}
			if len(it.Embed.Select) == 0 {
				// rel() selects nothing: the embed only filters (rel.col=…, rel=not.is.null,
				// !inner) and is left out of the body.
				continue
			}
			n.out = append(n.out, outItem{name: child.name, embed: child})
		default:
			o := outItem{name: it.Name(), json: it.Field.JSON, agg: it.Aggregate}
			if it.Aggregate != "" && !opts.aggregates {
				return errAggregates
			}
			if it.Field.Name != "" { // count() has no column
				if o.col = n.table.column(it.Field.Name); o.col == nil {
					return errNoColumn(n.table, it.Field.Name)
				}
			}
			var err *Error
			if o.cast, err = castType(it.Cast); err != nil {
				return err
			}
			if o.aggCast, err = castType(it.AggCast); err != nil {
				return err
			}
			n.out = append(n.out, o)
		}
	}
	return nil
}

// find walks an embed path (aliases or relation names) from n.
func (n *node) find(path []string) (*node, *Error) {
	cur := n
	for _, name := range path {
		next := cur.child(name)
		if next == nil {
			return nil, errNotEmbedded(name)
		}
		cur = next
	}
	return cur, nil
}

func (n *node) child(name string) *node {
	for _, e := range n.embeds {
		if e.name == name {
			return e
		}
	}
	for _, e := range n.embeds {
		if e.table.Name == name {
			return e
		}
	}
	return nil
}

// leaf resolves column.op.value, or embed.is.null / embed.not.is.null,
// which tests whether related rows exist (PostgREST's null filtering on
// embedded resources).
func (n *node) leaf(f Field, e OpExpr) (cond, *Error) {
	if col := n.table.column(f.Name); col != nil {
		return cond{col: col, json: f.JSON, expr: e}, nil
	}
	if emb := n.child(f.Name); emb != nil && len(f.JSON) == 0 {
		if e.Op != OpIs || (e.Value != "null" && e.Value != "not_null") {
			return cond{}, &Error{Status: http.StatusBadRequest, Code: "PGRST120",
				Message: "Bad operator on the '" + f.Name + "' embedded resource",
				Details: "Only is null or not is null filters are allowed on embedded resources"}
		}
		return cond{embed: emb, expr: e}, nil
	}
	return cond{}, errNoColumn(n.table, f.Name)
}

func (n *node) tree(t LogicTree) (cond, *Error) {
	if t.Leaf != nil {
		return n.leaf(t.Leaf.Field, t.Leaf.Expr)
	}
	c := cond{group: true, not: t.Not, or: t.Or}
	for _, k := range t.Children {
		kc, err := n.tree(k)
		if err != nil {
			return cond{}, err
		}
		c.kids = append(c.kids, kc)
	}
	return c, nil
}

func (n *node) orderItem(t OrderTerm) (orderItem, *Error) {
	it := orderItem{json: t.Field.JSON, dir: t.Dir, nulls: t.Nulls}
	on := n
	if t.Relation != "" {
		emb := n.child(t.Relation)
		if emb == nil {
			return it, errNotEmbedded(t.Relation)
		}
		if !emb.rel.Card.ToOne() {
			return it, &Error{Status: http.StatusBadRequest, Code: "PGRST118",
				Message: "A related order on '" + emb.table.Name + "' is not possible",
				Details: "'" + n.table.Name + "' and '" + emb.table.Name + "' do not form a many-to-one or one-to-one relationship"}
		}
		it.embed, on = emb, emb
	}
	it.col = on.table.column(t.Field.Name)
	if it.col == nil {
		return it, errNoColumn(on.table, t.Field.Name)
	}
	return it, nil
}

// spreadInto adds a spread embed's keys to n's own. A to-one spread gives its values; a
// to-many one (only with aggregates enabled, as in PostgREST) gives each key as the array of
// its values over the related rows, where a nested to-one spread adds arrays of its values and
// a nested to-one embed an array of objects. Deeper to-many nesting inside a to-many spread is
// not implemented.
func spreadInto(n, child *node, opts planOpts) *Error {
	if !child.rel.Card.ToOne() {
		if !opts.aggregates {
			return errAggregates
		}
		for _, o := range child.out {
			toMany := o.embed != nil && !o.embed.rel.Card.ToOne()
			for _, v := range o.via {
				toMany = toMany || !v.rel.Card.ToOne()
			}
			if toMany {
				return errNotImplemented("A to-many spread embed ('" + child.name + "') may hold columns, to-one spread embeds and to-one embeds, not to-many ones")
			}
		}
	}
	for _, o := range child.out {
		if o.agg != "" && !child.rel.Card.ToOne() {
			return errNotImplemented("An aggregate inside a to-many spread embed ('" + child.name + "') is not supported")
		}
		o.via = append([]*node{child}, o.via...)
		n.out = append(n.out, o)
	}
	return nil
}
