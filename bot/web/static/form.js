// New meeting form: one press sends it once (the server also starts one meeting per form).
(function () {
  "use strict";
  var form = document.getElementById("new-meeting");
  if (!form) { return; }
  form.addEventListener("submit", function () {
    var button = document.getElementById("start");
    window.setTimeout(function () { button.disabled = true; button.textContent = "Starting…"; }, 0);
  });
})();
