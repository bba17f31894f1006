-- DROP AT MERGE: placeholder for migration 029, reserved by another helper, so that tern loads 030 on branch h-search4.
select 1;
