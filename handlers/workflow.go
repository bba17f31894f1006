package handlers

import (
	"slices"

	"masthead/internal/client"
	"masthead/views/pages"
)

// step is one workflow action as the dashboard offers it. The table mirrors DESIGN.md's
// workflow table; it only decides which buttons to show. Whether a step is allowed is decided
// by the service, which refuses a forged one whatever this table says.
type step struct {
	rpc   string
	label string
	from  []string
	roles []string
	// note: "" no note, "optional" or "required" (a markdown note with a preview)
	note  string
	style string
	// notAuthor hides the step from the publication's author (nobody approves their own work).
	notAuthor bool
	schedule  bool
	// verdict puts the step in the one review composer instead of a form of its own.
	verdict bool
	done    string // what the live region and notice say afterwards
}

// reviewKey names the composer where a step's name would be (its note field and preview).
const reviewKey = "review"

// confirmText is what is asked before a step that is hard to take back; "" for the others.
func confirmText(rpc, title string) string {
	switch rpc {
	case client.RPCPublishNow:
		return "Publish “" + title + "” now? It goes live at once."
	case client.RPCArchive:
		return "Archive “" + title + "”? It leaves circulation until a lead restores it."
	case client.RPCReopen:
		return "Reopen “" + title + "” to draft? Its date is cleared and it must be submitted and approved again."
	}
	return ""
}

var (
	editorPlus   = []string{"editor", "lead", "owner"}
	reviewerPlus = []string{"reviewer", "lead", "owner"}
	leadPlus     = []string{"lead", "owner"}
)

// steps in the order they appear on the page: the likely next move first.
var steps = []step{
	{rpc: client.RPCApprove, label: "Approve", from: []string{"reviewing"}, roles: reviewerPlus, note: "optional", style: "primary", notAuthor: true, verdict: true, done: "Approved."},
	{rpc: client.RPCRequestChanges, label: "Request changes", from: []string{"reviewing"}, roles: reviewerPlus, note: "required", verdict: true, done: "Changes requested."},
	{rpc: client.RPCSubmit, label: "Submit for review", from: []string{"draft", "changes_requested"}, roles: editorPlus, note: "optional", style: "primary", done: "Submitted for review."},
	{rpc: client.RPCSchedule, label: "Schedule", from: []string{"approved"}, roles: leadPlus, schedule: true, style: "primary", done: "Scheduled."},
	{rpc: client.RPCSchedule, label: "Reschedule", from: []string{"scheduled"}, roles: leadPlus, schedule: true, done: "Rescheduled."},
	{rpc: client.RPCPublishNow, label: "Publish now", from: []string{"approved", "scheduled"}, roles: leadPlus, done: "Published."},
	{rpc: client.RPCUnschedule, label: "Unschedule", from: []string{"scheduled"}, roles: leadPlus, done: "Unscheduled; it is approved and waiting for a date."},
	{rpc: client.RPCReopen, label: "Reopen to draft", from: []string{"approved", "scheduled"}, roles: leadPlus, note: "required", done: "Reopened to draft; it can be edited again."},
	{rpc: client.RPCWithdraw, label: "Withdraw to draft", from: []string{"reviewing", "changes_requested"}, roles: editorPlus, note: "optional", done: "Withdrawn to draft."},
	{rpc: client.RPCRestore, label: "Restore to draft", from: []string{"archived"}, roles: leadPlus, done: "Restored to draft."},
	{rpc: client.RPCArchive, label: "Archive", from: []string{"draft", "approved", "published"}, roles: leadPlus, note: "optional", style: "danger", done: "Archived."},
	{rpc: client.RPCAddReview, label: "Add comment", roles: reviewerPlus, note: "required", verdict: true, done: "Comment added."},
}

// offered lists the steps this role may take on a publication in status; author says whether
// the person wrote it.
func offered(role, status string, author bool) []step {
	var out []step
	for _, s := range steps {
		if !slices.Contains(s.roles, role) || (s.from != nil && !slices.Contains(s.from, status)) || (s.notAuthor && author) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// stepFor finds the step an action URL names, for the publication's status, so the right
// wording is used; rpc alone suffices when the status no longer matches (a conflict).
func stepFor(rpc, status string) (step, bool) {
	var fallback *step
	for i, s := range steps {
		if s.rpc != rpc {
			continue
		}
		if s.from == nil || slices.Contains(s.from, status) {
			return s, true
		}
		if fallback == nil {
			fallback = &steps[i]
		}
	}
	if fallback != nil {
		return *fallback, true
	}
	return step{}, false
}

// roleOwner is the role that manages a project's members and settings.
const roleOwner = "owner"

// roles are the project roles (DESIGN.md "Access") as people read them, most powerful first,
// with what each may do; the database's check constraint on project_members.role names the
// same five (a test holds the two together).
var roles = []pages.RoleOption{
	{Key: "owner", Label: "Owner", Does: "Everything a lead may, plus members, invitations and the project's settings."},
	{Key: "lead", Label: "Lead", Does: "Everything an editor and a reviewer may, plus scheduling, publishing, archiving and collections."},
	{Key: "editor", Label: "Editor", Does: "Writes drafts, promos and media; submits them for review and withdraws them."},
	{Key: "reviewer", Label: "Reviewer", Does: "Reviews: comments, approves (never their own work) and requests changes."},
	{Key: "viewer", Label: "Viewer", Does: "Reads everything in the project; changes nothing."},
}

// roleLabel is a role's word, or the key itself for a role this dashboard does not know.
func roleLabel(key string) string {
	for _, r := range roles {
		if r.Key == key {
			return r.Label
		}
	}
	return key
}
