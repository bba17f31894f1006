-- Placeholder: number 021 belongs to another branch (h-seed's migration), and migrations must be
-- numbered without gaps for 022 to load here. Delete this file when merging that branch's 021.
select 1;
