// Masthead dashboard behaviour on top of htmx. Every page works without this file: it adds
// keyboard shortcuts on the queue, moves focus to the part an htmx swap replaced, and reads the
// outcome out through the page's live region. It never overrides a browser key: shortcuts are
// single keys without modifiers and are ignored while typing in a field.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  function typing(el) {
    if (!el) return false;
    var tag = el.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
  }

  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-keyboard-list] [data-row]"));
  }

  function select(list, i) {
    list.forEach(function (r) { r.classList.remove("selected"); r.removeAttribute("aria-current"); });
    var row = list[i];
    if (!row) return;
    row.classList.add("selected");
    row.setAttribute("aria-current", "true");
    var link = row.querySelector("a");
    if (link) link.focus();
  }

  function current(list) {
    var active = document.activeElement;
    for (var i = 0; i < list.length; i++) {
      if (list[i].classList.contains("selected") || list[i].contains(active)) return i;
    }
    return -1;
  }

  function openShortcuts() {
    var d = document.getElementById("shortcuts");
    if (d && !d.open && typeof d.showModal === "function") d.showModal();
  }

  document.addEventListener("keydown", function (e) {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    if (document.querySelector("dialog[open]")) return;
    var list = rows();
    if (e.key === "?") {
      if (!document.getElementById("shortcuts")) return;
      e.preventDefault();
      openShortcuts();
      return;
    }
    if (!list.length) return;
    var i = current(list);
    if (e.key === "j") {
      e.preventDefault();
      select(list, Math.min(i + 1, list.length - 1));
    } else if (e.key === "k") {
      e.preventDefault();
      select(list, Math.max(i - 1, 0));
    } else if (e.key === "Enter" && i >= 0 && e.target === document.body) {
      // A focused link or button handles Enter itself; this only covers a selection without focus.
      var link = list[i].querySelector("a");
      if (link) { e.preventDefault(); link.click(); }
    }
  });

  document.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("[data-shortcuts-open]");
    if (b) openShortcuts();
  });

  function announce(text) {
    var live = document.getElementById("live");
    if (!live || !text) return;
    live.textContent = "";
    // A fresh text node after a tick makes screen readers read a repeated message again.
    setTimeout(function () { live.textContent = text; }, 50);
  }

  document.addEventListener("htmx:afterSettle", function (e) {
    var root = e.detail && e.detail.elt;
    if (!root || !root.querySelector) return;
    // After an outerHTML swap the event may name the replaced element: find the live one by id.
    var fresh = root.id ? document.getElementById(root.id) : null;
    var part = fresh || root;
    if (!part.hasAttribute("data-announce")) {
      part = part.querySelector("[data-announce]") || part;
    }
    announce(part.getAttribute("data-announce"));
    // Move focus only when the person acted inside the replaced part (a button they pressed
    // is gone now); while they type in a filter field, focus stays where it is.
    var active = document.activeElement;
    if (active && active !== document.body && document.body.contains(active)) return;
    var target = part.matches("[data-focus]") ? part : part.querySelector("[data-focus]");
    if (target) target.focus();
  });

  // The editor keeps unsaved changes in this browser (localStorage) while the person types, so
  // an accidental reload or a closed tab does not lose them. A copy is restored only onto the
  // version it was typed against; it is dropped when the form is submitted (the server then
  // holds the text, or shows it again with its answer).
  function draftFields(form) {
    return Array.prototype.slice.call(form.querySelectorAll("input[type=text], textarea, select"));
  }

  function setupDraft(form) {
    var key = form.getAttribute("data-draft-key");
    var versionInput = form.querySelector("input[name=expected_version]");
    var version = versionInput ? versionInput.value : "";
    var saved = null;
    try { saved = JSON.parse(window.localStorage.getItem(key) || "null"); } catch (err) { saved = null; }
    if (saved && saved.version === version && saved.fields) {
      var restored = false;
      draftFields(form).forEach(function (el) {
        if (Object.prototype.hasOwnProperty.call(saved.fields, el.name) && el.value !== saved.fields[el.name]) {
          el.value = saved.fields[el.name];
          restored = true;
        }
      });
      if (restored) {
        var note = document.createElement("p");
        note.className = "notice notice-warning";
        note.setAttribute("role", "status");
        note.setAttribute("data-testid", "draft-restored");
        note.textContent = "Your unsaved changes from before were restored. Save to keep them.";
        form.insertBefore(note, form.firstChild);
        // Let the live preview catch up with the restored text once htmx listens (it starts on
        // DOMContentLoaded; "load" comes after). Its "input changed" trigger would not fire:
        // htmx first saw the field already restored.
        var body = form.querySelector("textarea[hx-post]");
        var refresh = function () { if (body) body.dispatchEvent(new Event("draft-restored")); };
        if (document.readyState === "complete") refresh();
        else window.addEventListener("load", refresh);
      }
    }
    form.addEventListener("input", function () {
      var fields = {};
      draftFields(form).forEach(function (el) { fields[el.name] = el.value; });
      try { window.localStorage.setItem(key, JSON.stringify({ version: version, fields: fields })); } catch (err) { /* storage full or off */ }
    });
    form.addEventListener("submit", function (e) {
      // The Preview button posts the form too; only a save hands the text to the server.
      if (e.submitter && e.submitter.name === "preview") return;
      try { window.localStorage.removeItem(key); } catch (err) { /* storage off */ }
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("form[data-draft-key]"), setupDraft);

  // Image uploads: a file can be dropped on the field; its type and size are checked before
  // anything is sent (the server checks again); the upload shows its progress. The answer is
  // the editor's: a redirect (HX-Redirect, as htmx would get) or the media section with the
  // refusal in words, swapped in place.
  function setupUpload(form) {
    var input = form.querySelector("input[type=file]");
    var zone = form.querySelector("[data-drop-zone]");
    var bar = form.querySelector("progress");
    var errorBox = form.querySelector("[data-upload-error]");
    var types = (form.getAttribute("data-types") || "").split(",");
    var maxBytes = Number(form.getAttribute("data-max-bytes"));
    function fail(text) {
      errorBox.textContent = text;
      errorBox.hidden = false;
    }
    if (zone && input) {
      zone.addEventListener("dragover", function (e) { e.preventDefault(); zone.classList.add("dragging"); });
      zone.addEventListener("dragleave", function () { zone.classList.remove("dragging"); });
      zone.addEventListener("drop", function (e) {
        e.preventDefault();
        zone.classList.remove("dragging");
        if (e.dataTransfer && e.dataTransfer.files.length) input.files = e.dataTransfer.files;
      });
    }
    form.addEventListener("submit", function (e) {
      var file = input && input.files[0];
      if (!file || !window.FormData || !window.XMLHttpRequest) return;
      e.preventDefault();
      errorBox.hidden = true;
      if (types.indexOf(file.type) < 0) return fail("Only PNG, JPEG, GIF and WebP images can be uploaded; this file is " + (file.type || "of an unknown type") + ".");
      if (file.size > maxBytes) return fail("The image is larger than " + form.getAttribute("data-max-words") + ".");
      var xhr = new XMLHttpRequest();
      xhr.open("POST", form.action);
      xhr.setRequestHeader("HX-Request", "true");
      xhr.upload.addEventListener("progress", function (ev) {
        if (ev.lengthComputable) bar.value = Math.round(100 * ev.loaded / ev.total);
      });
      xhr.addEventListener("load", function () {
        var to = xhr.getResponseHeader("HX-Redirect");
        if (xhr.status < 300 && to) {
          // Back to this same page (at #media): a new hash alone would not reload it.
          var u = new URL(to, window.location.href);
          if (u.pathname === window.location.pathname && u.search === window.location.search) {
            window.location.hash = u.hash;
            window.location.reload();
          } else {
            window.location.assign(to);
          }
          return;
        }
        var fresh = new DOMParser().parseFromString(xhr.responseText, "text/html").getElementById("media");
        var here = document.getElementById("media");
        if (fresh && here) { here.replaceWith(fresh); setupUpload(fresh.querySelector("form[data-upload]")); }
        else fail("The upload did not work (" + xhr.status + "). Try again.");
      });
      xhr.addEventListener("error", function () { bar.hidden = true; fail("The upload was interrupted. Try again."); });
      bar.hidden = false;
      bar.value = 0;
      xhr.send(new FormData(form));
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("form[data-upload]"), setupUpload);

  // Images can be dragged to a new place; the new order is sent at once and the page reloads
  // with the order the service kept. The Move up / Move down buttons do the same without script.
  Array.prototype.forEach.call(document.querySelectorAll("ol[data-order-url]"), function (list) {
    var dragged = null;
    Array.prototype.forEach.call(list.querySelectorAll("[data-media-id]"), function (row) {
      row.setAttribute("draggable", "true");
      row.addEventListener("dragstart", function (e) {
        dragged = row;
        if (e.dataTransfer) e.dataTransfer.setData("text/plain", row.getAttribute("data-media-id"));
      });
      row.addEventListener("dragover", function (e) { e.preventDefault(); });
      row.addEventListener("drop", function (e) {
        e.preventDefault();
        if (!dragged || dragged === row) return;
        var rows = Array.prototype.slice.call(list.children);
        list.insertBefore(dragged, rows.indexOf(dragged) < rows.indexOf(row) ? row.nextSibling : row);
        var order = Array.prototype.map.call(list.querySelectorAll("[data-media-id]"), function (r) { return r.getAttribute("data-media-id"); });
        var body = new URLSearchParams({ order: order.join(","), _csrf: list.getAttribute("data-csrf") });
        fetch(list.getAttribute("data-order-url"), { method: "POST", body: body, headers: { "HX-Request": "true" }, credentials: "same-origin" })
          .then(function () { window.location.hash = "media"; window.location.reload(); });
      });
    });
  });

  // On a phone the queue's filters start folded behind their button; the page works unfolded
  // without script, and wider screens always show them (the button is hidden there).
  var narrow = window.matchMedia && window.matchMedia("(max-width: 40rem)");
  Array.prototype.forEach.call(document.querySelectorAll("details[data-collapse-narrow]"), function (d) {
    if (narrow && narrow.matches) d.open = false;
    if (narrow && narrow.addEventListener) {
      narrow.addEventListener("change", function (e) { if (!e.matches) d.open = true; });
    }
  });
})();
