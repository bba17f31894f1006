-- The per-row audit writers go.
--
-- Since 021 the workflow's statement trigger writes every status event and verdict through
-- app.write_events, which refuses to run outside a trigger. The per-row writers it replaced,
-- app.write_event (001, 018) and app.write_verdict (001, 018), were left behind with nothing
-- calling them, still running as their owner and still executable by every signed-in user:
-- write_verdict inserted whatever verdict it was handed for any publication the caller could
-- read (a forged approval, as far as the reviews table could tell), and write_event was held
-- back only by the audit's own append-only trigger. No public surface reaches the app schema,
-- but a function nothing needs and anyone may call is a door left open, so both are dropped.
-- TestTriggerHelpersRefuseCallers holds that neither exists.

drop function app.write_event(uuid, uuid, text, text, uuid, text, text, text);
drop function app.write_verdict(public.publications, text, text);
