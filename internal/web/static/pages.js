// Progressive enhancement of the browsing pages; every page works
// without it. Copy buttons (data-copy="ID" copies the text of that
// element), search as you type (the search form fetches its results from
// the same /search route, which answers with the results alone when asked
// with fragment=1), the diff view's repository picker, and the delete
// confirmation (the button stays
// disabled until the repository's name is typed; the server checks it
// again).
(function () {
  "use strict";

  function announce(msg) {
    var status = document.getElementById("copy-status");
    if (status) { status.textContent = msg; }
  }

  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("[data-copy]");
    if (!btn) { return; }
    var el = document.getElementById(btn.getAttribute("data-copy"));
    if (!el) { return; }
    var text = el.textContent.trim();
    var done = function () {
      var label = btn.textContent;
      btn.textContent = "Copied";
      btn.classList.add("copied");
      announce("Copied: " + text);
      setTimeout(function () { btn.textContent = label; btn.classList.remove("copied"); }, 2000);
    };
    var fallback = function () {
      var range = document.createRange();
      range.selectNodeContents(el);
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      try {
        if (document.execCommand("copy")) { done(); return; }
      } catch (e) { /* the manual hint below */ }
      announce("Press Ctrl+C (⌘C on a Mac) to copy the selected command.");
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, fallback);
    } else {
      fallback();
    }
  });

  var form = document.getElementById("search-form");
  var input = document.getElementById("q");
  var results = document.getElementById("results");
  if (form && input && results && window.fetch) {
    var timer = null;
    var seq = 0;
    // Where a cleared search goes back to: the page as it was opened
    // without a query (home, or the empty search page).
    var home = location.pathname === "/";
    var emptyURL = home ? "/" : "/search";
    var emptyTitle = home ? "Find Helm charts · chartctl" : "Search · chartctl";
    // The search's parameters: the box and every filter that is set,
    // as the form would send them.
    var params = function () {
      var out = new URLSearchParams();
      new FormData(form).forEach(function (v, k) {
        v = String(v).trim();
        if (v !== "") { out.append(k, v); }
      });
      return out;
    };
    var run = function () {
      var q = input.value.trim();
      var mine = ++seq;
      var ps = params();
      if (q === "" && (ps.toString() === "" || ps.toString() === "deprecated=true")) {
        results.innerHTML = "";
        if (window.history && history.replaceState) {
          history.replaceState(null, "", emptyURL);
          document.title = emptyTitle;
        }
        return;
      }
      var query = ps.toString();
      var url = "/search?fragment=1&" + query;
      // A short message in the results box, never another page inside it.
      var fail = function (msg) {
        if (mine !== seq) { return; }
        var p = document.createElement("p");
        p.className = "alert alert-error search-error";
        p.setAttribute("role", "alert");
        p.textContent = msg;
        results.replaceChildren(p);
      };
      fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (r) {
          // Only the search's own results fragment goes into the box: it
          // says so in X-Search-Fragment. An error page (a 5xx, a proxy's
          // page, a rate limit) does not.
          if (r.headers.get("X-Search-Fragment") !== "1") {
            var what = r.status === 429 ? "Too many searches; wait a moment, then press Enter to search."
              : "Search failed (error " + r.status + "). Press Enter to try again, or try later.";
            fail(what);
            return null;
          }
          return r.text();
        })
        .then(function (html) {
          if (html === null || mine !== seq) { return; }
          // The fragment is this server's own template output.
          results.innerHTML = html;
          if (window.history && history.replaceState) {
            history.replaceState(null, "", "/search?" + query);
            document.title = (q === "" ? "Search" : "Search: " + q) + " · chartctl";
          }
        })
        .catch(function () {
          fail("Search is unreachable right now. Check your connection, then press Enter to search.");
        });
    };
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(run, 200);
    });
  }

  // The diff picker: picking another repository lists that repository's
  // versions of the chart in the To list (the page asks itself for them
  // with fragment=to-versions). Without script, Compare does it.
  var toRepo = document.getElementById("to_repo");
  var toSel = document.getElementById("to");
  var diffForm = document.getElementById("diff-form");
  if (toRepo && toSel && diffForm && window.fetch) {
    var pickerStatus = document.getElementById("picker-status");
    toRepo.addEventListener("change", function () {
      var u = diffForm.getAttribute("action") + "?fragment=to-versions&to_repo=" + encodeURIComponent(toRepo.value);
      fetch(u, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (r) {
          if (r.headers.get("X-Diff-Fragment") !== "1") { throw new Error("status " + r.status); }
          return r.text();
        })
        .then(function (html) {
          // The fragment is this server's own template output: options.
          toSel.innerHTML = html;
          if (pickerStatus) {
            pickerStatus.textContent = toSel.options.length + " versions of " + toRepo.value + " to compare to.";
          }
        })
        .catch(function () {
          if (pickerStatus) { pickerStatus.textContent = "The versions of " + toRepo.value + " could not be loaded; press Compare."; }
        });
    });
  }

  var confirmInput = document.querySelector("[data-confirm-name]");
  var deleteBtn = document.getElementById("delete-repo");
  if (confirmInput && deleteBtn) {
    var check = function () {
      deleteBtn.disabled = confirmInput.value.trim() !== confirmInput.getAttribute("data-confirm-name");
    };
    confirmInput.addEventListener("input", check);
    check();
  }
})();
