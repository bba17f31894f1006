package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/pages"
)

// scheduleLimit bounds one schedule page: the scheduled publications of the window first, then
// the approved ones waiting for a date.
const scheduleLimit = 200

// agendaWeeks is how far ahead the agenda looks.
const agendaWeeks = 8

// scheduleAll is GET /schedule: every project of the person.
func (a *App) scheduleAll(c echo.Context) error { return a.schedule(c, "") }

// scheduleProject is GET /p/:slug/schedule.
func (a *App) scheduleProject(c echo.Context) error { return a.schedule(c, c.Param("slug")) }

// schedule shows scheduled publications by day (agenda, or a month with ?view=month) and the
// approved ones waiting for a date, with reschedule and unschedule forms for leads. Days are cut
// in one stated timezone: the project's, or, across projects, their common one (else UTC).
func (a *App) schedule(c echo.Context, slug string) error {
	pc, err := a.loadProjects(c, slug)
	if err != nil {
		return a.fail(c, err)
	}
	byID := map[string]*client.Project{}
	for i := range pc.all {
		byID[pc.all[i].ID] = &pc.all[i]
	}
	heading, base, ret := "Schedule of all projects", "/schedule", "schedule-all"
	f := client.ScheduleFilter{Limit: scheduleLimit}
	if pc.project != nil {
		f.ProjectIDs = []string{pc.project.ID}
		heading, base, ret = "Schedule · "+pc.project.Name, scheduleURL(pc.project.Slug), "schedule"
	} else {
		pc.clock = newClock(commonTimezone(pc.all), a.now())
	}
	k := pc.clock
	month := c.QueryParam("view") == "month"
	first := monthStart(c.QueryParam("month"), k)
	if month {
		f.From, f.To = first.AddDate(0, 0, -7), first.AddDate(0, 1, 7)
	} else {
		now := k.now.In(k.loc)
		f.From = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, k.loc)
		f.To = f.From.AddDate(0, 0, 7*agendaWeeks)
	}
	var rows []client.Publication
	f.Now = a.now()
	var ran client.SchedulerStatus
	err = a.call(c, func(token string) error {
		var err error
		if rows, err = a.api.Schedule(ctx(c), token, f); err != nil {
			return err
		}
		ran, err = a.api.Scheduler(ctx(c), token)
		return err
	})
	if err != nil {
		return a.fail(c, err)
	}
	m := pages.ScheduleModel{
		Page:      a.frameSection(c, heading, pc, "schedule"),
		Heading:   heading,
		Timezone:  k.zoneName(),
		AgendaURL: base,
		MonthURL:  base + "?view=month",
		Empty:     "Nothing is scheduled in the next " + strconv.Itoa(agendaWeeks) + " weeks.",
	}
	m.SchedulerRan, m.SchedulerLate = schedulerWords(ran, a.now())
	csrf := str(stateOf(c).sess, keyCSRF)
	var scheduled []pages.ScheduleItem
	var days []time.Time
	for _, p := range rows {
		proj := byID[p.ProjectID]
		if proj == nil {
			continue
		}
		it := pages.ScheduleItem{
			URL: publicationURL(proj.Slug, p.ID), Title: p.Title, Status: status(p.Status),
		}
		if pc.project == nil {
			it.Project = proj.Name
		}
		pk := newClock(proj.Timezone, a.now())
		if slices.Contains(leadPlus, proj.RoleOf(pc.userID)) {
			it.Manage = scheduleControls(p, proj.Slug, pk, csrf, ret)
		}
		if p.ScheduledFor == nil {
			m.Waiting = append(m.Waiting, it)
			continue
		}
		local := p.ScheduledFor.In(k.loc)
		it.When = k.time(*p.ScheduledFor)
		it.Overdue = overdue(p, a.now())
		it.TimeOfDay = local.Format("15:04")
		scheduled = append(scheduled, it)
		days = append(days, time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, k.loc))
	}
	if month {
		m.Month = monthGrid(first, base, k, scheduled, days)
	} else {
		m.Days = agenda(k, scheduled, days)
	}
	return a.render(c, http.StatusOK, pages.Schedule(m))
}

// commonTimezone is the timezone all projects share, else UTC.
func commonTimezone(ps []client.Project) string {
	if len(ps) == 0 {
		return "UTC"
	}
	tz := ps[0].Timezone
	for _, p := range ps[1:] {
		if p.Timezone != tz {
			return "UTC"
		}
	}
	return tz
}

func scheduleControls(p client.Publication, slug string, k clock, csrf, ret string) *pages.ScheduleControls {
	base := publicationURL(slug, p.ID)
	sc := &pages.ScheduleControls{
		ID: p.ID, ScheduleURL: base + "/actions/" + client.RPCSchedule, CSRF: csrf,
		ExpectedVersion: strconv.Itoa(p.Version), Timezone: k.zoneName(), ReturnTo: ret,
		Min: k.now.In(k.loc).Format(dateTimeInput), ScheduleLabel: "Schedule",
	}
	if p.ScheduledFor != nil {
		sc.Value = p.ScheduledFor.In(k.loc).Format(dateTimeInput)
		sc.UnscheduleURL = base + "/actions/" + client.RPCUnschedule
		sc.ScheduleLabel = "Reschedule"
	}
	return sc
}

// agenda groups items (in date order already) by their day.
func agenda(k clock, items []pages.ScheduleItem, days []time.Time) []pages.ScheduleDay {
	var out []pages.ScheduleDay
	now := k.now.In(k.loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, k.loc)
	for i, it := range items {
		label := days[i].Format("Monday 2 January 2006")
		if n := len(out); n == 0 || out[n-1].Label != label {
			out = append(out, pages.ScheduleDay{Label: label, Relative: dayRelative(days[i], today)})
		}
		out[len(out)-1].Items = append(out[len(out)-1].Items, it)
	}
	return out
}

// monthStart is the first day of month (yyyy-mm), or of the current month.
func monthStart(month string, k clock) time.Time {
	// The month view reads from a week before the month, and before January of year 1 lies year
	// 0, which PostgreSQL does not have: a month of year 1 or 0 shows this month instead.
	if t, err := time.ParseInLocation("2006-01", month, k.loc); err == nil && t.Year() > 1 {
		return t
	}
	now := k.now.In(k.loc)
	return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, k.loc)
}

// monthGrid lays the month starting at first out in weeks from Monday.
func monthGrid(first time.Time, base string, k clock, items []pages.ScheduleItem, days []time.Time) *pages.MonthGrid {
	now := k.now.In(k.loc)
	link := func(t time.Time) string {
		return base + "?" + url.Values{"view": {"month"}, "month": {t.Format("2006-01")}}.Encode()
	}
	g := &pages.MonthGrid{Label: first.Format("January 2006"), PrevURL: link(first.AddDate(0, -1, 0)), NextURL: link(first.AddDate(0, 1, 0))}
	byDay := map[string][]pages.ScheduleItem{}
	for i, it := range items {
		key := days[i].Format(dateInput)
		byDay[key] = append(byDay[key], it)
	}
	start := first.AddDate(0, 0, -((int(first.Weekday()) + 6) % 7))
	today := now.Format(dateInput)
	for d := start; d.Before(first.AddDate(0, 1, 0)) || d.Weekday() != time.Monday; d = d.AddDate(0, 0, 1) {
		if d.Weekday() == time.Monday {
			g.Weeks = append(g.Weeks, nil)
		}
		w := len(g.Weeks) - 1
		g.Weeks[w] = append(g.Weeks[w], pages.MonthCell{
			Day: strconv.Itoa(d.Day()), InMonth: d.Month() == first.Month(),
			Today: d.Format(dateInput) == today, Items: byDay[d.Format(dateInput)],
		})
	}
	return g
}

// overdue says "Due 3 minutes ago, not yet published" for a scheduled publication whose time
// has passed, else "".
func overdue(p client.Publication, now time.Time) string {
	if p.Status != "scheduled" || p.ScheduledFor == nil || !p.ScheduledFor.Before(now) {
		return ""
	}
	return "Due " + relative(*p.ScheduledFor, now) + ", not yet published"
}

// schedulerWords says when the scheduler last ran, and whether it is late: it has not run for
// three of its intervals, so scheduled items may not go live on time.
func schedulerWords(s client.SchedulerStatus, now time.Time) (string, bool) {
	if s.LastRunAt == nil {
		return "The scheduler has not run yet: scheduled items go live once a service instance runs it.", true
	}
	every := time.Duration(s.IntervalMS) * time.Millisecond
	words := "The scheduler last ran " + relative(*s.LastRunAt, now) + "; it publishes due items every " + every.String() + "."
	if every > 0 && now.Sub(*s.LastRunAt) > 3*every+time.Minute {
		return words + " It seems to have stopped: due items are not being published.", true
	}
	return words, false
}
