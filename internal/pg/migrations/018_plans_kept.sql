-- The functions that run in nearly every statement, in PL/pgSQL.
--
-- A SQL function with SECURITY DEFINER or a SET clause (all of these have both) cannot be
-- inlined, and PostgreSQL 15 parses and plans its body again in every statement that calls it,
-- and again on every call from a trigger. app.project_ids() runs in every read and write under
-- row-level security: as SQL it cost more than the read it guarded (an authenticated download's
-- media lookup took about 0.17–0.30 ms of planning; as PL/pgSQL almost nothing, measured with
-- pgbench). PL/pgSQL keeps each statement's plan for the life of the connection.
--
-- Same arguments, answers, volatility, SECURITY DEFINER and empty search_path; only the
-- language changes. TestPolicyFunctionsKeepTheirPlans keeps policies from calling a SQL
-- function that cannot be inlined again.

-- Policies: membership.
create or replace function app.project_ids(roles text[] default null) returns uuid[]
language plpgsql stable security definer set search_path = ''
as $$
begin
  return (select coalesce(array_agg(m.project_id), '{}')
            from public.project_members m
           where m.user_id = (select auth.uid())
             and (roles is null or m.role = any (roles)));
end $$;

create or replace function app.member_role(p_project uuid) returns text
language plpgsql stable security definer set search_path = ''
as $$
begin
  return (select m.role from public.project_members m
           where m.project_id = p_project and m.user_id = (select auth.uid()));
end $$;

create or replace function app.co_member_ids() returns uuid[]
language plpgsql stable security definer set search_path = ''
as $$
begin
  return (select coalesce(array_agg(distinct m.user_id), array[(select auth.uid())])
            from public.project_members m
           where m.project_id = any (app.project_ids()));
end $$;

-- Triggers and the workflow: the audit, rounds and verdicts, once per row changed.
create or replace function app.write_event(p_project uuid, p_publication uuid, p_from text, p_to text,
                                           p_actor uuid, p_intent text, p_note text, p_via text) returns void
language plpgsql security definer set search_path = ''
as $$
begin
  insert into public.status_events (project_id, publication_id, from_status, to_status, actor_id, intent, note, via)
  values (p_project, p_publication, p_from, p_to, p_actor, p_intent, coalesce(p_note, ''), p_via);
end $$;

create or replace function app.write_verdict(p_pub public.publications, p_verdict text, p_notes text) returns void
language plpgsql security definer set search_path = ''
as $$
begin
  insert into public.reviews (project_id, publication_id, reviewer_id, verdict, notes)
  values (p_pub.project_id, p_pub.id, auth.uid(), p_verdict, coalesce(p_notes, ''));
end $$;

create or replace function app.current_round(p_publication uuid) returns integer
language plpgsql stable security definer set search_path = ''
as $$
begin
  return (select coalesce(max(r.round), 0) from public.publication_revisions r
           where r.publication_id = p_publication);
end $$;

create or replace function app.snapshot(p public.publications) returns jsonb
language plpgsql stable security definer set search_path = ''
as $$
begin
  return jsonb_build_object(
    'title', p.title, 'summary', p.summary, 'body', p.body,
    'promos', coalesce((select jsonb_agg(jsonb_build_object('channel', pr.channel, 'body', pr.body, 'link', pr.link)
                                         order by pr.channel)
                          from public.promos pr where pr.publication_id = p.id), '[]'),
    'media', coalesce((select jsonb_agg(jsonb_build_object('id', m.id, 'position', pm.position,
                                                           'alt_text', m.alt_text, 'storage_path', m.storage_path)
                                        order by pm.position, m.id)
                         from public.publication_media pm join public.media m on m.id = pm.media_id
                        where pm.publication_id = p.id), '[]'));
end $$;
