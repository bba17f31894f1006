-- The storage API (/storage/v1) writes media rows as the caller, like every other surface, so
-- row-level security decides every update, move, copy and removal. What this adds:
--
-- 1. media.updated_at: when the row last changed (a new version of the file, a move, new alt
--    text). The storage API reports it as the object's updated_at and sorts by it.
-- 2. The columns that describe the file (storage_path, kind, mime_type, width, height, bytes)
--    become updatable by authenticated, under the existing media_update policy (editor+), but
--    only in a transaction of the storage API, which changes the file together with its row
--    (masthead.storage_api, a transaction-local setting only internal/storage sets). A PATCH
--    through /rest/v1 that would leave a row describing a file it does not have is refused.
--    The setting grants nothing: it is a consistency guard, and row-level security and the
--    column grants decide who may write, in the storage API's transactions as everywhere.
-- 3. A new version or a move of a file is held to the rule that already holds its deletion
--    (app.media_frozen): while it is attached to a publication past changes_requested, it
--    cannot change; otherwise every attached publication's version goes up.
-- 4. An index for listing a folder (storage_path LIKE 'folder/%').

alter table public.media add column updated_at timestamptz not null default now();
update public.media set updated_at = created_at;

create trigger media_touch before update on public.media
  for each row execute function app.touch_updated_at();

grant update (storage_path, kind, mime_type, width, height, bytes) on public.media to authenticated;

create function app.media_file_changed() returns trigger
language plpgsql set search_path = ''
as $$
declare
  v record;
begin
  if current_user <> 'authenticated' then
    return new;
  end if;
  if coalesce(current_setting('masthead.storage_api', true), '') <> 'on' then
    raise exception using errcode = '42501',
      message = 'a media item''s file, path, type, size and dimensions change only through the storage API, which changes the file with its row',
      hint = 'Use /storage/v1: update (PUT /object/media/<path>) for a new version, move or copy for a new path.';
  end if;
  for v in
    select p.id, p.status from public.publication_media pm join public.publications p on p.id = pm.publication_id
     where pm.media_id = old.id order by p.id
  loop
    if v.status not in ('draft', 'changes_requested') then
      raise exception using errcode = 'PT409',
        message = format('this media item is attached to a publication that is %s, whose media can only change while it is a draft or has changes requested',
                         lower(app.status_label(v.status))),
        hint = 'Upload the new version under a new path, or have a lead reopen the publication first.';
    end if;
    update public.publications set title = title where id = v.id;
  end loop;
  return new;
end $$;
grant execute on function app.media_file_changed() to authenticated;

create trigger media_file_changed before update of storage_path, kind, mime_type, width, height, bytes
  on public.media for each row execute function app.media_file_changed();

create index media_storage_path_pattern_idx on public.media (storage_path text_pattern_ops);
