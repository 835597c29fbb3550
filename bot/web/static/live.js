// The live meeting page: follows /ui/meetings/{id}/events (Server-Sent Events) and places the HTML
// fragments the server renders. The browser resumes a dropped stream with Last-Event-ID by itself.
(function () {
  "use strict";
  var root = document.getElementById("meeting");
  if (!root || root.dataset.live !== "true" || !window.EventSource) { return; }
  var status = document.getElementById("live-status");
  var source = new EventSource(root.dataset.stream + "?after=" + encodeURIComponent(root.dataset.lastSeq || "0"));

  // The stream's fragments are the same for every watcher, so its forms (the decision's Ratify / Veto /
  // Revisit) come without this page's CSRF token: it is copied from the page's own form.
  var csrf = document.querySelector(".logout input[name=csrf]");

  function apply(op) {
    var target = document.getElementById(op.target);
    if (!target) { return; }
    if (op.op === "append") {
      if (op.id && document.getElementById(op.id)) { return; }  // already shown: never twice
      target.insertAdjacentHTML("beforeend", op.html);
    } else {
      target.innerHTML = op.html;
    }
    if (csrf) {
      target.querySelectorAll("input[name=csrf]").forEach(function (input) {
        if (!input.value) { input.value = csrf.value; }
      });
    }
  }

  source.onopen = function () { status.textContent = "live"; };
  source.onerror = function () { if (root.dataset.live === "true") { status.textContent = "reconnecting…"; } };
  source.onmessage = function (e) {
    var msg = JSON.parse(e.data);
    if (msg.seq <= Number(root.dataset.lastSeq || "0")) { return; }
    (msg.ops || []).forEach(apply);
    root.dataset.lastSeq = String(msg.seq);
    if (msg.ended) {
      source.close();
      root.dataset.live = "false";
      status.textContent = "ended";
    }
  };
  source.addEventListener("reload", function () { source.close(); window.location.reload(); });
})();
