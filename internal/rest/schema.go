package rest

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// exposedSchema is the one schema served over /rest/v1. auth and app are
// never exposed: only their objects' names in public reach SQL.
const exposedSchema = "public"

// Schema is a snapshot of the exposed schema read from pg_catalog. It is
// immutable once built; a reload swaps in a new snapshot, so a request
// plans against one consistent view.
type Schema struct {
	Tables    map[string]*Table
	Types     map[string]*Table // composite types: function results, never endpoints
	Functions map[string][]*Function
}

// Table is a table or view of the exposed schema.
type Table struct {
	Name         string
	quoted       string // "public"."name", quoted once by pgx.Identifier
	Columns      []*Column
	ColumnByName map[string]*Column
	PK           []string
	Uniques      [][]string // primary key and unique constraints, for one-to-one detection
	Rels         []*Relationship
	Computed     map[string]*Column // computed columns: functions of one row of this table
	OID          uint32             // pg_class oid, to match the caller's privileges
	Kind         byte               // relkind: r, p, v, m, f (c for composite types)
	Comment      string             // COMMENT ON TABLE/VIEW, "" without one
}

// column finds a column to read: a real one, or a computed one.
func (t *Table) column(name string) *Column {
	if c := t.ColumnByName[name]; c != nil {
		return c
	}
	return t.Computed[name]
}

// Column is one column; Type is format_type() output, trusted SQL text
// from the catalog.
type Column struct {
	Name   string
	quoted string // "name", quoted once by pgx.Identifier
	Type   string
	// computed is the quoted function of a computed column, called with the row cast to
	// rowType (the table's quoted name); "" for a real column.
	computed, rowType string
	// Doc describes the column for the OpenAPI document only; planning never reads it.
	Doc ColumnDoc
}

// ColumnDoc is what the OpenAPI document says of a column beyond its name and type.
type ColumnDoc struct {
	BaseType  string // format_type without modifiers: "character varying", "text[]"
	NotNull   bool
	Default   string // the default's SQL text, "" without one
	Comment   string // COMMENT ON COLUMN, "" without one
	MaxLength int    // n of character varying(n) / character(n), else 0
}

// Cardinality of a relationship seen from its origin table.
type Cardinality uint8

const (
	ManyToOne Cardinality = iota
	OneToMany
	OneToOne
	ManyToMany
)

func (c Cardinality) String() string {
	return [...]string{"many-to-one", "one-to-many", "one-to-one", "many-to-many"}[c]
}

// ToOne reports whether embedding along c yields an object (or null).
func (c Cardinality) ToOne() bool { return c == ManyToOne || c == OneToOne }

// ColPair joins a column of the origin (From) to one of the target (To).
type ColPair struct{ From, To string }

// Relationship is a foreign key seen from one side, or a many-to-many
// link through a junction table whose primary key covers both keys.
type Relationship struct {
	Table      string
	Foreign    string
	Card       Cardinality
	Constraint string
	Cols       []ColPair // direct relationships
	Junction   *Junction // many-to-many only
	// Forward says the origin holds the foreign key (its columns are the From side); the
	// relationship then leads to one row, and may be named by its constraint or its column.
	Forward bool
	// computed is the quoted function of a computed relationship (Constraint is its name),
	// called with the origin's row cast to rowType; its rows are the related ones.
	computed, rowType string
}

// fkCol is the referencing column of a single-column foreign key ("" otherwise).
func (r *Relationship) fkCol() string {
	if r.Junction != nil || len(r.Cols) != 1 {
		return ""
	}
	if r.Forward {
		return r.Cols[0].From
	}
	return r.Cols[0].To
}

// selfRef says r is one direction of a foreign key from a table to itself.
func (r *Relationship) selfRef() bool { return r.Junction == nil && r.Table == r.Foreign }

// Junction is the middle table of a many-to-many relationship: Left joins
// it to the origin, Right to the target (From = junction column).
type Junction struct {
	Table                           string
	LeftConstraint, RightConstraint string
	Left, Right                     []ColPair
}

// Function is a function of the exposed schema callable over /rpc.
type Function struct {
	Name        string
	Args        []Arg
	ReturnsSet  bool
	ReturnsVoid bool
	// Result is the row shape of what the function returns (see resultOf), or nil for values
	// (scalars, arrays, record); select, filters and embeds on the result resolve against it.
	Result   *Table
	Volatile byte   // 'i', 's' or 'v'
	OID      uint32 // pg_proc oid, to match the caller's privileges
	Comment  string // COMMENT ON FUNCTION, "" without one
}

// Arg is one input argument.
type Arg struct {
	Name     string
	Type     string
	Required bool
	Variadic bool // VARIADIC: repeated query or form parameters make its array
}

// SchemaCache holds the current Schema and reloads it on demand.
type SchemaCache struct {
	pool *pgxpool.Pool
	cur  atomic.Pointer[Schema]
}

// NewSchemaCache loads the schema once; call Listen to follow reloads.
func NewSchemaCache(ctx context.Context, pool *pgxpool.Pool) (*SchemaCache, error) {
	c := &SchemaCache{pool: pool}
	if err := c.Reload(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Schema returns the current snapshot.
func (c *SchemaCache) Schema() *Schema { return c.cur.Load() }

// Reload reads pg_catalog again and swaps the snapshot in. The server
// calls it on SIGHUP; Listen calls it on NOTIFY masthead, 'reload schema'.
func (c *SchemaCache) Reload(ctx context.Context) error {
	s, err := loadSchema(ctx, c.pool)
	if err != nil {
		return fmt.Errorf("rest: load schema cache: %w", err)
	}
	c.cur.Store(s)
	return nil
}

// loadSchema runs the catalog queries in one read-only transaction so the
// snapshot is consistent.
func loadSchema(ctx context.Context, pool *pgxpool.Pool) (*Schema, error) {
	s := &Schema{Tables: map[string]*Table{}, Types: map[string]*Table{}, Functions: map[string][]*Function{}}
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := loadTables(ctx, tx, s); err != nil {
			return err
		}
		if err := loadKeys(ctx, tx, s); err != nil {
			return err
		}
		return loadFunctions(ctx, tx, s)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}
