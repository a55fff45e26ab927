//! The reference run's report page in a real browser: headless Chromium (Debian's `chromium`,
//! which `scripts/test.sh` installs when it is missing), driven through the DevTools protocol
//! over a pipe (`--remote-debugging-pipe`: messages of JSON, each ended by a NUL byte, read from
//! its fd 3 and written to its fd 4), so no WebSocket client is needed.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{ipcbench, out_dir, serial};

/// How long the browser may take to answer one command or load the page.
const PATIENCE: Duration = Duration::from_secs(90);

/// The width the page must fit without a horizontal scroll bar.
const WIDTH: u32 = 1400;

/// A headless Chromium, its pipe, and every event it sent.
struct Browser {
    child: Child,
    to: File,
    from: Receiver<Value>,
    next: u64,
    events: Vec<Value>,
    session: Option<String>,
}

/// A pipe whose ends are not inherited by accident (CLOEXEC): (read, write).
fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0, "pipe2");
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

impl Browser {
    fn start(profile: &Path) -> Browser {
        // Commands: we write, it reads on fd 3. Answers and events: it writes on fd 4, we read.
        let (commands_read, commands_write) = pipe();
        let (answers_read, answers_write) = pipe();
        let (fd3, fd4) = (commands_read.into_raw_fd(), answers_write.into_raw_fd());
        let program = ["chromium", "chromium-browser"]
            .into_iter()
            .find(|p| Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success()))
            .expect(
                "chromium is not installed (scripts/test.sh installs Debian's chromium when it is missing)",
            );
        let mut cmd = Command::new(program);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--hide-scrollbars",
            "--remote-debugging-pipe",
            &format!("--user-data-dir={}", profile.display()),
            "about:blank",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        // The child reads our commands on fd 3 and writes its answers on fd 4; the copies must
        // outlive exec (dup2 onto itself would keep CLOEXEC, hence the fcntl).
        unsafe {
            cmd.pre_exec(move || {
                for (from, to) in [(fd3, 3), (fd4, 4)] {
                    if libc::dup2(from, to) < 0 || libc::fcntl(to, libc::F_SETFD, 0) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let child = cmd.spawn().unwrap_or_else(|e| {
            panic!("starting chromium: {e} (scripts/test.sh installs Debian's chromium when it is missing)")
        });
        unsafe {
            libc::close(fd3);
            libc::close(fd4);
        }
        let (tx, from) = channel();
        let reader = File::from(answers_read);
        std::thread::spawn(move || {
            let mut r = BufReader::new(reader);
            let mut buf = Vec::new();
            while r.read_until(0, &mut buf).is_ok_and(|n| n > 0) {
                buf.pop_if(|b| *b == 0);
                if let Ok(v) = serde_json::from_slice::<Value>(&buf)
                    && tx.send(v).is_err()
                {
                    return;
                }
                buf.clear();
            }
        });
        Browser { child, to: File::from(commands_write), from, next: 0, events: Vec::new(), session: None }
    }

    /// Sends a command (to the attached page, once there is one) and waits for its answer; the
    /// events that arrive meanwhile are kept.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let mut msg = json!({"id": self.next, "method": method, "params": params});
        if let Some(s) = &self.session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).unwrap_or_else(|e| panic!("writing {method} to chromium: {e}"));
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self
                .from
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("chromium did not answer {method}: {e}"));
            if v["id"] == json!(self.next) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    /// Waits for an event of this method.
    fn wait_for(&mut self, method: &str) {
        if self.events.iter().any(|e| e["method"] == method) {
            return;
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self.from.recv_timeout(left).unwrap_or_else(|e| panic!("no {method} from chromium: {e}"));
            let done = v["method"] == method;
            self.events.push(v);
            if done {
                return;
            }
        }
    }

    /// The value of a JavaScript expression in the page.
    fn eval(&mut self, expression: &str) -> Value {
        let r = self.call("Runtime.evaluate", json!({"expression": expression, "returnByValue": true}));
        assert!(r.get("exceptionDetails").is_none(), "{expression}: {r}");
        r["result"]["value"].clone()
    }

    /// The errors the page reported: exceptions, console errors, and the browser's own log of
    /// errors (a resource that failed to load).
    fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| {
                e["method"] == "Runtime.exceptionThrown"
                    || (e["method"] == "Runtime.consoleAPICalled" && e["params"]["type"] == "error")
                    || (e["method"] == "Log.entryAdded" && e["params"]["entry"]["level"] == "error")
            })
            .map(|e| e["params"].to_string())
            .collect()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The reference report's `index.html`, as `ipcbench report` writes it from the committed
/// file, loads in Chromium at 1,400 px with no error, every chart drawn at its natural size
/// or less (never stretched, its proportions kept), every link to a section landing on one, no
/// horizontal scroll, and a figure's hover text holding its runs.
#[test]
fn the_reference_page_reads_in_a_real_browser() {
    let dir = out_dir("browser");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let file = root.join(format!("results/{}.json.gz", ipcbench::report::readme::REFERENCE));
    let out = dir.join("report");
    let made = ipcbench(&["report", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let page = out.join("index.html");
    // The browser runs alone, as a run's test does: it takes both cores while it lays out the
    // page, which a run's test beside it would meet as a host that cannot keep up.
    let _alone = serial();
    let mut b = Browser::start(&dir.join("profile"));
    let target = b.call("Target.createTarget", json!({"url": "about:blank"}));
    let attached = b.call("Target.attachToTarget", json!({"targetId": target["targetId"], "flatten": true}));
    b.session = Some(attached["sessionId"].as_str().expect("a session").to_string());
    for domain in ["Runtime.enable", "Log.enable", "Page.enable"] {
        b.call(domain, json!({}));
    }
    b.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": WIDTH, "height": 1000, "deviceScaleFactor": 1, "mobile": false}),
    );
    b.call("Page.navigate", json!({"url": format!("file://{}", page.display())}));
    b.wait_for("Page.loadEventFired");

    let errors = b.errors();
    assert!(errors.is_empty(), "the page reported errors: {errors:#?}");
    let (scroll, client) =
        (b.eval("document.documentElement.scrollWidth"), b.eval("document.documentElement.clientWidth"));
    let (scroll, client) = (scroll.as_f64().unwrap_or(f64::MAX), client.as_f64().unwrap_or(0.0));
    if scroll > client {
        let wide = b.eval(
            "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > \
             document.documentElement.clientWidth).slice(-5).map(e => e.tagName + '.' + e.className + ' in ' + \
             ((e.closest('section') || {}).id || '?'))",
        );
        panic!("a horizontal scroll at {WIDTH} px: {scroll} wide in {client}; past the edge: {wide}");
    }

    // Every chart the report wrote is on the page, drawn no wider than it was made and with its
    // proportions.
    let charts = b.eval(
        "[...document.querySelectorAll('.chart svg')].map(s => { const r = s.getBoundingClientRect(); \
         return [s.parentElement.id, r.width, r.height, s.width.baseVal.value, s.height.baseVal.value]; })",
    );
    let charts = charts.as_array().expect("a list of charts");
    let written = std::fs::read_dir(out.join("charts"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "svg"))
        .count();
    assert_eq!(charts.len(), written, "charts on the page against charts written");
    for c in charts {
        let f = |i: usize| c[i].as_f64().unwrap_or(0.0);
        let (w, h, nw, nh) = (f(1), f(2), f(3), f(4));
        assert!(w > 0.0 && h > 0.0, "{} not drawn: {c}", c[0]);
        assert!(w <= nw + 0.5, "{} stretched past its natural width: {c}", c[0]);
        assert!(((w / h) - (nw / nh)).abs() < 0.02 * (nw / nh), "{} lost its proportions: {c}", c[0]);
    }

    // Every link within the page lands on an element.
    let dangling = b.eval(
        "[...document.querySelectorAll('a[href^=\"#\"]')].map(a => a.getAttribute('href'))\
         .filter(h => !document.getElementById(decodeURIComponent(h.slice(1))))",
    );
    assert_eq!(dangling, json!([]), "links to no section");
    let links = b.eval("document.querySelectorAll('a[href^=\"#\"]').length").as_u64().unwrap_or(0);
    assert!(links > 10, "{links} links within the page");

    // The pointer over the first figure of a family table shows its hover text, with its runs.
    let at = b.eval(
        "(() => { const td = document.querySelector('table.family td[tabindex]'); td.scrollIntoView({block: 'center'}); \
         const r = td.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()",
    );
    let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
    b.call("Input.dispatchMouseEvent", json!({"type": "mouseMoved", "x": x, "y": y}));
    let tip = b.eval(
        "(() => { const t = document.querySelector('table.family td[tabindex] .tip'); \
         return [getComputedStyle(t).display, t.innerText]; })()",
    );
    assert_eq!(tip[0], "block", "the hover text is not shown: {tip}");
    let text = tip[1].as_str().unwrap_or("");
    let runs = text.split("runs:\n").nth(1).and_then(|r| r.lines().next()).unwrap_or("");
    assert!(!runs.trim().is_empty(), "the hover text holds no runs: {text}");
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
}
