// The ptxmm playground: an editor, the bundled examples and tutorial steps, and the HTTP API
// (docs/web.md). Everything shown is what the server computed; the page adds no verdict of its own.
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var state = { examples: [], step: -1, result: null, selected: -1, busy: false, marked: null,
                drawSeq: 0, job: null, loading: false };

  var editor = CodeMirror.fromTextArea($("source"), {
    mode: { name: "ptx" }, lineNumbers: true, indentUnit: 4, tabSize: 4, viewportMargin: Infinity,
    extraKeys: { "Ctrl-Enter": function () { check(); }, "Cmd-Enter": function () { check(); } }
  });
  window.ptxmmEditor = editor;  // for tests and the console

  // ----- the URL fragment: #fmt=…&model=…&src=<base64url of the UTF-8 source> ------------------
  function b64encode(text) {
    var bytes = new TextEncoder().encode(text), bin = "";
    for (var i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function b64decode(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    var bin = atob(s), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new TextDecoder().decode(bytes);
  }
  function shareUrl() {
    var p = new URLSearchParams();
    if ($("format").value) p.set("fmt", $("format").value);
    p.set("model", $("model").value);
    if ($("engine").value !== "auto") p.set("engine", $("engine").value);
    if ($("unroll").value !== "2") p.set("unroll", $("unroll").value);
    if ($("liveness").checked) p.set("live", "1");
    if ($("liveness").checked && $("progress").value !== "fair") p.set("progress", $("progress").value);
    p.set("src", b64encode(editor.getValue()));
    return location.origin + location.pathname + "#" + p.toString();
  }
  function fromHash() {
    if (location.hash.length < 2) return false;
    var p = new URLSearchParams(location.hash.slice(1));
    if (!p.has("src")) return false;
    state.loading = true;
    try { editor.setValue(b64decode(p.get("src"))); } catch (e) { status("the link's source is damaged"); return false; }
    finally { state.loading = false; }
    $("liveness").checked = p.get("live") === "1";
    $("progress").disabled = !$("liveness").checked;
    if (p.has("progress")) $("progress").value = p.get("progress");
    if (p.has("fmt")) $("format").value = p.get("fmt");
    if (p.has("model")) $("model").value = p.get("model");
    if (p.has("engine")) $("engine").value = p.get("engine");
    if (p.has("unroll")) $("unroll").value = p.get("unroll");
    setMode();
    return true;
  }

  // ----- talking to the server ------------------------------------------------------------------
  function status(text) { $("status").textContent = text; }
  function request(fields) {
    var body = { source: editor.getValue(), unroll: +$("unroll").value };
    if ($("model-text").value.trim()) body.model_text = $("model-text").value;  // the page's own model
    else body.model = $("model").value;
    if ($("format").value) body.format = $("format").value;
    if ($("launch").value.trim()) body.launch = $("launch").value.trim();
    for (var k in fields) body[k] = fields[k];
    return body;
  }
  function live(body) {  // check and explain: the liveness switch and its progress model
    if ($("liveness").checked) {
      body.liveness = true;
      if ($("progress").value !== "fair") body.progress = $("progress").value;
    }
    return body;
  }
  function newToken() {
    var a = new Uint8Array(12), s = "";
    crypto.getRandomValues(a);
    for (var i = 0; i < a.length; i++) s += ("0" + a[i].toString(16)).slice(-2);
    return s;
  }
  function post(path, body, token) {
    var headers = { "Content-Type": "application/json" };
    if (token) headers["X-Ptxmm-Job"] = token;
    return fetch(path, { method: "POST", headers: headers, body: JSON.stringify(body) })
      .then(function (r) {
        return r.text().then(function (text) { return { status: r.status, text: text,
                                                         type: r.headers.get("content-type") || "" }; });
      });
  }
  // a request under way: the buttons off, the time so far, a progress bar and Cancel (which
  // stops the request's worker on the server: POST /api/cancel)
  function busy(on, what) {
    state.busy = on;
    ["check", "explain", "fix"].forEach(function (id) { $(id).disabled = on; });
    $("progress-bar").hidden = !on;
    $("cancel").hidden = !on;
    $("cancel").disabled = false;
    if (on) {
      var t0 = performance.now();
      state.job = newToken();
      status(what + "…");
      state.ticker = setInterval(function () {
        status(what + "… " + ((performance.now() - t0) / 1000).toFixed(1) + " s");
      }, 200);
    } else {
      clearInterval(state.ticker);
      state.job = null;
    }
    return state.job;
  }
  function cancel() {
    if (!state.job) return;
    $("cancel").disabled = true;
    status("cancelling…");
    post("/api/cancel", { job: state.job });
  }
  function failed(r, obj, what) {  // an answer other than 200: an error, a cancel, a busy server
    if (r.status === 409 && obj && obj.error && obj.error.kind === "cancelled") {
      status(what + " cancelled: nothing decided");
      return;
    }
    showError(obj, r.status);
    var e = obj && obj.error;
    status(e ? "error (" + e.kind + "): not " + what : "error: HTTP " + r.status + ", not " + what);
  }

  function showError(obj, status_) {
    var e = obj && obj.error ? obj.error : { kind: "error", message: "HTTP " + status_ };
    var box = $("error");
    box.hidden = false;
    box.textContent = "";
    var head = (e.position ? e.position + ": " : "") + e.kind + ": " + e.message;
    var line = document.createElement("div");
    line.textContent = head;
    box.appendChild(line);
    if (e.hint) {
      var hint = document.createElement("div");
      hint.textContent = "hint: " + e.hint;
      box.appendChild(hint);
    }
    var m = e.position && /:(\d+):(\d+)$/.exec(e.position);
    if (m && e.position.indexOf("playground.cat:") === 0) {  // the model written below, not the test
      $("model-box").open = true;
      var t = $("model-text"), lines = t.value.split("\n"), at = 0;
      for (var i = 0; i < +m[1] - 1 && i < lines.length; i++) at += lines[i].length + 1;
      t.focus();
      t.setSelectionRange(at, at + (lines[+m[1] - 1] || "").length);
      m = null;
    }
    if (m) {
      var ln = +m[1] - 1, col = +m[2] - 1;
      state.marked = editor.addLineClass(ln, "background", "cm-error-line");
      var a = document.createElement("a");
      a.textContent = "go to line " + m[1];
      a.onclick = function () { editor.focus(); editor.setCursor({ line: ln, ch: col }); };
      box.appendChild(a);
    }
  }
  function clearResults() {
    if (state.marked) { editor.removeLineClass(state.marked, "background", "cm-error-line"); state.marked = null; }
    ["error", "verdict", "liveness-line", "filter-box", "outcomes", "findings", "warnings", "graph-box",
     "explain-box", "report-box", "json-box"].forEach(function (id) { $(id).hidden = true; });
    $("summary").textContent = "";
    $("hello").hidden = true;
  }

  // ----- Check ------------------------------------------------------------------------------------
  function check() {
    if (state.busy) return;
    clearResults();
    state.result = null;
    state.selected = -1;
    var token = busy(true, "checking");
    history.replaceState(null, "", shareUrl());
    var t0 = performance.now();
    return post("/api/check", live(request({ engine: $("engine").value, text: true })), token).then(function (r) {
      busy(false);
      var obj = parse(r.text);
      if (r.status !== 200) { failed(r, obj, "checked"); return; }
      state.result = obj;
      showResult(obj);
      status(checkedStatus(obj, (performance.now() - t0) / 1000));
      return drawFor(null);
    }, function (err) { busy(false); status("the server did not answer: " + err); });
  }
  // what happened, in words: decided, stopped at the time limit (not decided), or no condition
  var serverLimit = null;  // /api/info's time_limit_s: a check's JSON does not repeat its limit
  function limitOf(res) { return res.timeout != null ? res.timeout : serverLimit; }
  function checkedStatus(res, secs) {
    var t = secs.toFixed(2) + " s";
    if (res.status === "timeout") {
      return "time limit: stopped after " + t + " (limit " + limitOf(res) + " s), not decided";
    }
    if (res.status === "no-execution") return "not decided: no execution finishes within the unroll bound";
    if (res.status === "stopped") return "stopped at max_outcomes after " + t + ": outcomes listed so far";
    if (res.condition && (res.holds === null || res.holds === undefined)) return "not decided (" + t + ")";
    if (!res.condition) return "no condition: the allowed outcomes listed (" + t + ")";
    return "checked in " + t;
  }
  function parse(text) { try { return JSON.parse(text); } catch (e) { return null; } }

  var VERDICT = {
    exists: ["ALLOWED", "FORBIDDEN"], "~exists": ["holds (never happens)", "fails (can happen)"],
    forall: ["REQUIRED (always)", "not required"]
  };
  var STATUS = { timeout: "the time limit passed", "no-execution": "no execution finishes within the unroll bound",
                 stopped: "stopped at max_outcomes" };
  function showResult(res) {
    var v = $("verdict");
    v.hidden = false;
    var cond = res.condition;
    // the colour says whether the answer agrees with the file's expectation (neutral without
    // one), never whether the condition is reachable
    if (res.holds === null || res.holds === undefined) {
      v.className = "unknown";
      v.textContent = res.status === "timeout" ? "Not decided — the time limit (" + limitOf(res) +
        " s) passed" : cond ? "Not decided — " + (res.unknown || STATUS[res.status] || "no verdict")
        : "No condition — the outcomes the model allows";
    } else {
      v.className = res.agrees === true ? "agrees" : res.agrees === false ? "disagrees" : "neutral";
      v.textContent = (res.holds ? "Ok  " : "No  ") + VERDICT[cond.quantifier][res.holds ? 0 : 1] +
        "  — " + cond.text;
    }
    if (res.expect) {  // a kernel's `// ptxmm: expect` line: the kinds found against it
      var want = res.expect.findings.join(", ") || "ok", got = res.expect.found.join(", ") || "ok";
      agreement(v, res.expect.agrees === null ? "expect " + want + ": not decided" :
        (res.expect.agrees ? "✓ agrees with expect " + want : "✗ expect " + want + ", found " + got));
      if (res.expect.agrees === false) v.className = "disagrees";  // both expectations must hold
      else if (res.expect.agrees === true && res.agrees !== false) v.className = "agrees";
    }
    if (res.agrees !== null && res.agrees !== undefined) {
      agreement(v, (res.agrees ? "✓ agrees with" : "✗ disagrees with") + " .expect");
    } else if (res.holds !== null && res.holds !== undefined && !res.expect) {
      agreement(v, "no expectation in the file");
    }
    showLiveness(res.liveness);
    var bits = [];
    if (res.n_outcomes !== null && res.n_outcomes !== undefined) bits.push(res.n_outcomes + " allowed outcome(s)");
    if (res.outcomes_left_out) bits.push(res.outcomes_left_out + " not listed");
    if (res.engine) bits.push("engine " + res.engine);
    if (res.model) bits.push("model " + res.model);
    if (res.n_events !== undefined) bits.push(res.n_events + " events");
    if (res.time_s !== undefined) bits.push((res.time_s * 1000).toFixed(1) + " ms");
    if (res.bound && res.bound.cut_paths) bits.push(res.bound.cut_paths + " path(s) cut by the unroll bound");
    if (res.bound && res.bound.awaits) bits.push(res.bound.awaits + " spin loop(s) reduced to await reads");
    if (res.status && res.status !== "ok") bits.push("status " + res.status);
    $("summary").textContent = bits.join(" · ");
    outcomeTable(res);
    list("findings", (res.findings || []).map(function (f) {
      if (f.detail) return f.name + ": " + f.detail;  // a hang says where and why
      return f.name + ": " + f.events.map(function (e) {
        return e.thread + " " + e.text + (e.line ? " (line " + e.line + ")" : "");
      }).join("  ~  ");
    }));
    // click a finding to draw its witness (a hang: the execution up to where it repeats)
    Array.prototype.forEach.call($("findings").children, function (li, i) {
      var kind = res.findings[i].kind;
      li.title = "draw this " + kind + "'s witness";
      li.className = "drawable";
      li.onclick = function () { drawFinding(kind); };
    });
    list("warnings", (res.warnings || []).map(function (w) {
      return (w.position ? w.position + ": " : "") + "warning: " + w.message + (w.hint ? " — " + w.hint : "");
    }));
    $("report").textContent = res.text || "";
    $("report-box").hidden = !res.text;
    var shown = {};
    for (var k in res) if (k !== "text") shown[k] = res[k];
    $("json").textContent = JSON.stringify(shown, null, 2);
    $("json-box").hidden = false;
  }
  var LIVE = { hangs: "an execution hangs", terminates: "no execution hangs", unknown: "not decided" };
  function showLiveness(l) {
    var box = $("liveness-line");
    box.hidden = !l;
    if (!l) return;
    box.className = l.agrees === true ? "agrees" : l.agrees === false ? "disagrees" :
      l.verdict === "hangs" ? "hangs" : "neutral";
    box.textContent = "Liveness: " + (LIVE[l.verdict] || l.verdict) + " (progress " + l.progress + ")" +
      (l.verdict === "hangs" ? " — the hang finding below says where and why; Explain draws it out" : "");
    if (l.agrees !== null && l.agrees !== undefined) {
      agreement(box, (l.agrees ? "✓ agrees with" : "✗ disagrees with") + " .expect-liveness " + l.expected);
    }
  }
  // a note on agreement at the right of a verdict line; a space before it, so that the line's
  // text (copied, or read by a test) does not run the verdict and the note together
  function agreement(box, text) {
    var a = document.createElement("span");
    a.className = "agree";
    a.textContent = text;
    box.appendChild(document.createTextNode(" "));
    box.appendChild(a);
  }
  function list(id, items) {
    var ul = $(id);
    ul.textContent = "";
    items.forEach(function (t) { var li = document.createElement("li"); li.textContent = t; ul.appendChild(li); });
    ul.hidden = !items.length;
  }
  function outcomeTable(res) {
    var t = $("outcomes"), head = t.tHead, body = t.tBodies[0];
    head.textContent = ""; body.textContent = "";
    var obs = res.observables || [], outs = res.outcomes || [];
    if (!outs.length) { t.hidden = true; return; }
    var tr = head.insertRow();
    ["#"].concat(obs, ["cond", "flags"]).forEach(function (h) {
      var th = document.createElement("th"); th.textContent = h; tr.appendChild(th);
    });
    var sat = outs.filter(function (o) { return o.satisfies; }).length;
    $("filter-box").hidden = !res.condition || outs.length < 2;
    $("filter-box").title = sat + " of " + outs.length + " listed outcome(s) satisfy the condition";
    outs.forEach(function (o, i) {
      var row = body.insertRow();
      row.className = o.satisfies ? "sat" : "unsat";
      row.dataset.index = i;
      cell(row, String(i + 1));
      obs.forEach(function (k) { cell(row, k in o.values ? String(o.values[k]) : "·"); });
      cell(row, o.satisfies === null ? "" : o.satisfies ? "✓" : "·", "cond");
      cell(row, (o.flags || []).join(" "), "flags");
      row.onclick = function () { selectOutcome(i); };
    });
    t.hidden = false;
    filter();
  }
  function filter() { $("outcomes").classList.toggle("only-sat", $("filter").checked); }
  function cell(row, text, cls) { var c = row.insertCell(); c.textContent = text; if (cls) c.className = cls; }
  function outcomeText(i) {
    var o = state.result.outcomes[i];
    return Object.keys(o.values).map(function (k) { return k + "=" + o.values[k]; }).join(" ");
  }
  function selectOutcome(i) {
    state.selected = i;
    Array.prototype.forEach.call($("outcomes").tBodies[0].rows, function (r, j) {
      r.classList.toggle("selected", j === i);
    });
    return drawFor(outcomeText(i), "outcome " + (i + 1));
  }

  // ----- the execution graph ----------------------------------------------------------------------
  // The server answers the drawing's DOT (what `ptxmm graph -o out.dot` writes); the page lays it out
  // with Graphviz compiled to WebAssembly (static/graphviz, vendored), as `ptxmm graph` lays the
  // same DOT out with `dot`, and as the command line does (graph.laid_out) lays it out again with
  // more room between nodes and ranks (/api/info's graph_spacings) until no edge label is on another
  // label or on a box (overlaps: labelfit.py's check, the same estimate of the text's ink). Where no
  // spacing places every label clear (Graphviz 16 in WebAssembly places them otherwise than the
  // server's dot), the server's own drawing is shown when it has dot (graph.laid_out: clear, or
  // its edges unlabelled), else the WebAssembly drawing with its edges unlabelled. Where the
  // WebAssembly cannot run, the server's SVG is shown instead.
  var graphviz = null, spacings = [], serverDot = false;
  var NUM = /-?\d+(?:\.\d+)?(?:e-?\d+)?/g;
  function bbox(nums) {
    var xs = nums.filter(function (v, i) { return i % 2 === 0; }), ys = nums.filter(function (v, i) { return i % 2; });
    return [Math.min.apply(null, xs), Math.min.apply(null, ys), Math.max.apply(null, xs), Math.max.apply(null, ys)];
  }
  function ink(t) {
    var size = parseFloat(t.getAttribute("font-size") || "14");
    var width = 0.62 * size * t.textContent.trim().length;
    var x = parseFloat(t.getAttribute("x") || "0"), y = parseFloat(t.getAttribute("y") || "0");
    var anchor = t.getAttribute("text-anchor") || "start";
    var x0 = anchor === "middle" ? x - width / 2 : anchor === "end" ? x - width : x;
    return [x0, y - 0.8 * size, x0 + width, y + 0.22 * size];
  }
  function touch(a, b) {
    return a[0] + 0.5 < b[2] && b[0] + 0.5 < a[2] && a[1] + 0.5 < b[3] && b[1] + 0.5 < a[3];
  }
  function overlaps(svgText) {  // how many edge labels touch another label or a node's box
    var doc = new DOMParser().parseFromString(svgText, "image/svg+xml"), nodes = [], labels = [];
    Array.prototype.forEach.call(doc.getElementsByTagName("g"), function (g) {
      var cls = g.getAttribute("class");
      if (cls === "node") {
        var shape = g.getElementsByTagName("path")[0], poly = g.getElementsByTagName("polygon")[0];
        var text = shape ? shape.getAttribute("d") : poly ? poly.getAttribute("points") : "";
        var nums = (text.match(NUM) || []).map(parseFloat);
        if (nums.length) nodes.push(bbox(nums));
      } else if (cls === "edge") {
        Array.prototype.forEach.call(g.getElementsByTagName("text"), function (t) { labels.push(ink(t)); });
      }
    });
    return labels.filter(function (a, i) {
      return labels.slice(i + 1).some(function (b) { return touch(a, b); }) ||
        nodes.some(function (n) { return touch(a, n); });
    }).length;
  }
  window.ptxmmOverlaps = overlaps;  // for tests: the same count as labelfit.overlaps
  function spaced(dot, s) {
    return dot.replace(/nodesep=[0-9.]+ ranksep=[0-9.]+/, "nodesep=" + s[0] + " ranksep=" + s[1]);
  }
  function layout(dot) {  // the SVG text of the first clear spacing, or null where none is
    if (!graphviz) {
      graphviz = import("/static/graphviz/graphviz.js").then(function (m) { return m.Graphviz.load(); });
      graphviz.catch(function () { state.noWasm = true; });
    }
    return graphviz.then(function (gv) {
      var tries = spacings.length ? spacings : [null];
      for (var i = 0; i < tries.length; i++) {
        var text = gv.dot(tries[i] ? spaced(dot, tries[i]) : dot, "svg");
        if (overlaps(text) === 0) return text;
      }
      // as graph.laid_out: the edges unlabelled (their colours name them) rather than a label on
      // a box; the server's dot does it with a line in the legend saying so
      return serverDot ? null : gv.dot(dot.replace(/ xlabel="(?:[^"\\]|\\.)*" fontcolor="[^"]*"/g, ""), "svg");
    });
  }
  window.ptxmmLayout = layout;  // for tests and the console
  function drawn(body, seq, done) {
    var ask = Object.assign({}, body);
    if (!state.noWasm) ask.dot = true;
    return post("/api/graph", ask).then(function (r) {
      if (seq !== state.drawSeq) return;  // a later drawing was asked for meanwhile
      if (r.status !== 200 || r.type.indexOf("graphviz") < 0) { done(); showSvg(r); return; }
      return layout(r.text).then(function (text) {
        if (seq !== state.drawSeq) return;
        if (text === null) return post("/api/graph", body).then(function (r2) {  // the server's own
          if (seq !== state.drawSeq) return;
          done();
          showSvg(r2);
        });
        done();
        showSvg({ status: 200, type: "image/svg+xml", text: text });
      }, function () {  // no WebAssembly here (or it failed): the server lays it out from now on
        state.noWasm = true;
        return drawn(body, seq, done);
      });
    });
  }
  function drawFor(outcome, title) {
    var res = state.result;
    if (!outcome && res && !res.condition) {  // no condition: draw the first outcome's execution
      if (!res.outcomes || !res.outcomes.length) return;
      outcome = outcomeText(0);
      title = "outcome 1";
    }
    $("graph-box").hidden = false;
    $("graph-title").textContent = "— " + (title || "the condition's outcome") + " (drawing…)";
    var body = request({}), seq = ++state.drawSeq;
    if (outcome) body.outcome = outcome;
    return drawn(body, seq, function () {
      $("graph-title").textContent = "— " + (title || "the condition's outcome");
    });
  }
  function drawFinding(kind) {
    $("graph-box").hidden = false;
    $("graph-title").textContent = "— the first " + kind + " finding (drawing…)";
    var body = request({ finding: kind }), seq = ++state.drawSeq;
    if (kind === "hang" && $("liveness").checked && $("progress").value !== "fair") body.progress = $("progress").value;
    return drawn(body, seq, function () {
      $("graph-title").textContent = "— the first " + kind + " finding";
      $("graph-box").scrollIntoView({ block: "nearest" });
    });
  }
  function showSvg(r) {
    var g = $("graph");
    g.textContent = "";
    if (r.status === 200 && r.type.indexOf("svg") >= 0) {
      var doc = new DOMParser().parseFromString(r.text, "image/svg+xml");
      g.appendChild(document.importNode(doc.documentElement, true));
    } else {
      var obj = parse(r.text), p = document.createElement("p");
      p.textContent = obj && obj.error ? "nothing drawn: " + obj.error.message +
        (obj.error.hint ? " (" + obj.error.hint + ")" : "") : "nothing drawn (HTTP " + r.status + ")";
      g.appendChild(p);
    }
  }

  // ----- Explain and Fix --------------------------------------------------------------------------
  function explain(fix) {
    if (state.busy) return;
    if (!state.result) clearResults();
    $("error").hidden = true;
    var token = busy(true, fix ? "searching fixes" : "explaining");
    var fields = live({ text: true, graph: true });
    if (fix) fields.fix = true;
    if (state.result && state.selected >= 0) fields.outcome = outcomeText(state.selected);
    else if (state.result && !state.result.condition && (state.result.outcomes || []).length) {
      fields.outcome = outcomeText(0);  // no condition to explain: the first outcome
    }
    return post("/api/explain", request(fields), token).then(function (r) {
      busy(false);
      var obj = parse(r.text);
      if (r.status !== 200) { failed(r, obj, "explained"); return; }
      $("explain-box").hidden = false;
      $("explain-text").textContent = obj.text || obj.unknown || JSON.stringify(obj, null, 2);
      status(obj.verdict === "unknown" ? "not decided: " + (obj.unknown || "no verdict") :
             (fix ? "fixes" : "explanation") + ": outcome " + obj.verdict +
             (obj.hangs ? "; " + obj.hangs.length + " hang(s)" : ""));
      if (obj.svg) {
        var seq = ++state.drawSeq;  // a drawing still on its way is older than this one
        $("graph-box").hidden = false;
        $("graph-title").textContent = "— as explained";
        var shown = function (text) {
          if (seq === state.drawSeq) showSvg({ status: 200, type: "image/svg+xml", text: text });
        };
        if (obj.dot && !state.noWasm) {
          layout(obj.dot).then(function (text) { shown(text === null ? obj.svg : text); },
                               function () { shown(obj.svg); });
        }
        else shown(obj.svg);
      }
      $("explain-box").scrollIntoView({ block: "nearest" });
    }, function (err) { busy(false); status("the server did not answer: " + err); });
  }

  // ----- examples and the tutorial's steps ------------------------------------------------------
  function loadExample(path) {
    return fetch("/api/examples/" + path).then(function (r) { return r.json(); }).then(function (ex) {
      if (!ex.source) { status("no example " + path); return; }
      state.loading = true;
      editor.setValue(ex.source);
      state.loading = false;
      $("edited").hidden = true;
      // a test that states what liveness it expects (or a liveness example) is checked with it
      $("liveness").checked = /^\s*(\.expect-liveness|\/\/\s*ptxmm:\s*expect-liveness)\b/m.test(ex.source) ||
        path.indexOf("liveness/") === 0;
      $("progress").disabled = !$("liveness").checked;
      $("format").value = ex.format === "ptx" ? "" : ex.format;
      $("launch").value = "";  // a kernel example carries its // ptxmm: launch line
      $("example").value = path;
      setMode();
      state.result = null;
      state.selected = -1;
      clearResults();
      $("hello").hidden = false;
      var i = tutorialIndex(path);
      state.step = i;
      $("step").hidden = i < 0;
      if (i >= 0) {
        var steps = tutorial();
        $("step-text").textContent = steps[i].comment || steps[i].description;
        $("step-prev").disabled = i === 0;
        $("step-next").disabled = i === steps.length - 1;
      }
      history.replaceState(null, "", location.pathname);
      status("opened " + path);
    });
  }
  function tutorial() { return state.examples.filter(function (e) { return e.group === "teaching"; }); }
  function tutorialIndex(path) {
    return tutorial().map(function (e) { return e.path; }).indexOf(path);
  }
  function fillExamples(list) {
    state.examples = list;
    var sel = $("example"), groups = {};
    list.forEach(function (e) {
      var g = groups[e.group];
      if (!g) {
        g = groups[e.group] = document.createElement("optgroup");
        g.label = e.group_title;
        sel.appendChild(g);
      }
      var o = document.createElement("option");
      o.value = e.path;
      o.textContent = (e.group === "teaching" ? e.path.split("/")[1].replace(/\.ptx$/, "") : e.path) +
        (e.description ? " — " + e.description : "");
      g.appendChild(o);
    });
  }
  function fillSelect(id, values, chosen) {
    var sel = $(id);
    values.forEach(function (v) {
      var o = document.createElement("option");
      o.value = v.name || v; o.textContent = v.name || v;
      if (v.description) o.title = v.description;
      sel.appendChild(o);
    });
    sel.value = chosen;
  }
  function setMode() { editor.setOption("mode", { name: "ptx", dialect: $("format").value }); }

  // ----- wiring -------------------------------------------------------------------------------------
  $("check").onclick = function () { check(); };
  $("cancel").onclick = cancel;
  function modelNote() {
    var own = !!$("model-text").value.trim();
    $("model-note").textContent = own ? "(in use instead of " + $("model").value + ")" : "";
    $("model").disabled = own;
  }
  $("model-text").oninput = function () {
    modelNote();
    if (state.result) { state.result = null; state.drawSeq++; clearResults(); status("model edited: check again"); }
  };
  $("model-load").onclick = function () {
    fetch("/api/models/" + encodeURIComponent($("model").value)).then(function (r) { return r.json(); })
      .then(function (m) { if (m.source) { $("model-text").value = m.source; modelNote(); } });
  };
  $("model-clear").onclick = function () { $("model-text").value = ""; modelNote(); };
  $("filter").onchange = filter;
  $("liveness").onchange = function () { $("progress").disabled = !this.checked; };
  // an edit makes what is shown stale: the verdict, outcomes, explanation and drawing of the
  // text before it go; a tutorial step's text stays, marked as describing the file as opened
  editor.on("change", function () {
    if (state.loading || state.busy) return;
    if (state.result || !$("explain-box").hidden || !$("error").hidden || !$("graph-box").hidden) {
      state.result = null;
      state.selected = -1;
      state.drawSeq++;
      clearResults();
      status("edited: check again");
    }
    if (!$("step").hidden) $("edited").hidden = false;
  });
  $("explain").onclick = function () { explain(false); };
  $("fix").onclick = function () { explain(true); };
  $("format").onchange = setMode;
  $("example").onchange = function () { if (this.value) loadExample(this.value); };
  $("step-prev").onclick = function () { loadExample(tutorial()[state.step - 1].path); };
  $("step-next").onclick = function () { loadExample(tutorial()[state.step + 1].path); };
  $("share").onclick = function () {
    var url = shareUrl();
    history.replaceState(null, "", url);
    var done = function () { status("link to this test copied (the source is in the link)"); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(url).then(done, function () { status("link in the address bar"); });
    } else {
      status("link in the address bar (the source is in it)");
    }
  };
  window.addEventListener("hashchange", fromHash);

  Promise.all([fetch("/api/info").then(function (r) { return r.json(); }),
               fetch("/api/examples").then(function (r) { return r.json(); })])
    .then(function (got) {
      var info = got[0];
      serverLimit = info.time_limit_s;
      spacings = info.graph_spacings || [];
      serverDot = !!info.dot;
      fillSelect("model", info.models, "ptx");
      fillSelect("engine", info.engines, "auto");
      $("unroll").max = info.unroll_max;
      info.formats.forEach(function (f) {
        var o = $("format").querySelector('option[value="' + f.name + '"]');
        if (o && !f.supported) o.textContent = f.name + " (not supported yet)";
        else if (o && f.name === "cu" && info.nvcc === false) o.textContent = "cu (no nvcc on the server)";
      });
      fillExamples(got[1]);
      if (!fromHash()) return loadExample(tutorial().length ? tutorial()[0].path : got[1][0].path);
      status("test from the link");
    }).then(function () { document.body.dataset.ready = "1"; },
            function (err) { status("the server did not answer: " + err); });
})();
