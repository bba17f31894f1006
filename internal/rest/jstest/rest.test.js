// The /rest/v1 scenarios driven by the real supabase-js client. TestSupabaseJS
// (internal/rest/jstest_test.go) starts the service on a fresh database and
// passes its address, key and fixture ids in MASTHEAD_FIXTURE.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createClient } from "@supabase/supabase-js";

const fx = JSON.parse(process.env.MASTHEAD_FIXTURE);
const as = (user) =>
  createClient(fx.url, fx.key, {
    auth: { persistSession: false, autoRefreshToken: false },
    global: user ? { headers: { Authorization: `Bearer user:${fx.users[user]}` } } : {},
  });
const editor = as("editorA");
const reviewer = as("reviewerA");

test("queue read with embeds", async () => {
  const { data, error } = await editor
    .from("publications")
    .select("id, title, status, promos(channel)")
    .eq("status", "reviewing")
    .order("created_at", { ascending: false });
  assert.equal(error, null);
  assert.equal(data.length, 2);
  assert.ok(Array.isArray(data[0].promos));
});

test("single and maybeSingle", async () => {
  const one = await editor.from("publications").select("title, publication_media(position, media(storage_path))").eq("id", fx.pubs["Alpha launch"]).single();
  assert.equal(one.error, null);
  assert.equal(one.data.title, "Alpha launch");
  assert.equal(one.data.publication_media[0].media.storage_path, "proj-a/a.png");
  const none = await editor.from("publications").select("title").eq("title", "nothing").maybeSingle();
  assert.equal(none.error, null);
  assert.equal(none.data, null);
  const many = await editor.from("publications").select("title").single();
  assert.equal(many.error.code, "PGRST116");
});

test("range with exact count", async () => {
  const { data, count, error, status } = await editor.from("publications").select("title", { count: "exact" }).order("title").range(1, 2);
  assert.equal(error, null);
  assert.equal(status, 206);
  assert.equal(count, 4);
  assert.deepEqual(data.map((r) => r.title), ["Beta notes", "Delta (draft)"]);
});

test("filters with reserved characters, or and not", async () => {
  const inList = await editor.from("publications").select("title").in("title", ["Gamma, with comma", "Alpha launch"]).order("title");
  assert.deepEqual(inList.data.map((r) => r.title), ["Alpha launch", "Gamma, with comma"]);
  const or = await editor.from("publications").select("title").or("status.eq.draft,version.gt.2").order("title");
  assert.deepEqual(or.data.map((r) => r.title), ["Beta notes", "Delta (draft)"]);
  const not = await editor.from("publications").select("title").not("status", "in", "(reviewing,approved)");
  assert.deepEqual(not.data.map((r) => r.title), ["Delta (draft)"]);
  const inner = await editor.from("publications").select("title, promos!inner(channel)").eq("promos.channel", "bluesky");
  assert.deepEqual(inner.data.map((r) => r.title), ["Alpha launch"]);
  const cs = await editor.from("projects").select("slug").contains("default_channels", ["x"]);
  assert.deepEqual(cs.data, [{ slug: "proj-a" }]);
  const ts = await editor.from("publications").select("title").textSearch("title", "launch", { config: "english" });
  assert.deepEqual(ts.data, [{ title: "Alpha launch" }]);
});

test("writes with return preferences", async () => {
  const ins = await editor.from("promos").insert({ publication_id: fx.pubs["Delta (draft)"], channel: "threads", body: "js" }).select("channel, body").single();
  assert.equal(ins.error, null);
  assert.deepEqual(ins.data, { channel: "threads", body: "js" });
  const up = await editor.from("promos").update({ body: "js2" }).eq("publication_id", fx.pubs["Delta (draft)"]).eq("channel", "threads").select("body");
  assert.deepEqual(up.data, [{ body: "js2" }]);
  const ups = await editor.from("promos").upsert({ publication_id: fx.pubs["Delta (draft)"], channel: "threads", body: "js3" }, { onConflict: "publication_id,channel" }).select("body");
  assert.deepEqual(ups.data, [{ body: "js3" }]);
  const del = await editor.from("promos").delete().eq("publication_id", fx.pubs["Delta (draft)"]).eq("channel", "threads");
  assert.equal(del.error, null);
  assert.equal(del.status, 204);
  const all = await editor.from("promos").delete().neq("channel", "none").limit(0);
  assert.equal(all.error, null);
});

test("workflow rpc", async () => {
  const sub = await editor.rpc("submit_for_review", { publication_id: fx.pubs["Delta (draft)"], note: "from js" });
  assert.equal(sub.error, null);
  assert.equal(sub.data.status, "reviewing");
  const bad = await reviewer.rpc("approve", { publication_id: fx.pubs["Delta (draft)"], expected_version: 1 });
  assert.equal(bad.error.code, "PT409");
  assert.equal(bad.status, 409);
  const ok = await reviewer.rpc("approve", { publication_id: fx.pubs["Delta (draft)"], note: "fine" });
  assert.equal(ok.data.status, "approved");
});

test("errors and anon", async () => {
  const missing = await editor.from("nope").select();
  assert.equal(missing.error.code, "PGRST205");
  assert.equal(missing.status, 404);
  const anon = await as(null).from("channels").select();
  assert.equal(anon.error, null);
  assert.deepEqual(anon.data, []);
});

test("PostgREST v13 shapes: spread, embed by column, csv, empty in()", async () => {
  const spread = await editor.from("promos").select("channel, ...publications(title)").eq("channel", "bluesky");
  assert.equal(spread.error, null);
  assert.deepEqual(spread.data, [{ channel: "bluesky", title: "Alpha launch" }]);
  const byColumn = await editor.from("publications").select("title, author:author_id(email)").eq("title", "Beta notes").single();
  assert.equal(byColumn.error, null);
  assert.deepEqual(byColumn.data, { title: "Beta notes", author: { email: "editorA@example.test" } });
  const csv = await editor.from("promos").select("channel").eq("channel", "bluesky").csv();
  assert.equal(csv.error, null);
  assert.equal(csv.data, "channel\nbluesky");
  const none = await editor.from("publications").select("title").in("id", []);
  assert.equal(none.error, null);
  assert.deepEqual(none.data, []);
  const zero = await editor.from("publications").select("title").limit(0);
  assert.deepEqual(zero.data, []);
});
