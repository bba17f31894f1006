-- Inviting an address again replaces its open invitation to the project.
--
-- invite_member (016) added an invitation each time: an owner who invited someone twice (the
-- first link lost, or sent with the wrong role) left two links that both worked, with two
-- roles, and two lines under "Waiting to be accepted". Now the invitations to the same address
-- (as addresses are compared everywhere: without regard to case) that nobody accepted are
-- revoked first, in the same call, as the owner would revoke them: deleted under the caller's
-- row-level security (invitations_delete: owners of the project, unaccepted invitations only).
-- The newest link is the one that works, with the role it names. Accepted invitations stay as
-- the record they are. TestInviteAgainReplaces (internal/pg) and TestSettingsInviteAndManage
-- (handlers) hold it.

create or replace function public.invite_member(project_id uuid, email text, role text default 'viewer')
returns table (invitation_id uuid, token text, expires_at timestamptz)
language plpgsql security invoker set search_path = ''
as $$
declare
  v_token text := translate(encode(decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'), 'base64'), '+/=', '-_');
  v_email text := trim(invite_member.email);
begin
  if exists (select 1 from public.project_members m join public.profiles p on p.id = m.user_id
              where m.project_id = invite_member.project_id and lower(p.email) = lower(v_email)) then
    raise exception using errcode = 'PT409', message = v_email || ' is already a member of this project',
      hint = 'Change their role in the member list instead.';
  end if;
  delete from public.invitations i
   where i.project_id = invite_member.project_id and lower(i.email) = lower(v_email) and i.accepted_at is null;
  return query
    insert into public.invitations as i (project_id, email, role, token_hash)
    values (invite_member.project_id, v_email, invite_member.role, sha256(convert_to(v_token, 'UTF8')))
    returning i.id, v_token, i.expires_at;
end $$;
