// The /storage/v1 scenarios driven by the real supabase-js storage client
// (supabase.storage.from('media')). TestSupabaseJSStorage (internal/storage/jstest_test.go)
// starts the storage service on a fresh database with two projects and passes its address,
// the publishable key, access tokens and test images in MASTHEAD_FIXTURE.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createClient } from "@supabase/supabase-js";

const fx = JSON.parse(process.env.MASTHEAD_FIXTURE);
const png = Buffer.from(fx.png, "base64");
const jpeg = Buffer.from(fx.jpeg, "base64");
const as = (user) =>
  createClient(fx.url, fx.key, {
    auth: { persistSession: false, autoRefreshToken: false },
    global: user ? { headers: { Authorization: `Bearer ${fx.tokens[user]}` } } : {},
  }).storage.from("media");
const editor = as("editorA");
const viewer = as("viewerA");
const other = as("editorB"); // editor of proj-b only
const anon = as(null);

const bytesOf = async (blob) => Buffer.from(await blob.arrayBuffer());

test("upload, info, exists and download", async () => {
  const up = await editor.upload("proj-a/js/one.png", png, { contentType: "image/png" });
  assert.equal(up.error, null);
  assert.equal(up.data.path, "proj-a/js/one.png");
  assert.equal(up.data.fullPath, "media/proj-a/js/one.png");
  assert.ok(up.data.id);

  const info = await viewer.info("proj-a/js/one.png");
  assert.equal(info.error, null);
  assert.equal(info.data.id, up.data.id);
  assert.equal(info.data.name, "proj-a/js/one.png");
  assert.equal(info.data.bucketId, "media");
  assert.equal(info.data.contentType, "image/png");
  assert.equal(info.data.size, png.length);
  assert.equal(info.data.metadata.width, 40);

  assert.deepEqual(await viewer.exists("proj-a/js/one.png").then((r) => r.data), true);
  assert.deepEqual(await viewer.exists("proj-a/js/none.png").then((r) => r.data), false);

  const dl = await viewer.download("proj-a/js/one.png");
  assert.equal(dl.error, null);
  assert.deepEqual(await bytesOf(dl.data), png);
});

test("another project's object looks missing", async () => {
  const info = await other.info("proj-a/photo.png");
  assert.equal(info.data, null);
  assert.equal(info.error.status, 404);
  assert.equal(info.error.message, "Object not found");
  const missing = await other.info("proj-a/no-such.png");
  assert.deepEqual([missing.error.status, missing.error.message], [404, "Object not found"]);
  assert.equal(await other.exists("proj-a/photo.png").then((r) => r.data), false);
  assert.equal(await anon.exists("proj-a/photo.png").then((r) => r.data), false);
  const dl = await other.download("proj-a/photo.png");
  assert.equal(dl.data, null);
  assert.ok(dl.error);
  assert.deepEqual((await other.list("proj-a")).data, []);
  assert.deepEqual((await anon.list("")).data, []);
});

test("list: prefix, limit, offset, sortBy, search", async () => {
  for (const [path, body, type] of [
    ["proj-a/list/b.png", png, "image/png"],
    ["proj-a/list/a.png", png, "image/png"],
    ["proj-a/list/C.jpg", jpeg, "image/jpeg"],
    ["proj-a/list/sub/d.png", png, "image/png"],
  ]) {
    const { error } = await editor.upload(path, body, { contentType: type });
    assert.equal(error, null);
  }
  const names = (r) => {
    assert.equal(r.error, null);
    return r.data.map((e) => e.name);
  };
  assert.deepEqual(names(await viewer.list("proj-a/list")), ["sub", "C.jpg", "a.png", "b.png"]);
  assert.deepEqual(names(await viewer.list("proj-a/list/")), ["sub", "C.jpg", "a.png", "b.png"]);
  assert.deepEqual(names(await viewer.list("proj-a/list", { limit: 2, offset: 1 })), ["C.jpg", "a.png"]);
  assert.deepEqual(names(await viewer.list("proj-a/list", { sortBy: { column: "name", order: "desc" } })), ["sub", "b.png", "a.png", "C.jpg"]);
  assert.deepEqual(names(await viewer.list("proj-a/list", { sortBy: { column: "created_at", order: "asc" } })), ["sub", "b.png", "a.png", "C.jpg"]);
  assert.deepEqual(names(await viewer.list("proj-a/list", { search: "c" })), ["C.jpg"]);
  assert.deepEqual(names(await viewer.list("proj-a/list", { search: "s" })), ["sub"]);
  assert.deepEqual(names(await viewer.list("")), ["proj-a"]);

  const [folder, file] = (await viewer.list("proj-a/list", { limit: 2 })).data;
  assert.deepEqual(folder, { name: "sub", id: null, updated_at: null, created_at: null, last_accessed_at: null, metadata: null });
  assert.equal(file.metadata.mimetype, "image/jpeg");
  assert.equal(file.metadata.size, jpeg.length);
  assert.ok(file.id && file.created_at && file.updated_at);

  const bad = await viewer.list("proj-a/list", { sortBy: { column: "size" } });
  assert.equal(bad.error.status, 400);
  assert.match(bad.error.message, /sortBy\.column/);
  const tooMany = await viewer.list("proj-a/list", { limit: 100000 });
  assert.equal(tooMany.error.status, 400);
  assert.match(tooMany.error.message, /limit must be a whole number from 1 to 1000/);
});

test("createSignedUrl(s), with download", async () => {
  const many = await viewer.createSignedUrls(["proj-a/photo.png", "proj-b/secret.png", "proj-a/none.png"], 60, { download: true });
  assert.equal(many.error, null);
  assert.deepEqual(many.data.map((d) => [d.path, d.error]), [
    ["proj-a/photo.png", null],
    ["proj-b/secret.png", "Either the object does not exist or you do not have access to it"],
    ["proj-a/none.png", "Either the object does not exist or you do not have access to it"],
  ]);
  assert.equal(many.data[1].signedUrl, null);
  const res = await fetch(many.data[0].signedUrl); // no apikey, no token: the URL is the credential
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-disposition"), "attachment; filename=photo.png");
  assert.deepEqual(Buffer.from(await res.arrayBuffer()), png);

  const one = await viewer.createSignedUrl("proj-a/photo.png", 60, { download: "cover art.png" });
  assert.equal(one.error, null);
  const named = await fetch(one.data.signedUrl);
  assert.equal(named.headers.get("content-disposition"), 'attachment; filename="cover art.png"');

  const inline = await viewer.createSignedUrl("proj-a/photo.png", 60);
  assert.equal((await fetch(inline.data.signedUrl)).headers.get("content-disposition"), null);

  const refused = await other.createSignedUrl("proj-a/photo.png", 60);
  assert.deepEqual([refused.error.status, refused.error.message], [404, "Object not found"]);

  // The authenticated download takes ?download= too.
  const direct = await fetch(`${fx.url}/storage/v1/object/media/proj-a/photo.png?download=`, {
    headers: { apikey: fx.key, Authorization: `Bearer ${fx.tokens.viewerA}` },
  });
  assert.equal(direct.headers.get("content-disposition"), "attachment; filename=photo.png");
});

test("createSignedUploadUrl and uploadToSignedUrl", async () => {
  const signed = await editor.createSignedUploadUrl("proj-a/signed/up.png");
  assert.equal(signed.error, null);
  assert.equal(signed.data.path, "proj-a/signed/up.png");
  assert.ok(signed.data.token);
  assert.match(signed.data.signedUrl, /\/storage\/v1\/object\/upload\/sign\/media\/proj-a\/signed\/up\.png\?token=/);

  // Whoever holds the token uploads, here without signing in; the upload is the signer's.
  const up = await anon.uploadToSignedUrl("proj-a/signed/up.png", signed.data.token, png, { contentType: "image/png" });
  assert.equal(up.error, null);
  assert.equal(up.data.fullPath, "media/proj-a/signed/up.png");
  assert.equal((await viewer.info("proj-a/signed/up.png")).data.size, png.length);

  const again = await anon.uploadToSignedUrl("proj-a/signed/up.png", signed.data.token, png, { contentType: "image/png" });
  assert.equal(again.error.statusCode, "409");

  const elsewhere = await anon.uploadToSignedUrl("proj-a/signed/other.png", signed.data.token, png, { contentType: "image/png" });
  assert.equal(elsewhere.error.statusCode, "400");
  assert.equal(elsewhere.error.error, "InvalidJWT");

  const upsert = await editor.createSignedUploadUrl("proj-a/signed/up.png", { upsert: true });
  assert.equal(upsert.error, null);
  const replaced = await anon.uploadToSignedUrl("proj-a/signed/up.png", upsert.data.token, jpeg, { contentType: "image/jpeg" });
  assert.equal(replaced.error, null);
  assert.equal((await viewer.info("proj-a/signed/up.png")).data.contentType, "image/jpeg");

  const byViewer = await viewer.createSignedUploadUrl("proj-a/signed/v.png");
  assert.equal(byViewer.error.status, 403);
  const byOther = await other.createSignedUploadUrl("proj-a/signed/o.png");
  assert.equal(byOther.error.status, 403);
  const taken = await editor.createSignedUploadUrl("proj-a/photo.png");
  assert.equal(taken.error.status, 409);
});

test("update: a new version under the same row", async () => {
  const before = (await editor.info("proj-a/js/one.png")).data;
  const up = await editor.update("proj-a/js/one.png", jpeg, { contentType: "image/jpeg" });
  assert.equal(up.error, null);
  assert.equal(up.data.id, before.id);
  const after = (await viewer.info("proj-a/js/one.png")).data;
  assert.equal(after.id, before.id);
  assert.equal(after.contentType, "image/jpeg");
  assert.equal(after.size, jpeg.length);
  assert.notEqual(after.version, before.version);
  assert.deepEqual(await bytesOf((await viewer.download("proj-a/js/one.png")).data), jpeg);

  const byViewer = await viewer.update("proj-a/js/one.png", png, { contentType: "image/png" });
  assert.equal(byViewer.error.statusCode, "403");
  const byOther = await other.update("proj-a/js/one.png", png, { contentType: "image/png" });
  assert.deepEqual([byOther.error.statusCode, byOther.error.message], ["404", "Object not found"]);
  const missing = await editor.update("proj-a/js/missing.png", png, { contentType: "image/png" });
  assert.equal(missing.error.statusCode, "404");
  const lying = await editor.update("proj-a/js/one.png", png, { contentType: "image/jpeg" });
  assert.equal(lying.error.statusCode, "415");
  assert.equal((await viewer.info("proj-a/js/one.png")).data.contentType, "image/jpeg");

  const upsert = await editor.upload("proj-a/js/one.png", png, { contentType: "image/png", upsert: true });
  assert.equal(upsert.error, null);
  assert.equal(upsert.data.id, before.id);
});

test("copy and move", async () => {
  const copied = await editor.copy("proj-a/js/one.png", "proj-a/js/two.png");
  assert.equal(copied.error, null);
  assert.equal(copied.data.path, "media/proj-a/js/two.png");
  const two = (await viewer.info("proj-a/js/two.png")).data;
  assert.notEqual(two.id, (await viewer.info("proj-a/js/one.png")).data.id);

  const moved = await editor.move("proj-a/js/two.png", "proj-a/js/moved/three.png");
  assert.equal(moved.error, null);
  assert.deepEqual(moved.data, { message: "Successfully moved" });
  assert.equal(await viewer.exists("proj-a/js/two.png").then((r) => r.data), false);
  const three = (await viewer.info("proj-a/js/moved/three.png")).data;
  assert.equal(three.id, two.id);
  assert.deepEqual(await bytesOf((await viewer.download("proj-a/js/moved/three.png")).data), png);

  const byViewer = await viewer.move("proj-a/js/moved/three.png", "proj-a/js/v.png");
  assert.equal(byViewer.error.status, 403);
  const byOther = await other.move("proj-a/js/moved/three.png", "proj-a/js/o.png");
  assert.deepEqual([byOther.error.status, byOther.error.message], [404, "Object not found"]);
  const intoOther = await other.copy("proj-a/photo.png", "proj-b/stolen.png");
  assert.equal(intoOther.error.status, 404);
  const fromOther = await editor.copy("proj-b/secret.png", "proj-a/stolen.png");
  assert.equal(fromOther.error.status, 404);
  const toOtherProject = await editor.copy("proj-a/photo.png", "proj-b/gift.png");
  assert.equal(toOtherProject.error.status, 403);
  const across = await editor.move("proj-a/js/moved/three.png", "proj-b/three.png");
  assert.equal(across.error.status, 400);
  const onto = await editor.move("proj-a/js/moved/three.png", "proj-a/photo.png");
  assert.equal(onto.error.status, 409);
  const otherBucket = await editor.move("proj-a/js/moved/three.png", "proj-a/x.png", { destinationBucket: "avatars" });
  assert.deepEqual([otherBucket.error.status, otherBucket.error.message], [404, "Bucket not found"]);
});

test("remove many paths", async () => {
  const byViewer = await viewer.remove(["proj-a/js/moved/three.png"]);
  assert.deepEqual(byViewer, { data: [], error: null });
  const { data, error } = await editor.remove(["proj-a/js/moved/three.png", "proj-b/secret.png", "proj-a/js/nothing.png", "proj-a/list/a.png"]);
  assert.equal(error, null);
  assert.deepEqual(data.map((o) => [o.name, o.bucket_id]), [["proj-a/js/moved/three.png", "media"], ["proj-a/list/a.png", "media"]]);
  assert.equal(await viewer.exists("proj-a/js/moved/three.png").then((r) => r.data), false);
  assert.equal(await as("editorB").exists("proj-b/secret.png").then((r) => r.data), true);
  const empty = await editor.remove([]);
  assert.equal(empty.error.status, 400);
});

test("upload with metadata (x-metadata) and cacheControl", async () => {
  const up = await editor.upload("proj-a/js/meta.png", png, { contentType: "image/png", cacheControl: "60", metadata: { owner: "js" } });
  assert.equal(up.error, null);
  assert.equal((await viewer.info("proj-a/js/meta.png")).data.size, png.length);
});

test("bad input is refused in Supabase Storage's shape", async () => {
  const escape = await editor.move("proj-a/photo.png", "proj-a/../escape.png");
  assert.equal(escape.error.status, 400);
  const noCopy = await editor.copy("proj-a/photo.png", "proj-a/photo.png");
  assert.deepEqual([noCopy.error.status, noCopy.error.message], [400, "sourceKey and destinationKey name the same object"]);
  const forever = await viewer.createSignedUrl("proj-a/photo.png", 0);
  assert.equal(forever.error.status, 400);
  assert.match(forever.error.message, /expiresIn must be a whole number of seconds from 1 to 604800 \(MASTHEAD_STORAGE_MAX_SIGNED_URL_TTL\)/);
  const tooMany = await editor.remove(Array.from({ length: 1001 }, (_, i) => `proj-a/x${i}.png`));
  assert.equal(tooMany.error.status, 400);
  assert.match(tooMany.error.message, /at most 1000 may be named in one request \(MASTHEAD_STORAGE_MAX_BATCH\)/);
  const badOffset = await viewer.list("proj-a", { offset: -1 });
  assert.equal(badOffset.error.status, 400);
  const anonWrite = await anon.upload("proj-a/js/anon.png", png, { contentType: "image/png" });
  assert.equal(anonWrite.error.statusCode, "403");
  const forged = await anon.uploadToSignedUrl("proj-a/js/forged.png", "not-a-token", png, { contentType: "image/png" });
  assert.deepEqual([forged.error.statusCode, forged.error.error], ["400", "InvalidJWT"]);
});

test("errors in Supabase Storage's shape", async () => {
  const other = createClient(fx.url, fx.key, {
    auth: { persistSession: false, autoRefreshToken: false },
    global: { headers: { Authorization: `Bearer ${fx.tokens.editorA}` } },
  }).storage.from("avatars");
  const list = await other.list("");
  assert.deepEqual([list.error.status, list.error.message], [404, "Bucket not found"]);
  const res = await fetch(`${fx.url}/storage/v1/object/info/media/proj-b/secret.png`, {
    headers: { apikey: fx.key, Authorization: `Bearer ${fx.tokens.editorA}` },
  });
  assert.equal(res.status, 404);
  assert.deepEqual(await res.json(), { statusCode: "404", error: "not_found", message: "Object not found" });
  // Writing another project's object: the same 404 as a missing one, never a hint it exists.
  const put = await fetch(`${fx.url}/storage/v1/object/media/proj-b/secret.png`, {
    method: "PUT",
    headers: { apikey: fx.key, Authorization: `Bearer ${fx.tokens.editorA}`, "Content-Type": "image/png" },
    body: png,
  });
  assert.equal(put.status, 404);
  assert.deepEqual(await put.json(), { statusCode: "404", error: "not_found", message: "Object not found" });
});
