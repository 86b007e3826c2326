// Copy buttons: <button data-copy-target="ID"> copies the value of the
// element with that ID. The only script of the dashboard; pages work
// without it.
(function () {
  "use strict";
  function announce(msg) {
    var status = document.getElementById("copy-status");
    if (status) { status.textContent = msg; }
  }
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("[data-copy-target]");
    if (!btn) { return; }
    var field = document.getElementById(btn.getAttribute("data-copy-target"));
    if (!field) { return; }
    var value = field.value || field.textContent;
    var done = function () {
      btn.textContent = "Copied";
      btn.classList.add("copied");
      announce("The key was copied to the clipboard.");
      setTimeout(function () { btn.textContent = "Copy"; btn.classList.remove("copied"); }, 2000);
    };
    var fallback = function () {
      field.focus();
      field.select();
      try {
        if (document.execCommand("copy")) { done(); return; }
      } catch (e) { /* fall through to the manual hint */ }
      announce("Press Ctrl+C (⌘C on a Mac) to copy the selected key.");
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(value).then(done, fallback);
    } else {
      fallback();
    }
  });
})();
