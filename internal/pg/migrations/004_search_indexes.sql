-- The queue over every status: one project, newest first, paged; a text search walks the same
-- index and stops at the page's last match. (Trigram indexes cannot help searches made through
-- REST: ilike is not leakproof, so under row-level security PostgreSQL does not evaluate it
-- ahead of the policy, and never through an index.)
create index publications_recent_idx on public.publications (project_id, created_at desc, id desc);
