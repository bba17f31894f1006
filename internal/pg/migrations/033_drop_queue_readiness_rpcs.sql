-- The two RPCs the dashboard's queue judged its rows with go: readiness_summary (012) and
-- visit_with_readiness (020), which asked visit() and readiness_summary() in one call. Since
-- 031 the queue reads readiness_checks with its rows and calls visit() alone, and nothing else
-- calls them: not the dashboard, not MCP, and neither the README nor DESIGN offers them. Left,
-- they would be public RPCs nobody uses or tests, and readiness_summary a second wording of
-- the verdict (its failing list in check-name order, not readiness()'s). readiness() for one
-- publication and readiness_checks for a list are the ways to ask. TestQueueReadinessRPCsGone
-- holds it.
drop function public.visit_with_readiness(text, uuid[]);
drop function public.readiness_summary(uuid[]);
