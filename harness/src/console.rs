//! Lines that fit the terminal: its width (`COLUMNS`, else the terminal's own, else 80) and text
//! wrapped to it, so that a run's lines, warnings and closing tables stay readable in a narrow
//! window or a CI log.

/// The narrowest width text is wrapped to, whatever `COLUMNS` says.
const NARROWEST: usize = 40;

/// The terminal's width in columns: `COLUMNS` when set, else the terminal on standard error or
/// output, else 80.
pub fn width() -> usize {
    let from_env =
        std::env::var("COLUMNS").ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|n| *n > 0);
    from_env.or_else(terminal_width).unwrap_or(80).max(NARROWEST)
}

fn terminal_width() -> Option<usize> {
    [libc::STDERR_FILENO, libc::STDOUT_FILENO].into_iter().find_map(|fd| {
        // SAFETY: TIOCGWINSZ writes one winsize into the struct it is given, and nothing else.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) } == 0;
        (ok && ws.ws_col > 0).then_some(ws.ws_col as usize)
    })
}

/// The continuation of a wrapped line is indented this much.
const INDENT: &str = "    ";

/// Each line of `text` wrapped at spaces to `width` columns, its continuations indented; a word
/// wider than a line (a long path) is broken where the line ends.
pub fn wrap(text: &str, width: usize) -> String {
    let width = width.max(NARROWEST);
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        // A line's own indentation stays.
        let body = line.trim_start_matches(' ');
        let mut used = line.len() - body.len();
        let mut current = " ".repeat(used);
        for word in body.split(' ') {
            let mut word: Vec<char> = word.chars().collect();
            loop {
                let gap = usize::from(!current.trim().is_empty());
                if used + gap + word.len() <= width {
                    if gap == 1 {
                        current.push(' ');
                    }
                    current.extend(word.iter());
                    used += gap + word.len();
                    break;
                }
                if current.trim().is_empty() {
                    // Alone on its line and still too wide: break it.
                    let room = width - used;
                    current.extend(word.drain(..room));
                }
                out.push(std::mem::take(&mut current));
                current.push_str(INDENT);
                used = INDENT.len();
            }
        }
        out.push(current);
    }
    out.join("\n")
}

/// A line for standard error, wrapped to the terminal.
pub fn say(text: &str) {
    // The unit tests' runs print through the macros, which the test harness captures.
    if cfg!(test) {
        eprintln!("{}", wrap(text, width()));
        return;
    }
    write_line(&mut std::io::stderr().lock(), &wrap(text, width()));
}

/// Text and a newline for standard output. A reader that went away (`ipcbench list | head`) or a
/// closed output loses the text, and nothing else: no panic, and a run goes on.
pub fn out(text: &str) {
    if cfg!(test) {
        println!("{text}");
        return;
    }
    write_line(&mut std::io::stdout().lock(), text);
}

fn write_line(to: &mut impl std::io::Write, text: &str) {
    let _ = writeln!(to, "{text}").and_then(|()| to.flush());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_lines_fit_and_keep_every_word() {
        let text = "ipcbench: 3 cases x 2 libraries, 3 runs of 1s after 300ms of warm-up (sequential order), on \
                    2 cores; results in /tmp/a-rather-long-folder-name-that-goes-on-and-on-and-on-and-on/run.json";
        let wrapped = wrap(text, 40);
        assert!(wrapped.lines().all(|l| l.chars().count() <= 40), "{wrapped}");
        assert!(wrapped.lines().skip(1).all(|l| l.starts_with(INDENT)), "{wrapped}");
        let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().concat();
        assert_eq!(words(&wrapped), words(text));
        assert_eq!(wrap("short", 80), "short");
        assert_eq!(wrap("two\nlines", 80), "two\nlines");
        assert_eq!(wrap("  indented stays", 80), "  indented stays");
    }
}
