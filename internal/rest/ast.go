package rest

// Field is a column reference with an optional JSON path, e.g.
// limits->>max_chars.
type Field struct {
	Name string
	JSON []JSONStep
}

// JSONStep is one -> (Text false) or ->> (Text true) step. Index steps
// address array elements; keys and indexes both reach SQL as parameters.
type JSONStep struct {
	Text  bool
	Index bool
	Key   string // the key, or the index digits with an optional minus
}

// SelectItem is one entry of select=: a column (or *), an aggregate of a
// column (col.sum(), count()) or an embed.
type SelectItem struct {
	Alias string
	Star  bool
	Field Field  // empty Name for count()
	Cast  string // ::type, checked against an allowlist by the planner
	Embed *Embed // non-nil when the item embeds a related resource
	// Aggregate is count, sum, avg, max or min; AggCast casts its result.
	Aggregate string
	AggCast   string
}

// JoinType is the !left / !inner modifier of an embed.
type JoinType uint8

const (
	JoinDefault JoinType = iota
	JoinLeft
	JoinInner
)

// Embed is rel!hint!inner(items): a related resource nested in the row, or,
// spread (...rel(items)), whose items join the row's own keys.
type Embed struct {
	Relation string
	Hint     string
	Join     JoinType
	Spread   bool
	Select   []SelectItem
}

// Name is the key of the embed in the JSON body and in embedded paths.
func (it SelectItem) Name() string {
	if it.Alias != "" {
		return it.Alias
	}
	if it.Aggregate != "" {
		return it.Aggregate
	}
	if it.Embed != nil {
		return it.Embed.Relation
	}
	// A JSON path names the value by its last key, as PostgREST does; array indexes do not
	// name it (data->>0 is "data", data->c->>0 is "c").
	for i := len(it.Field.JSON) - 1; i >= 0; i-- {
		if !it.Field.JSON[i].Index {
			return it.Field.JSON[i].Key
		}
	}
	return it.Field.Name
}

// Operator is a filter operator as spelled in the URL.
type Operator string

// The operators of PostgREST's filter grammar.
const (
	OpEq         Operator = "eq"
	OpNeq        Operator = "neq"
	OpGt         Operator = "gt"
	OpGte        Operator = "gte"
	OpLt         Operator = "lt"
	OpLte        Operator = "lte"
	OpLike       Operator = "like"
	OpILike      Operator = "ilike"
	OpMatch      Operator = "match"
	OpIMatch     Operator = "imatch"
	OpIn         Operator = "in"
	OpIs         Operator = "is"
	OpIsDistinct Operator = "isdistinct"
	OpFts        Operator = "fts"
	OpPlFts      Operator = "plfts"
	OpPhFts      Operator = "phfts"
	OpWFts       Operator = "wfts"
	OpCs         Operator = "cs"
	OpCd         Operator = "cd"
	OpOv         Operator = "ov"
	OpSl         Operator = "sl"
	OpSr         Operator = "sr"
	OpNxr        Operator = "nxr"
	OpNxl        Operator = "nxl"
	OpAdj        Operator = "adj"
)

// Quantifier is the (any)/(all) modifier that compares with every element
// of an array value.
type Quantifier uint8

const (
	QuantNone Quantifier = iota
	QuantAny
	QuantAll
)

// OpExpr is the right-hand side of a filter: [not.]op[(mod)].value.
type OpExpr struct {
	Not      bool
	Op       Operator
	Quant    Quantifier
	Language string   // fts(language)
	Value    string   // the value; for is: null, not_null, true, false or unknown
	List     []string // the values of in.(…)
}

// Filter is a condition on a column of the root (Path empty) or of an
// embedded resource named by Path (aliases or relation names).
type Filter struct {
	Path  []string
	Field Field
	Expr  OpExpr
}

// LogicTree is and(…)/or(…) with optional not., or a leaf filter.
type LogicTree struct {
	Not      bool
	Or       bool
	Children []LogicTree
	Leaf     *Filter // set on leaves; its Path is always empty
}

// Logic is an and=/or= parameter, on the root or an embedded path.
type Logic struct {
	Path []string
	Tree LogicTree
}

// Direction is .asc / .desc; Nulls is .nullsfirst / .nullslast.
type (
	Direction uint8
	Nulls     uint8
)

const (
	DirDefault Direction = iota
	DirAsc
	DirDesc
)

const (
	NullsDefault Nulls = iota
	NullsFirst
	NullsLast
)

// OrderTerm orders by a column, or, when Relation is set, by a column of a
// to-one embed (rel(col).desc).
type OrderTerm struct {
	Relation string
	Field    Field
	Dir      Direction
	Nulls    Nulls
}

// Order is an order= parameter on the root or an embedded path.
type Order struct {
	Path  []string
	Terms []OrderTerm
}

// Range is limit/offset on the root or an embedded path.
type Range struct {
	Path     []string
	Offset   int64
	Limit    int64
	HasLimit bool
}

// Param is a query-string argument of GET /rpc/fn.
type Param struct {
	Name, Value string
}
