// The web chat page: reads the conversation over SSE, posts messages with a client id.
// Entries (id = seq) are shown once each; a draft (the answer being written) is replaced by its
// reply when that arrives, and never shown again after it. A reply's Markdown comes rendered by the
// server (entry.html: raw HTML escaped there, line breaks kept); everything else is set as text.
// A page that opens also gets the conversation's messages written elsewhere (the terminal, Telegram):
// "history" events, in time order among the entries, each shown once (by its id).
(function () {
  "use strict";
  var main = document.getElementById("chat");
  var advisor = main.dataset.advisor;
  var maxChars = parseInt(main.dataset.max, 10);
  var csrf = document.getElementById("csrf").value;
  var log = document.getElementById("log");
  var statusLine = document.getElementById("status");
  var errorLine = document.getElementById("error");
  var form = document.getElementById("compose");
  var box = document.getElementById("message");
  var sendButton = document.getElementById("send");
  var base = "/ui/chat/" + encodeURIComponent(advisor);
  var pendingKey = "sabha-chat-pending-" + advisor;
  var shown = {};      // seq -> true
  var drafts = {};     // question client id -> {item, text}
  var finished = {};   // question client id -> true (its reply is shown)
  var earlier = {};    // id of a message written elsewhere -> true (shown)

  function clientId() {
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return "c-" + Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  function showError(text) {
    errorLine.textContent = text;
    errorLine.hidden = !text;
  }

  function bubble(kind, label, text) {
    var item = document.createElement("li");
    item.className = "msg " + kind;
    var who = document.createElement("p");
    who.className = "who";
    who.textContent = label || "";
    var body = document.createElement("div");
    body.className = "text";
    body.textContent = text;
    item.appendChild(who);
    item.appendChild(body);
    return item;
  }

  function scrollDown() {
    window.scrollTo(0, document.body.scrollHeight);
  }

  function addButtons(item, entry) {
    if (!entry.buttons || !entry.buttons.length) { return; }
    var row = document.createElement("div");
    row.className = "buttons";
    entry.buttons.forEach(function (b, i) {
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = b.label;
      button.setAttribute("aria-label", b.label + " (sends " + b.command + ")");
      button.addEventListener("click", function () {
        button.disabled = true;  // a second press is the same message anyway (same client id)
        send(b.command, "button-" + entry.seq + "-" + i).then(function () { button.disabled = false; });
      });
      row.appendChild(button);
    });
    item.appendChild(row);
  }

  function rendered(item, html) {
    var body = item.querySelector(".text");
    body.classList.add("markdown");
    body.innerHTML = html;  // rendered and escaped by the server (bot.web.render.markdown)
  }

  function onHistory(line) {
    if (earlier[line.id]) { return; }
    earlier[line.id] = true;
    var item = bubble("history " + line.kind, line.label, line.text);
    if (line.html) { rendered(item, line.html); }
    if (line.at) { item.title = "Written " + new Date(line.at).toLocaleString(); }
    log.appendChild(item);
    scrollDown();
  }

  function onEntry(entry) {
    if (shown[entry.seq]) { return; }
    shown[entry.seq] = true;
    var label = entry.kind === "question" ? "You" : (entry.label || "Sabha");
    var item = bubble(entry.kind, label, entry.text);
    item.dataset.seq = entry.seq;
    if (entry.html) { rendered(item, entry.html); }
    addButtons(item, entry);
    if (entry.reply_to && entry.kind !== "question") {
      finished[entry.reply_to] = true;
      var draft = drafts[entry.reply_to];
      if (draft) {
        log.replaceChild(item, draft.item);  // the reply takes the draft's place
        delete drafts[entry.reply_to];
        scrollDown();
        return;
      }
    }
    log.appendChild(item);
    scrollDown();
  }

  function draftItem(data) {
    var draft = drafts[data.reply_to];
    if (!draft) {
      var item = bubble("draft", data.label || "…", "");
      item.setAttribute("aria-busy", "true");
      draft = drafts[data.reply_to] = {item: item, text: ""};
      log.appendChild(item);
    }
    return draft;
  }

  function paint(draft, status) {
    var body = draft.item.querySelector(".text");
    body.textContent = draft.text || status || "…";
    draft.item.classList.toggle("waiting", !draft.text);
    draft.item.dataset.length = String(draft.text.length);
  }

  function onDraft(data) {
    if (finished[data.reply_to]) { return; }
    var draft = draftItem(data);
    if (data.label) { draft.item.querySelector(".who").textContent = data.label; }
    draft.text = data.text || "";
    paint(draft, data.status);
    scrollDown();
  }

  function onDelta(data) {
    if (finished[data.reply_to]) { return; }
    var draft = draftItem(data);
    draft.text += data.text;
    paint(draft, null);
    scrollDown();
  }

  function onDraftEnd(data) {
    var draft = drafts[data.reply_to];
    if (draft) {
      log.removeChild(draft.item);
      delete drafts[data.reply_to];
    }
  }

  function parse(handler) {
    return function (event) {
      try { handler(JSON.parse(event.data)); } catch (e) { showError("Could not read an update: " + e); }
    };
  }

  // The newest conversation row shown, so a stream opened again starts after it.
  function lastSeq() {
    return Object.keys(shown).reduce(function (max, seq) { return Math.max(max, Number(seq) || 0); }, 0);
  }

  var source = null;

  function connect() {
    var last = lastSeq();
    source = new EventSource(base + "/events" + (last ? "?after=" + last : ""));
    source.addEventListener("entry", parse(onEntry));
    source.addEventListener("history", parse(onHistory));
    source.addEventListener("draft", parse(onDraft));
    source.addEventListener("delta", parse(onDelta));
    source.addEventListener("draft_end", parse(onDraftEnd));
    source.addEventListener("open", function () {
      // (Re)connected: the server sends the drafts being written now; any other draft is stale
      // (its answer came, or Sabha restarted since), so it goes.
      Object.keys(drafts).forEach(function (key) { onDraftEnd({reply_to: key}); });
      statusLine.textContent = "Connected.";
      main.dataset.connected = "true";
    });
    source.addEventListener("error", function () {
      statusLine.textContent = "Reconnecting…";  // EventSource retries with Last-Event-ID by itself
      main.dataset.connected = "false";
    });
  }

  function send(text, id) {
    var pending = {text: text, id: id};
    try { sessionStorage.setItem(pendingKey, JSON.stringify(pending)); } catch (e) { /* private mode */ }
    return fetch(base + "/messages", {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
      body: JSON.stringify({text: text, client_id: id})
    }).then(function (response) {
      return response.json().catch(function () { return {error: "The server answered " + response.status}; })
        .then(function (body) {
          if (response.ok) {
            sessionStorage.removeItem(pendingKey);
            showError("");
            return true;
          }
          if (response.status < 500) { sessionStorage.removeItem(pendingKey); }
          showError(body.error || ("The server answered " + response.status));
          return false;
        });
    }, function () {
      showError("The message could not be sent (no connection); it is sent again when you reload the page.");
      return false;
    });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var text = box.value;
    if (!text.trim()) { showError("Type a message first: an empty message is not sent."); box.focus(); return; }
    if (text.length > maxChars) {
      showError("That message is " + text.length + " characters long; the limit is " + maxChars + ".");
      return;
    }
    sendButton.disabled = true;
    send(text, clientId()).then(function (ok) {
      sendButton.disabled = false;
      if (ok) { box.value = ""; }
      box.focus();
    });
  });

  box.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  // A message whose POST had no answer (a reload, a lost connection) is sent again with the same
  // client id: the board answers it once either way.
  try {
    var left = JSON.parse(sessionStorage.getItem(pendingKey) || "null");
    if (left && left.id && left.text) { send(left.text, left.id); }
  } catch (e) { /* nothing pending */ }

  // A browser keeps at most 6 connections to a server over HTTP/1.1, and each open chat or live
  // meeting tab holds one stream: a hidden tab closes its stream and opens it again, after the last
  // row it shows, when it is shown (behind an HTTP/2 proxy the limit does not apply).
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") {
      if (source) { source.close(); source = null; }
      statusLine.textContent = "Paused while the tab is hidden.";
      main.dataset.connected = "false";
    } else if (!source) {
      connect();
    }
  });

  if (document.visibilityState !== "hidden") { connect(); }
})();
