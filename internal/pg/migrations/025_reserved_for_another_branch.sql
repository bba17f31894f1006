-- Placeholder: number 025 belongs to another branch, and migrations must be numbered without
-- gaps for 026 to load here. Delete this file when merging that branch's 025.
select 1;
