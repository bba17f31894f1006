-- readiness_checks is readiness() as a computed column of publications: [{check, ok, detail}]
-- in readiness_of's order, for the dashboard's queue. Its "N of M promos ready" column was
-- judged again in Go from the embedded promos and counted a promo with a blank body as ready
-- (promos.body defaults to ''), where readiness_of says "no promo written", and never looked at
-- a channel's max_media; the go-live badge beside it came from readiness_summary. Both now come
-- from this one column, read with the page's rows: one readiness_of per row, in the same
-- snapshot, instead of a second call that judged the rows again.
--
-- Its argument is unnamed, as computed columns' are in PostgREST's docs: a function whose
-- inputs have no names cannot be called with named JSON arguments, so it is not offered over
-- /rpc, and the rows it judges are only those the caller's select read under row-level security.
-- readiness_of reads as the owner and would judge any row it was handed, a made-up one too;
-- like it, this is no part of what a caller can call by name. PL/pgSQL keeps its plan for the
-- connection; a SQL function of a query is planned again in every statement (migration 018).
create function public.readiness_checks(public.publications) returns json
language plpgsql stable
as $$
begin
  return (select coalesce(json_agg(json_build_object('check', r."check", 'ok', r.ok, 'detail', r.detail) order by r.n), '[]'::json)
            from app.readiness_of($1) with ordinality as r("check", ok, detail, n));
end
$$;
revoke execute on function public.readiness_checks(public.publications) from public, anon;
grant execute on function public.readiness_checks(public.publications) to authenticated;
comment on function public.readiness_checks(public.publications) is 'What a publication still needs before it may go live, as a column: [{check, ok, detail}], as readiness() gives';
