// What every test page reports to the test's PageServer (tests/apps/real_apps.py): its page's
// state(), what just happened, and a count, as fetches may arrive out of order. Loaded after
// the page's own script, so the first report is the state the page loaded with.
let seq = 0;
function post(ev) { fetch('/state', {method: 'POST', body: JSON.stringify(
  {...state(), event: ev, seq: ++seq})}); }
post('load');
