-- Descriptions for the OpenAPI document GET /rest/v1/ serves (PostgREST's root): a table's or
-- view's comment becomes its definition's description (first line the summary of its
-- operations), a column's comment its property's description, a function's comment its
-- operation's summary. Comments only describe; nothing reads them to decide anything.

comment on table public.projects is 'Projects (tenants)
Every other table carries project_id; a member sees the rows of their projects.';
comment on column public.projects.slug is 'Short name used in URLs (lowercase letters, digits, dashes).';
comment on column public.projects.default_channels is 'Channel slugs every publication of the project needs a promo for before it may go live.';
comment on column public.projects.timezone is 'IANA time zone the project schedules in.';

comment on table public.project_members is 'Who belongs to a project, and as what
Roles are capabilities: owner, lead, editor, reviewer, viewer.';
comment on column public.project_members.role is 'One of owner, lead, editor, reviewer, viewer.';

comment on table public.profiles is 'People: the public face of a user account (email and display name).';

comment on table public.collections is 'Campaigns and sections a project files its publications under.';
comment on column public.collections.kind is 'campaign or section.';

comment on table public.channels is 'Social networks promos are written for, with their limits (readable by every signed-in user).';
comment on column public.channels.limits is 'How a promo is measured on this network, e.g. {"max_chars":280,"count":"chars","url_chars":23,"max_media":4}.';

comment on table public.publications is 'Publications: the pieces a project writes, reviews and publishes
Status changes only through the workflow (the RPCs, or a PATCH held to the same rules).';
comment on column public.publications.status is 'Workflow state: draft, reviewing, changes_requested, approved, scheduled, published or archived.';
comment on column public.publications.body is 'The text, in Markdown.';
comment on column public.publications.scheduled_for is 'When the scheduler publishes it; set exactly while the status is scheduled.';
comment on column public.publications.version is 'Goes up on every change; send it back as expected_version so a stale save is refused.';
comment on column public.publications.author_id is 'Who wrote it (defaults to the caller); an author never approves their own publication.';

comment on table public.promos is 'Promos: the short text that announces a publication on one channel.';
comment on column public.promos.channel is 'The channel (slug) this promo is written for.';

comment on table public.media is 'Images and videos of a project, stored in bucket media at storage_path.';
comment on column public.media.storage_path is 'Object path in bucket media: <project-slug>/… .';
comment on column public.media.alt_text is 'Text alternative read by screen readers; required before a publication may go live.';

comment on table public.publication_media is 'Which media a publication shows, in which order.';
comment on table public.reviews is 'Review verdicts and comments, one per reviewer action, with the round they belong to.';
comment on column public.reviews.verdict is 'approved, changes_requested or comment.';
comment on table public.status_events is 'The audit: one row per status change, append-only, written only by the workflow.';
comment on table public.publication_revisions is 'What was submitted for review in each round (append-only).';
comment on table public.list_visits is 'When a person last looked at a list, so new items can be marked.';

comment on function public.submit_for_review(uuid, text, integer) is 'Send a draft (or a publication with changes requested) for review
Starts a review round and records what was submitted. Editors, leads and owners.';
comment on function public.approve(uuid, text, integer) is 'Approve a publication in review
Reviewers, leads and owners; never the author.';
comment on function public.request_changes(uuid, text, integer) is 'Send a publication in review back to its author (a note is required)';
comment on function public.schedule(uuid, timestamptz, integer) is 'Schedule an approved, ready publication for a future time (leads and owners)';
comment on function public.publish_now(uuid, integer) is 'Publish an approved or scheduled, ready publication now (leads and owners)';
comment on function public.readiness(uuid) is 'What a publication still needs before it may go live: [{check, ok, detail}]';
comment on function public.my_inbox(integer) is 'What waits on the caller, by reason';
