-- Placeholder: number 022 belongs to another branch (h-download's migration), and migrations must
-- be numbered without gaps for 023 to load here. Delete this file when merging that branch's 022.
select 1;
