-- Placing media in a publication, as one write each: attach_media sets the image's alt text and
-- puts it last, reorder_media puts every attached image in a given order. Both run as the
-- caller, so row-level security and the content freeze (008: only while draft or changes
-- requested, editors and up, each change bumps the version) decide as on any other path.
-- Detaching is a DELETE of the publication_media row.

create function public.attach_media(publication_id uuid, media_id uuid, alt_text text)
returns public.publication_media
language plpgsql
as $$
declare
  v public.publication_media;
begin
  if coalesce(btrim(alt_text), '') = '' then
    raise exception using errcode = 'PT400', message = 'alt text is required: describe the image for people who cannot see it';
  end if;
  if not exists (select 1 from public.publications p where p.id = attach_media.publication_id) then
    raise exception using errcode = 'PT404', message = 'publication not found';
  end if;
  update public.media m set alt_text = btrim(attach_media.alt_text) where m.id = attach_media.media_id;
  if not found then
    raise exception using errcode = 'PT404', message = 'media item not found';
  end if;
  insert into public.publication_media (publication_id, media_id, position)
  values (attach_media.publication_id, attach_media.media_id,
          (select coalesce(max(pm.position), 0) + 1 from public.publication_media pm
            where pm.publication_id = attach_media.publication_id))
  returning * into v;
  return v;
end $$;

create function public.reorder_media(publication_id uuid, media_ids uuid[])
returns setof public.publication_media
language plpgsql
as $$
begin
  if (select coalesce(array_agg(pm.media_id order by pm.media_id), '{}') from public.publication_media pm
       where pm.publication_id = reorder_media.publication_id)
     is distinct from (select coalesce(array_agg(x order by x), '{}') from unnest(media_ids) x) then
    raise exception using errcode = 'PT409', message = 'the images of this publication changed meanwhile',
      hint = 'Read the publication again and reorder what is attached now.';
  end if;
  return query
    update public.publication_media pm set position = o.n
      from unnest(media_ids) with ordinality as o(id, n)
     where pm.publication_id = reorder_media.publication_id and pm.media_id = o.id and pm.position <> o.n
    returning pm.*;
end $$;

grant execute on function public.attach_media(uuid, uuid, text), public.reorder_media(uuid, uuid[]) to authenticated;
