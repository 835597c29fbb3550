// The owner at the table on the live meeting page (meeting_parts.html "table"; bot/web/meeting_table.py): the
// contribution box and the controls are sent without leaving the page, the answer shown in #table-status.
// Each contribution carries an id made here; it is renewed only once the board has it, so the same text sent
// twice (a double press, a retry after a dropped connection) is stored once. Ctrl+Enter (Cmd+Enter) sends.
// Without script the forms post and the server comes back to this page with a note.
(function () {
  "use strict";
  var box = document.getElementById("table");
  var root = document.getElementById("meeting");
  if (!box || !window.fetch) { return; }
  var status = document.getElementById("table-status");
  var say = document.getElementById("say");
  var text = document.getElementById("say-text");
  var sendButton = document.getElementById("say-send");

  function newId() {
    var bytes = new Uint8Array(12);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  function tell(message, problem) {
    status.textContent = message;
    status.classList.toggle("problem", !!problem);
  }

  function send(form, done) {
    var data = new URLSearchParams(new FormData(form));
    return fetch(form.action, {method: "POST", body: data, credentials: "same-origin",
                               headers: {"Accept": "application/json"}})
      .then(function (response) {
        return response.json().catch(function () { return {ok: false, problem: "Sabha answered " + response.status + "; reload the page."}; });
      })
      .then(function (answer) {
        tell(answer.ok ? answer.said : answer.problem, !answer.ok);
        if (answer.ok && done) { done(); }
      })
      .catch(function () { tell("Not sent: Sabha cannot be reached. Try again (it is stored once).", true); });
  }

  say.addEventListener("submit", function (event) {
    event.preventDefault();
    if (!text.value.trim()) { tell("Write something first: the box is empty.", true); return; }
    sendButton.disabled = true;
    send(say, function () {
      text.value = "";
      document.getElementById("say-id").value = newId();
    }).then(function () { sendButton.disabled = false; text.focus(); });
  });

  text.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      say.requestSubmit();
    }
  });

  box.querySelectorAll("form.control").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var step = form.closest("[popover]");
      if (step && step.hidePopover) { step.hidePopover(); }
      send(form, null);
    });
  });

  // the meeting ended (live.js sets data-live to "false"): nothing more can be said to it
  if (root && window.MutationObserver) {
    new MutationObserver(function () {
      if (root.dataset.live === "false") { box.hidden = true; }
    }).observe(root, {attributes: true, attributeFilter: ["data-live"]});
  }
})();
