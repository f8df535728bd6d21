// Says when the page's live updates stop and when they are back: the SSE stream (Today) and
// the kiosk's state (every page) both go through htmx, whose events say so. A file of its own
// because the CSP runs no inline script.
(function () {
  "use strict";
  function paused(on) {
    var notice = document.getElementById("live-paused");
    if (notice) { notice.hidden = !on; }
  }
  document.addEventListener("htmx:sseError", function () { paused(true); });
  document.addEventListener("htmx:sseOpen", function () { paused(false); });
  document.addEventListener("htmx:sendError", function () { paused(true); });
  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail && event.detail.successful) { paused(false); }
  });
})();
