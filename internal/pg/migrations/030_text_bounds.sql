-- Bounds for three user-writable text values, each of which could reach a caller as a 500 or
-- grow without limit, instead of a CHECK's 400 that names the column and its bound; and
-- readiness learns that text of nothing but white space is not there.
--
-- TestTextColumnsBounded sweeps the catalog for the text columns a signed-in caller may write;
-- it found promos.channel and projects.default_channels without a bound. The third,
-- media.storage_path, had one that did not keep it within its index. A value too long for a
-- btree index is refused by the index (54000, program_limit_exceeded), which the service maps
-- to a 500 as it does every resource limit. TestTextBounds pushes each bound below, and
-- TestLongDefaultChannelsCut holds what happens to rows written before.
--
-- 1. promos.channel had no bound of its own: the foreign key to channels refuses an unknown
--    slug, but only after the row reached the unique index on (publication_id, channel), so an
--    editor writing a promo for a channel of a few thousand characters got a 500. A channel slug
--    is at most 31 characters (channels_slug_check), so this bound refuses nothing the foreign
--    key would accept, and no existing promo can break it.
-- 2. projects.default_channels (an owner edits it over REST) held only known channel slugs
--    (app.check_default_channels), but any number of them: the same slug a million times over
--    is a valid value, and readiness judges a promo per entry. It now holds at most 50, well
--    past the channels there are. A longer list can only repeat slugs; it is cut, as migration
--    008 cut display names, by dropping the repeats (the first of each stays, in its place)
--    and then keeping the first 50.
-- 3. media.storage_path was bounded in characters (1000), but its unique index holds bytes: 1000
--    characters of four bytes each are 4000 bytes, past btree's 2704, so a path within its bound
--    got the index's 500. It is now bounded in bytes too, at 1024 as the storage surface bounds
--    an object's key (S3's limit, internal/storage maxKeyLen), so every path a row may hold is
--    one an object can be stored under. A path over 1024 bytes can only have been written
--    directly, since the storage surface never accepts one, and it names an object the
--    storage surface cannot store or serve; it is kept as it is (the row is the media item's
--    history and its links), so the bound is added NOT VALID: every row inserted or updated
--    from now on is held to it; existing rows are not checked until then.

alter table public.promos
  add constraint channel_at_most_31_chars check (char_length(channel) <= 31);

update public.projects p
   set default_channels = array(select u.slug from unnest(p.default_channels) with ordinality u(slug, n)
                                 group by u.slug order by min(u.n) limit 50)
 where cardinality(p.default_channels) > 50;
alter table public.projects
  add constraint default_channels_at_most_50_items check (cardinality(default_channels) <= 50);

alter table public.media
  add constraint storage_path_at_most_1024_bytes check (octet_length(storage_path) <= 1024) not valid;

-------------------------------------------------------------------------------------------------
-- 4. Readiness asks for a title, summary and body present, a promo written for every default
--    channel and alt text on every media item. It took a value for present once btrim() left
--    something, but btrim() trims only the space character: a summary of one newline, a body of
--    tabs and line breaks or alt text of a no-break space read as nothing yet were ready, and
--    could be scheduled and published. Present now means holding a character other than white
--    space: Unicode's White_Space property, listed outright, since what \s covers past ASCII
--    depends on the locale. Everything else is as in 006. TestReadinessNeedsContent holds each
--    check.

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
    unitword := case m.unit when 'bytes' then 'bytes' when 'graphemes' then 'characters' else 'characters' end;
    if m.max_chars > 0 and m.used > m.max_chars then
      ok := false;
      detail := format('%s: %s / %s %s (%s over)', ch.name, m.used, m.max_chars, unitword, m.used - m.max_chars);
      if m.unit = 'graphemes' then
        detail := detail || '; the database may count a few more characters than Bluesky does';
      end if;
    elsif m.max_hashtags > 0 and m.hashtags > m.max_hashtags then
      ok := false;
      detail := format('%s: %s hashtags, at most %s', ch.name, m.hashtags, m.max_hashtags);
    elsif (ch.limits ->> 'max_media') is not null and n_media > (ch.limits ->> 'max_media')::integer then
      ok := false;
      detail := format('%s: %s media attached, at most %s', ch.name, n_media, ch.limits ->> 'max_media');
    else
      ok := true;
      detail := case when m.max_chars > 0
                     then format('%s: %s / %s %s', ch.name, m.used, m.max_chars, unitword)
                     else format('%s: promo written', ch.name) end;
    end if;
    return next;
  end loop;

  "check" := 'alt_text'; ok := n_noalt = 0;
  detail := case
    when n_media = 0 then 'No media attached'
    when ok then format('All %s media items have alt text', n_media)
    else format('%s of %s media items have no alt text', n_noalt, n_media) end;
  return next;
end $$;
