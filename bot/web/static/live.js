// The live meeting page: follows /ui/meetings/{id}/events (Server-Sent Events) and places the HTML
// fragments the server renders. The browser resumes a dropped stream with Last-Event-ID by itself.
// A hidden tab closes its stream and opens it again when shown (a browser keeps at most 6
// connections to a server over HTTP/1.1; each live tab would hold one).
// The agenda comes folded (its summary stays), so on a phone the statements are on the first screen even
// without script; on a wider screen this opens it.
(function () {
  "use strict";
  var root = document.getElementById("meeting");
  var phone = window.matchMedia && window.matchMedia("(max-width: 600px)");

  function foldAgenda() {
    var agenda = document.querySelector("#region-agenda details.agenda");
    if (agenda) { agenda.open = !(phone && phone.matches); }
  }

  foldAgenda();
  if (phone && phone.addEventListener) { phone.addEventListener("change", foldAgenda); }  // turned to a phone's width
  if (!root || root.dataset.live !== "true" || !window.EventSource) { return; }
  var status = document.getElementById("live-status");
  var source = null;

  // A statement that arrives off the screen (below, or above when you read the scoreboard) brings up a
  // "New: <who>" button, as a chat's "new messages" does: one tap scrolls to it; it goes once that is seen.
  var pill = document.getElementById("new-below");
  var unseen = null;

  function offScreen(el) {
    var r = el.getBoundingClientRect();
    return r.top > window.innerHeight - 40 ? "below" : (r.bottom < 40 ? "above" : "");
  }

  function hidePill() {
    unseen = null;
    if (pill) { pill.hidden = true; }
  }

  function showPill(el, where) {
    var who = el.querySelector(".who");
    unseen = el;
    pill.textContent = "New: " + (who ? who.textContent : "a statement") + (where === "below" ? " \u2193" : " \u2191");
    pill.hidden = false;
  }

  if (pill) {
    pill.addEventListener("click", function () {
      if (unseen) { unseen.scrollIntoView({block: "start"}); }
      hidePill();
    });
    window.addEventListener("scroll", function () {
      if (unseen && !offScreen(unseen)) { hidePill(); }
    }, {passive: true});
  }

  function arrived(id) {
    var el = id && document.getElementById(id);
    var where = el ? offScreen(el) : "";
    if (pill && where) { showPill(el, where); }
  }

  // The stream's fragments are the same for every watcher, so its forms (the decision's Ratify / Veto /
  // Revisit) come without this page's CSRF token: it is copied from the page's own form.
  var csrf = document.querySelector(".logout input[name=csrf]");

  function apply(op) {
    var target = document.getElementById(op.target);
    if (!target) { return; }
    if (op.op === "append") {
      if (op.id && document.getElementById(op.id)) { return; }  // already shown: never twice
      target.insertAdjacentHTML("beforeend", op.html);
      if (op.target === "statements") { arrived(op.id); }
    } else {
      target.innerHTML = op.html;
    }
    if (op.target === "region-agenda") { foldAgenda(); }
    if (csrf) {
      target.querySelectorAll("input[name=csrf]").forEach(function (input) {
        if (!input.value) { input.value = csrf.value; }
      });
    }
  }

  function connect() {
    var joiner = root.dataset.stream.indexOf("?") < 0 ? "?" : "&";
    source = new EventSource(root.dataset.stream + joiner + "after=" + encodeURIComponent(root.dataset.lastSeq || "0"));
    source.onopen = function () { status.textContent = "live"; };
    source.onerror = function () { if (root.dataset.live === "true") { status.textContent = "reconnecting…"; } };
    source.onmessage = function (e) {
      var msg = JSON.parse(e.data);
      if (msg.seq <= Number(root.dataset.lastSeq || "0")) { return; }
      (msg.ops || []).forEach(apply);
      root.dataset.lastSeq = String(msg.seq);
      if (msg.ended) {
        disconnect();
        root.dataset.live = "false";
        status.textContent = "ended";
      }
    };
    source.addEventListener("reload", function () { disconnect(); window.location.reload(); });
  }

  function disconnect() {
    if (source) { source.close(); source = null; }
  }

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") {
      disconnect();
      if (root.dataset.live === "true") { status.textContent = "paused while the tab is hidden"; }
    } else if (!source && root.dataset.live === "true") {
      connect();
    }
  });

  if (document.visibilityState !== "hidden") { connect(); }
})();
