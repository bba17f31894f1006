-- Counts in the words the database writes agree with their nouns: one of a thing reads as one,
-- not as "1 items". The readiness checks are what a person reads beside a publication (the
-- detail page, the queue's badge, the inbox, schedule and publish_now's PT422, MCP's readiness
-- tool), and they said "All 1 media items have alt text" for the one image a post carries.
-- Nothing else changes: each function below is its latest definition (readiness_of as 030
-- left it, embedded_rows_exceeded as 009 made it) with only its wording changed, and every
-- message for a count other than one reads as before. TestReadinessCountWords and
-- TestEmbeddedRowsCountWords hold each message at the counts where it changes.
--
-- readiness_of:
-- * alt_text: one media item is "The media item has alt text" / "The media item has no alt
--   text" (saying "1 of 1" or "all 1" counts what needs no counting); of several, one without
--   alt text is "1 of 3 media items has no alt text" (the verb agrees with "1 of", as "one of
--   them has"); "All 3 media items have alt text" and "2 of 3 media items have no alt text" stay.
-- * a channel's max_media: "X: 1 media item attached, at most 0" where it said "1 media
--   attached"; a channel that takes no media at all is the only way to get there.
-- * a promo's length: the unit agrees with the limit it follows ("2 / 1 character (1 over)"),
--   which only a channel whose limit is a single character or byte changes; and its numbers are
--   grouped in thousands as the dashboard's own promo counts are ("182 / 3,000 characters",
--   where the checklist said "182 / 3000" beside a promo card that said "3,000").
-- The hashtag message needs nothing: it appears only for more hashtags than a limit of at least
-- one, so the count is never one, and "at most N" names no noun.

create or replace function app.readiness_of(p public.publications)
returns table ("check" text, ok boolean, detail text)
language plpgsql stable security definer set search_path = ''
as $$
declare
  ch       record;
  pr       public.promos;
  m        record;
  n_media  integer;
  n_noalt  integer;
  unitword text;
  -- a character other than white space (Unicode's White_Space: ASCII's and the others)
  written  constant text := '[^\s\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]';
  -- a length in thousands as the dashboard writes its own counts ("182 / 3,000 characters"); a
  -- literal comma rather than the locale's separator, so every server writes the same words
  grouped  constant text := 'FM999,999,999,990';
begin
  "check" := 'title'; ok := p.title ~ written;
  detail := case when ok then 'Title is set' else 'Title is missing' end;
  return next;
  "check" := 'summary'; ok := p.summary ~ written;
  detail := case when ok then 'Summary is set' else 'Summary is missing' end;
  return next;
  "check" := 'body'; ok := p.body ~ written;
  detail := case when ok then 'Body is written' else 'Body is empty' end;
  return next;

  select count(*), count(*) filter (where md.alt_text !~ written) into n_media, n_noalt
    from public.publication_media pm join public.media md on md.id = pm.media_id
   where pm.publication_id = p.id;

  for ch in
    select c.slug, c.name, c.limits
      from public.projects pj, unnest(pj.default_channels) with ordinality as d(slug, ord)
      join public.channels c on c.slug = d.slug
     where pj.id = p.project_id
     order by d.ord
  loop
    "check" := 'promo:' || ch.slug;
    select * into pr from public.promos x where x.publication_id = p.id and x.channel = ch.slug;
    if not found or pr.body !~ written then
      ok := false; detail := format('%s: no promo written', ch.name);
      return next;
      continue;
    end if;
    select * into m from app.promo_measure(pr.body, pr.link, ch.limits);
    -- "12 / 280 characters": the unit is the limit's, so it is singular for a limit of one.
    unitword := case m.unit when 'bytes' then 'byte' else 'character' end
             || case when m.max_chars = 1 then '' else 's' end;
    if m.max_chars > 0 and m.used > m.max_chars then
      ok := false;
      detail := format('%s: %s / %s %s (%s over)', ch.name, to_char(m.used, grouped), to_char(m.max_chars, grouped),
                       unitword, to_char(m.used - m.max_chars, grouped));
      if m.unit = 'graphemes' then
        detail := detail || '; the database may count a few more characters than Bluesky does';
      end if;
    elsif m.max_hashtags > 0 and m.hashtags > m.max_hashtags then
      ok := false;
      detail := format('%s: %s hashtags, at most %s', ch.name, m.hashtags, m.max_hashtags);
    elsif (ch.limits ->> 'max_media') is not null and n_media > (ch.limits ->> 'max_media')::integer then
      ok := false;
      detail := format('%s: %s %s attached, at most %s', ch.name, n_media,
                       case when n_media = 1 then 'media item' else 'media' end, ch.limits ->> 'max_media');
    else
      ok := true;
      detail := case when m.max_chars > 0
                     then format('%s: %s / %s %s', ch.name, to_char(m.used, grouped), to_char(m.max_chars, grouped), unitword)
                     else format('%s: promo written', ch.name) end;
    end if;
    return next;
  end loop;

  "check" := 'alt_text'; ok := n_noalt = 0;
  detail := case
    when n_media = 0 then 'No media attached'
    when n_media = 1 and ok then 'The media item has alt text'
    when n_media = 1 then 'The media item has no alt text'
    when ok then format('All %s media items have alt text', n_media)
    when n_noalt = 1 then format('1 of %s media items has no alt text', n_media)
    else format('%s of %s media items have no alt text', n_noalt, n_media) end;
  return next;
end $$;

-- embedded_rows_exceeded: a cap of one row (MASTHEAD_MAX_EMBEDDED_ROWS=1, the least the
-- service accepts) reads "more than 1 row" and "at most 1 row in all".
create or replace function app.embedded_rows_exceeded() returns boolean
language plpgsql
set search_path = ''
as $$
declare
  cap text := current_setting('masthead.max_embedded_rows', true);
  noun constant text := case when cap = '1' then 'row' else 'rows' end;
begin
  raise exception 'The response would embed more than % %', cap, noun
    using errcode = 'MH001',
          detail = format('One request may embed at most %s %s in all (MASTHEAD_MAX_EMBEDDED_ROWS).', cap, noun),
          hint = 'Narrow the request: filter or limit the embedded resources (e.g. publications.limit=20), '
              || 'embed fewer levels, or page the top level with limit and offset.';
end
$$;
