-- visit_with_readiness is visit(list) and readiness_summary(publication_ids) in one call, for
-- the dashboard's queue: after its page of rows it needs both (what is new since the person's
-- last sitting, and the go-live badge of the rows not yet live), and asking separately cost a
-- second round trip on every queue page (the dashboard's HTTP call, the service's
-- authentication, a transaction as the caller). It returns
-- {"prev_seen_at": timestamptz or null, "readiness": [{publication_id, ready, failing}]}.
-- SECURITY INVOKER: visit() is the caller's own (SECURITY DEFINER, as before) and the
-- readiness of only the publications the caller can see is returned, as readiness_summary
-- does. Volatile: it records the visit, so it runs in a writing transaction.
create function public.visit_with_readiness(list text, publication_ids uuid[] default '{}')
returns json
language plpgsql volatile set search_path = ''
as $$
begin
  return json_build_object(
    'prev_seen_at', public.visit(list),
    'readiness', coalesce((select json_agg(r) from public.readiness_summary(publication_ids) r), '[]'::json));
end
$$;
revoke execute on function public.visit_with_readiness(text, uuid[]) from public, anon;
grant execute on function public.visit_with_readiness(text, uuid[]) to authenticated;
