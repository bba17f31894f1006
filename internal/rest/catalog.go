package rest

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"
)

// tablesSQL lists the columns of the exposed schema's tables and views, and of its composite
// types (relkind c), which are not endpoints but shape what functions return. The comments,
// nullability, defaults and length bounds only describe them (the OpenAPI document).
const tablesSQL = `
select c.relname, c.relkind = 'c', a.attname, format_type(a.atttypid, a.atttypmod),
       c.oid::int8, c.relkind::text, coalesce(obj_description(c.oid, 'pg_class'), ''),
       format_type(a.atttypid, null), a.attnotnull, coalesce(pg_get_expr(d.adbin, d.adrelid), ''),
       coalesce(col_description(c.oid, a.attnum), ''),
       case when a.atttypid in ('varchar'::regtype, 'bpchar'::regtype) and a.atttypmod > 4 then a.atttypmod - 4 else 0 end
from pg_class c
join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
where c.relnamespace = $1::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'f', 'c')
order by c.relname, a.attnum`

func loadTables(ctx context.Context, tx pgx.Tx, s *Schema) error {
	rows, err := tx.Query(ctx, tablesSQL, exposedSchema)
	if err != nil {
		return fmt.Errorf("tables: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var tname, cname, ctype, kind, comment string
		var composite bool
		var oid int64
		var d ColumnDoc
		if err := rows.Scan(&tname, &composite, &cname, &ctype, &oid, &kind, &comment,
			&d.BaseType, &d.NotNull, &d.Default, &d.Comment, &d.MaxLength); err != nil {
			return fmt.Errorf("tables: %w", err)
		}
		into := s.Tables
		if composite {
			into = s.Types
		}
		t := into[tname]
		if t == nil {
			t = newTable(tname, pgx.Identifier{exposedSchema, tname}.Sanitize())
			t.OID, t.Kind, t.Comment = uint32(oid), kind[0], comment
			into[tname] = t
		}
		t.addColumn(cname, ctype)
		t.Columns[len(t.Columns)-1].Doc = d
	}
	return rows.Err()
}

func newTable(name, quoted string) *Table {
	return &Table{Name: name, ColumnByName: map[string]*Column{}, quoted: quoted}
}

// addColumn appends a column; typ is format_type() output from the catalog.
func (t *Table) addColumn(name, typ string) {
	col := &Column{Name: name, Type: typ, quoted: pgx.Identifier{name}.Sanitize()}
	t.Columns = append(t.Columns, col)
	t.ColumnByName[name] = col
}

// keysSQL lists primary keys, unique constraints and foreign keys between
// tables of the exposed schema, each with its columns in key order.
const keysSQL = `
select con.conname, con.contype::text, c.relname, coalesce(f.relname, ''),
       array(select a.attname from unnest(con.conkey) with ordinality k(n, i)
             join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.n order by k.i)::text[],
       array(select a.attname from unnest(coalesce(con.confkey, '{}')) with ordinality k(n, i)
             join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.n order by k.i)::text[]
from pg_constraint con
join pg_class c on c.oid = con.conrelid
left join pg_class f on f.oid = con.confrelid
where c.relnamespace = $1::regnamespace
  and (con.contype in ('p', 'u') or (con.contype = 'f' and f.relnamespace = $1::regnamespace))
  and con.conparentid = 0
order by con.contype desc, c.relname, con.conname`

type fkey struct {
	name, table, foreign string
	cols                 []ColPair
}

func loadKeys(ctx context.Context, tx pgx.Tx, s *Schema) error {
	rows, err := tx.Query(ctx, keysSQL, exposedSchema)
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	defer rows.Close()
	var fks []fkey
	for rows.Next() {
		var name, kind, table, foreign string
		var cols, fcols []string
		if err := rows.Scan(&name, &kind, &table, &foreign, &cols, &fcols); err != nil {
			return fmt.Errorf("keys: %w", err)
		}
		t := s.Tables[table]
		if t == nil {
			continue
		}
		switch kind {
		case "p":
			t.PK = cols
			t.Uniques = append(t.Uniques, cols)
		case "u":
			t.Uniques = append(t.Uniques, cols)
		case "f":
			if s.Tables[foreign] == nil || len(cols) != len(fcols) {
				continue
			}
			fk := fkey{name: name, table: table, foreign: foreign}
			for i := range cols {
				fk.cols = append(fk.cols, ColPair{From: cols[i], To: fcols[i]})
			}
			fks = append(fks, fk)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	origins, err := loadViewColumns(ctx, tx, s)
	if err != nil {
		return err
	}
	fks = s.projectViews(origins, fks)
	addRelationships(s, fks)
	return nil
}

// viewColumnsSQL maps the columns of the exposed schema's views to the table or view columns
// they show unchanged, as PostgREST does: the target list of a view's _RETURN rule records, for
// each output column taken straight from a relation, that relation and column (resorigtbl,
// resorigcol). The view's own target list comes after those of its subqueries in the rule's
// text, so the last entry with the column's number and name is the view's own.
const viewColumnsSQL = `
select distinct on (v.relname, x.resno) v.relname, a.attname, o.relname, oa.attname
from pg_class v
join pg_rewrite r on r.ev_class = v.oid and r.rulename = '_RETURN'
cross join lateral regexp_matches(r.ev_action::text,
  ':resno (\d+) :resname (\S+) :ressortgroupref \d+ :resorigtbl (\d+) :resorigcol (\d+)', 'g') with ordinality as m(f, n)
cross join lateral (select f[1]::int2 as resno, f[2] as resname, f[3]::oid as tbl, f[4]::int2 as col) x
join pg_attribute a on a.attrelid = v.oid and a.attnum = x.resno and a.attname = x.resname
join pg_class o on o.oid = x.tbl and o.relnamespace = $1::regnamespace
join pg_attribute oa on oa.attrelid = o.oid and oa.attnum = x.col
where v.relnamespace = $1::regnamespace and v.relkind in ('v', 'm')
order by v.relname, x.resno, m.n desc`

// colRef is one column of one table or view.
type colRef struct{ table, col string }

// loadViewColumns returns, for each view column that shows a table's column unchanged (through
// any chain of views), that table column.
func loadViewColumns(ctx context.Context, tx pgx.Tx, s *Schema) (map[colRef]colRef, error) {
	rows, err := tx.Query(ctx, viewColumnsSQL, exposedSchema)
	if err != nil {
		return nil, fmt.Errorf("view columns: %w", err)
	}
	defer rows.Close()
	direct := map[colRef]colRef{}
	for rows.Next() {
		var v, c colRef
		if err := rows.Scan(&v.table, &v.col, &c.table, &c.col); err != nil {
			return nil, fmt.Errorf("view columns: %w", err)
		}
		direct[v] = c
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Follow views of views down to a table.
	out := map[colRef]colRef{}
	for v, c := range direct {
		for i := 0; i < 16; i++ {
			next, ok := direct[c]
			if !ok {
				break
			}
			c = next
		}
		if t := s.Tables[c.table]; t != nil && t.Kind != 'v' && t.Kind != 'm' {
			out[v] = c
		}
	}
	return out, nil
}

// projectViews gives views the keys of the tables they show: a view showing all the columns of
// a table's primary key (or of a unique constraint) has that key, under the view's column names,
// so upserts and one-to-one detection work on it; and every foreign key whose columns a view
// shows on either side is a foreign key of the view too (view to table, table to view, view to
// view), named by the same constraint, so embedding works through views as PostgREST's does.
func (s *Schema) projectViews(origins map[colRef]colRef, fks []fkey) []fkey {
	// shown[table][col] lists the view columns showing table.col, by view.
	shown := map[string]map[string]map[string]string{}
	for v, c := range origins {
		if shown[c.table] == nil {
			shown[c.table] = map[string]map[string]string{}
		}
		if shown[c.table][v.table] == nil {
			shown[c.table][v.table] = map[string]string{}
		}
		if _, dup := shown[c.table][v.table][c.col]; !dup || v.col == c.col {
			shown[c.table][v.table][c.col] = v.col
		}
	}
	// project renames cols of table into view's names, or says the view does not show them all.
	project := func(view, table string, cols []string) ([]string, bool) {
		m := shown[table][view]
		out := make([]string, len(cols))
		for i, c := range cols {
			vc, ok := m[c]
			if !ok {
				return nil, false
			}
			out[i] = vc
		}
		return out, true
	}
	views := func(table string) []string {
		vs := make([]string, 0, len(shown[table]))
		for v := range shown[table] {
			vs = append(vs, v)
		}
		slices.Sort(vs)
		return vs
	}
	for _, table := range slices.Sorted(maps.Keys(shown)) {
		t := s.Tables[table]
		for _, view := range views(table) {
			vt := s.Tables[view]
			if vt == nil {
				continue
			}
			if pk, ok := project(view, table, t.PK); ok && len(t.PK) > 0 && len(vt.PK) == 0 {
				vt.PK = pk
			}
			for _, u := range t.Uniques {
				if vu, ok := project(view, table, u); ok {
					vt.Uniques = append(vt.Uniques, vu)
				}
			}
		}
	}
	out := fks
	for _, fk := range fks {
		from, to := fromCols(fk.cols), make([]string, len(fk.cols))
		for i, p := range fk.cols {
			to[i] = p.To
		}
		origins := []struct {
			name string
			cols []string
		}{{fk.table, from}}
		for _, v := range views(fk.table) {
			if cols, ok := project(v, fk.table, from); ok {
				origins = append(origins, struct {
					name string
					cols []string
				}{v, cols})
			}
		}
		targets := []struct {
			name string
			cols []string
		}{{fk.foreign, to}}
		for _, v := range views(fk.foreign) {
			if cols, ok := project(v, fk.foreign, to); ok {
				targets = append(targets, struct {
					name string
					cols []string
				}{v, cols})
			}
		}
		for i, o := range origins {
			for j, g := range targets {
				if i == 0 && j == 0 {
					continue // the table's own key, already there
				}
				p := fkey{name: fk.name, table: o.name, foreign: g.name}
				for k := range o.cols {
					p.cols = append(p.cols, ColPair{From: o.cols[k], To: g.cols[k]})
				}
				out = append(out, p)
			}
		}
	}
	return out
}

// addRelationships derives every relationship PostgREST would: each
// foreign key gives many-to-one (or one-to-one when its columns are unique)
// and the inverse; a table whose primary key covers two foreign keys links
// their targets many-to-many.
func addRelationships(s *Schema, fks []fkey) {
	for _, fk := range fks {
		t, f := s.Tables[fk.table], s.Tables[fk.foreign]
		oneToOne := t.isUnique(fromCols(fk.cols))
		card, inv := ManyToOne, OneToMany
		if oneToOne {
			card, inv = OneToOne, OneToOne
		}
		t.Rels = append(t.Rels, &Relationship{Table: t.Name, Foreign: f.Name, Card: card, Constraint: fk.name, Cols: fk.cols, Forward: true})
		f.Rels = append(f.Rels, &Relationship{Table: f.Name, Foreign: t.Name, Card: inv, Constraint: fk.name, Cols: swapPairs(fk.cols)})
	}
	for _, left := range fks {
		for _, right := range fks {
			if left.table != right.table || left.name == right.name {
				continue
			}
			jt := s.Tables[left.table]
			both := append(fromCols(left.cols), fromCols(right.cols)...)
			if !subset(both, jt.PK) {
				continue
			}
			origin := s.Tables[left.foreign]
			origin.Rels = append(origin.Rels, &Relationship{
				Table: left.foreign, Foreign: right.foreign, Card: ManyToMany,
				Junction: &Junction{Table: jt.Name, LeftConstraint: left.name, RightConstraint: right.name, Left: left.cols, Right: right.cols},
			})
		}
	}
}

func (t *Table) isUnique(cols []string) bool {
	for _, u := range t.Uniques {
		if len(u) == len(cols) && subset(u, cols) {
			return true
		}
	}
	return false
}

func fromCols(ps []ColPair) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.From
	}
	return out
}

func swapPairs(ps []ColPair) []ColPair {
	out := make([]ColPair, len(ps))
	for i, p := range ps {
		out[i] = ColPair{From: p.To, To: p.From}
	}
	return out
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// functionsSQL lists plain functions of the exposed schema with their
// input arguments (variadic marked), the columns their OUT, INOUT and
// TABLE parameters return, and, for a function of one argument that is a
// row of an exposed table or view, that table (a computed column or
// relationship of it). Functions with unnamed inputs cannot be called with
// named JSON arguments and are not offered over /rpc, as PostgREST does.
const functionsSQL = `
select p.proname, p.provolatile::text, p.proretset, p.prorettype = 'void'::regtype,
       coalesce(rt.relname, ''),
       array(select coalesce(x.name, '') from unnest(p.proargnames, coalesce(p.proallargtypes, p.proargtypes::oid[]), p.proargmodes::text[])
               with ordinality as x(name, typ, mode, i) where x.mode is null or x.mode in ('i', 'b', 'v') order by x.i)::text[],
       array(select format_type(x.typ, null) from unnest(p.proargnames, coalesce(p.proallargtypes, p.proargtypes::oid[]), p.proargmodes::text[])
               with ordinality as x(name, typ, mode, i) where x.mode is null or x.mode in ('i', 'b', 'v') order by x.i)::text[],
       p.pronargs, p.pronargdefaults, coalesce('v' = any(p.proargmodes::text[]), false),
       array(select coalesce(x.name, '') from unnest(p.proargnames, p.proallargtypes, p.proargmodes::text[])
               with ordinality as x(name, typ, mode, i) where x.mode in ('o', 'b', 't') order by x.i)::text[],
       array(select format_type(x.typ, null) from unnest(p.proargnames, p.proallargtypes, p.proargmodes::text[])
               with ordinality as x(name, typ, mode, i) where x.mode in ('o', 'b', 't') order by x.i)::text[],
       coalesce((select c.relname from pg_type at join pg_class c on c.oid = at.typrelid
                 where p.pronargs = 1 and at.oid = p.proargtypes[0] and c.relnamespace = $1::regnamespace
                   and c.relkind in ('r', 'p', 'v', 'm', 'f')), ''),
       format_type(p.prorettype, null), p.prorows, p.oid::int8, coalesce(obj_description(p.oid, 'pg_proc'), '')
from pg_proc p
join pg_type t on t.oid = p.prorettype
left join pg_class rt on rt.oid = t.typrelid and rt.relnamespace = $1::regnamespace
where p.pronamespace = $1::regnamespace and p.prokind = 'f' and t.oid <> 'trigger'::regtype
order by p.proname, p.oid`

func loadFunctions(ctx context.Context, tx pgx.Tx, s *Schema) error {
	rows, err := tx.Query(ctx, functionsSQL, exposedSchema)
	if err != nil {
		return fmt.Errorf("functions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		f := &Function{}
		var vol, retType string
		var names, types, outNames, outTypes []string
		var nargs, ndefaults int16
		var variadic bool
		var rowOf, retFormat string
		var prorows float32
		var oid int64
		if err := rows.Scan(&f.Name, &vol, &f.ReturnsSet, &f.ReturnsVoid, &retType,
			&names, &types, &nargs, &ndefaults, &variadic, &outNames, &outTypes, &rowOf, &retFormat, &prorows,
			&oid, &f.Comment); err != nil {
			return fmt.Errorf("functions: %w", err)
		}
		f.Volatile, f.OID = vol[0], uint32(oid)
		if rowOf != "" {
			s.addComputed(f, rowOf, retType, retFormat, prorows)
		}
		callable := true
		for i, n := range names {
			if n == "" {
				callable = false
				break
			}
			f.Args = append(f.Args, Arg{Name: n, Type: types[i], Required: i < int(nargs-ndefaults),
				Variadic: variadic && i == len(names)-1})
		}
		if !callable {
			continue
		}
		f.Result = s.resultOf(f, retType, outNames, outTypes)
		s.Functions[f.Name] = append(s.Functions[f.Name], f)
	}
	return rows.Err()
}

// resultOf is the row shape a function returns, so select, filters, order and embeds apply to
// its result as to a table: the exposed table or view of its return type (embeds included), a
// composite type of the exposed schema, or the columns of its OUT, INOUT or TABLE parameters.
// Scalars, record and composites of other schemas have none (nil) and are answered as values.
func (s *Schema) resultOf(f *Function, retType string, outNames, outTypes []string) *Table {
	if retType != "" {
		if t := s.Tables[retType]; t != nil {
			return t
		}
		return s.Types[retType]
	}
	if len(outNames) == 0 || slices.Contains(outNames, "") {
		return nil
	}
	t := newTable(f.Name, "")
	for i, n := range outNames {
		t.addColumn(n, outTypes[i])
	}
	return t
}

// addComputed registers a function of one row of table as PostgREST's computed fields do: one
// returning rows of an exposed table or view is a computed relationship, named by the function
// (to-one when it returns one row, or SETOF with ROWS 1); one returning a value is a computed
// column, selectable, filterable and orderable by the function's name but never part of *.
func (s *Schema) addComputed(f *Function, table, retType, retFormat string, prorows float32) {
	t := s.Tables[table]
	quotedFn := pgx.Identifier{exposedSchema, f.Name}.Sanitize()
	if target := s.Tables[retType]; target != nil {
		card := OneToMany
		if !f.ReturnsSet || prorows == 1 {
			card = ManyToOne
		}
		t.Rels = append(t.Rels, &Relationship{Table: t.Name, Foreign: target.Name, Card: card,
			Constraint: f.Name, computed: quotedFn, rowType: t.quoted})
		return
	}
	if f.ReturnsSet || f.ReturnsVoid || t.ColumnByName[f.Name] != nil {
		return
	}
	if t.Computed == nil {
		t.Computed = map[string]*Column{}
	}
	t.Computed[f.Name] = &Column{Name: f.Name, Type: retFormat, quoted: pgx.Identifier{f.Name}.Sanitize(),
		computed: quotedFn, rowType: t.quoted}
}
