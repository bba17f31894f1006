-- A promo's link is a web address.
--
-- promos.link was any text up to 2,000 characters (030): an editor, a tool or a REST client could
-- store "javascript:alert(1)", "ftp://…" or "see the site" as the address a post links to. No
-- network a promo is written for takes anything but an http(s) URL, and whatever reads promos to
-- post them (or shows the link as one) should not have to check. A link is now absent (null, as
-- the dashboard and MCP send an empty one) or http:// or https:// followed by no white space,
-- as projects.site_url is (site_url_is_an_http_url).
--
-- The check is added NOT VALID, as 030 added storage_path's bound: every promo written from now
-- on is held to it, and a link stored before that breaks it stays until its promo is next
-- changed, which then has to give it a web address (or none). Nothing stored is rewritten or
-- dropped. TestPromoLinkIsAWebAddress (internal/pg) and TestPromoCards (handlers) hold it;
-- internal/client says its refusal in words.

alter table public.promos
  add constraint link_is_an_http_url check (link is null or link ~ '^https?://[^[:space:]]+$') not valid;
