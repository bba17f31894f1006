package rest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// findRel picks the relationship an embed names, as PostgREST does: target is
// a table of the exposed schema, or, for a to-one embed through a foreign key
// the origin holds, that key's constraint name or (single) column
// (client:client_id(*)); hint (optional) is a constraint name, a column of the
// foreign key, or a junction table. No match is PGRST200; several are PGRST201
// (300 Multiple Choices) listing the candidates.
//
// A computed relationship (a function of the origin's row returning rows of
// a table) is named by its function, and wins over a table of that name.
//
// A foreign key from a table to itself leads both ways, to the parent and to
// the children, so PostgREST finds it ambiguous even with a hint, and its own
// suggestions cannot tell the two apart. Here the parent is named as any
// to-one embed by column or constraint (parent:parent_id(*)), and the table
// with a hint naming that key means the children (topics!parent_id(*)).
func (s *Schema) findRel(origin *Table, target, hint string) (*Relationship, *Error) {
	var found []*Relationship
	for _, r := range origin.Rels {
		// A computed relationship is named by its function, and takes precedence over
		// foreign keys to a table of that name, as in PostgREST.
		if r.computed != "" && r.Constraint == target {
			return r, nil
		}
	}
	for _, r := range origin.Rels {
		if r.computed != "" {
			continue
		}
		byKey := r.Forward && (r.Constraint == target || (r.fkCol() != "" && r.fkCol() == target))
		if (r.Foreign == target || byKey) && (hint == "" || r.matchesHint(hint)) {
			found = append(found, r)
		}
	}
	if len(found) == 2 && hint != "" && found[0].selfRef() && found[1].selfRef() && found[0].Constraint == found[1].Constraint {
		if found[0].Forward {
			return found[1], nil
		}
		return found[0], nil
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		details := "Searched for a foreign key relationship between '" + origin.Name + "' and '" + target
		if hint != "" {
			details += "' using the hint '" + hint
		}
		details += "' in the schema '" + exposedSchema + "', but no matches were found."
		return nil, &Error{Status: http.StatusBadRequest, Code: "PGRST200",
			Message: "Could not find a relationship between '" + origin.Name + "' and '" + target + "' in the schema cache",
			Details: details, Hint: s.relHint(origin, target)}
	}
	type candidate struct {
		Cardinality  string `json:"cardinality"`
		Embedding    string `json:"embedding"`
		Relationship string `json:"relationship"`
	}
	var cands []candidate
	var options []string
	for _, r := range found {
		cands = append(cands, candidate{r.Card.String(), origin.Name + " with " + r.Foreign, r.describe()})
		switch {
		case r.selfRef() && r.Forward:
			// The parent of a self-reference: by its column (or constraint), to-one.
			if c := r.fkCol(); c != "" {
				options = append(options, "'"+c+"'")
			} else {
				options = append(options, "'"+r.Constraint+"'")
			}
		default:
			// PostgREST names the relationship's table, which differs from target when the
			// embed named a constraint or a column.
			options = append(options, "'"+r.Foreign+"!"+r.hintName()+"'")
		}
	}
	details, _ := json.Marshal(cands)
	return nil, &Error{Status: http.StatusMultipleChoices, Code: "PGRST201",
		Message:     "Could not embed because more than one relationship was found for '" + origin.Name + "' and '" + target + "'",
		DetailsJSON: details,
		Hint:        "Try changing '" + target + "' to one of the following: " + strings.Join(options, ", ") + ". Find the desired relationship in the 'details' key."}
}

func (r *Relationship) matchesHint(hint string) bool {
	if r.Junction != nil {
		j := r.Junction
		return hint == j.Table || hint == j.LeftConstraint || hint == j.RightConstraint
	}
	if hint == r.Constraint {
		return true
	}
	return slices.ContainsFunc(r.Cols, func(p ColPair) bool { return p.From == hint || p.To == hint })
}

// hintName is the hint that selects r, offered in PGRST201's hint.
func (r *Relationship) hintName() string {
	if r.Junction != nil {
		return r.Junction.Table
	}
	return r.Constraint
}

func (r *Relationship) describe() string {
	if j := r.Junction; j != nil {
		return j.Table + " using " + j.LeftConstraint + "(" + strings.Join(fromCols(j.Left), ", ") + ") and " +
			j.RightConstraint + "(" + strings.Join(fromCols(j.Right), ", ") + ")"
	}
	to := swapPairs(r.Cols)
	return r.Constraint + " using " + r.Table + "(" + strings.Join(fromCols(r.Cols), ", ") + ") and " +
		r.Foreign + "(" + strings.Join(fromCols(to), ", ") + ")"
}

// relHint is PGRST200's "Perhaps you meant …": a table origin relates to whose name is close
// to target (but not target itself, which then only failed its hint), or, when origin relates
// to nothing, a table with relationships whose name is close to origin's.
func (s *Schema) relHint(origin *Table, target string) string {
	if len(origin.Rels) > 0 {
		var targets []string
		for _, r := range origin.Rels {
			if !slices.Contains(targets, r.Foreign) {
				targets = append(targets, r.Foreign)
			}
		}
		if best, score, ok := closest(targets, target, 0.33); ok && score < 1 {
			return "Perhaps you meant '" + best + "' instead of '" + target + "'."
		}
		return ""
	}
	var related []string
	for name, t := range s.Tables {
		if len(t.Rels) > 0 {
			related = append(related, name)
		}
	}
	slices.Sort(related)
	if best, _, ok := closest(related, origin.Name, 0.33); ok {
		return "Perhaps you meant '" + best + "' instead of '" + origin.Name + "'."
	}
	return ""
}
