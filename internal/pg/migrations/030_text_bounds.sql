-- Bounds for three user-writable text values, each of which could reach a caller as a 500 or
-- grow without limit, instead of a CHECK's 400 that names the column and its bound.
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
