package rest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// findRel picks the relationship an embed names: target is a table of
// the exposed schema, hint (optional) a constraint name, a column of the
// foreign key, or a junction table. No match is PGRST200; several are
// PGRST201 (300 Multiple Choices) listing the candidates, as PostgREST.
func (s *Schema) findRel(origin *Table, target, hint string) (*Relationship, *Error) {
	var found []*Relationship
	for _, r := range origin.Rels {
		if r.Foreign == target && (hint == "" || r.matchesHint(hint)) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		details := "Searched for a foreign key relationship between '" + origin.Name + "' and '" + target + "'"
		if hint != "" {
			details += " using the hint '" + hint + "'"
		}
		details += " in the schema '" + exposedSchema + "', but no matches were found."
		return nil, &Error{Status: http.StatusBadRequest, Code: "PGRST200",
			Message: "Could not find a relationship between '" + origin.Name + "' and '" + target + "' in the schema cache",
			Details: details}
	}
	type candidate struct {
		Cardinality  string `json:"cardinality"`
		Embedding    string `json:"embedding"`
		Relationship string `json:"relationship"`
	}
	var cands []candidate
	var options []string
	for _, r := range found {
		cands = append(cands, candidate{r.Card.String(), origin.Name + " with " + target, r.describe()})
		options = append(options, "'"+target+"!"+r.hintName()+"'")
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
