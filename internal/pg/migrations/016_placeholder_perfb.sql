-- Placeholder on branch h-perfb only, so that 017 loads here (tern wants no gaps).
-- DROP AT MERGE: 016 belongs to another branch (014 h-storage, 016 h-accounts).
select 1;
