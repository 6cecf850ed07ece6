//! A bounded view of a stream of output: its first and last bytes, and counts.
//!
//! A build can print megabytes; the model needs the start (what ran) and the end
//! (what failed), and the full text stays in the job's log file. Memory per window
//! is bounded whatever the command prints.

use std::collections::VecDeque;

/// Raw bytes kept at each end.
const KEEP: usize = 64 * 1024;
/// What is shown at each end when the output is too long to show whole. Both ends
/// together stay under the engine's spill threshold, so a shell result is never
/// spilled a second time.
pub const SHOW_LINES: usize = 200;
pub const SHOW_BYTES: usize = 14 * 1024;

#[derive(Debug, Default)]
pub struct Window {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    lines: u64,
}

impl Window {
    pub fn push(&mut self, data: &[u8]) {
        self.total += data.len() as u64;
        self.lines += data.iter().filter(|b| **b == b'\n').count() as u64;
        let room = KEEP.saturating_sub(self.head.len()).min(data.len());
        let (front, rest) = data.split_at(room);
        self.head.extend_from_slice(front);
        if rest.len() >= KEEP {
            self.tail.clear();
            self.tail.extend(&rest[rest.len() - KEEP..]);
        } else {
            self.tail.extend(rest);
            let excess = self.tail.len().saturating_sub(KEEP);
            self.tail.drain(..excess);
        }
    }

    pub fn bytes(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The text to show: all of it when it fits, else its first and last lines
    /// around a marker that points at `log`. `tty` output has its CRLFs folded.
    /// Returns the text and whether anything was left out.
    pub fn render(&self, tty: bool, log: &str) -> (String, bool) {
        let clean = |bytes: &[u8]| {
            let text = String::from_utf8_lossy(bytes).into_owned();
            if tty { text.replace("\r\n", "\n") } else { text }
        };
        let head = clean(&self.head);
        let tail = if self.tail.is_empty() {
            None
        } else {
            let (a, b) = self.tail.as_slices();
            let text = clean(&[a, b].concat());
            // The kept tail starts wherever the ring cut it; drop that partial line.
            Some(match text.split_once('\n') {
                Some((_, rest)) if !rest.is_empty() => rest.to_string(),
                _ => text,
            })
        };
        if tail.is_none() && head.len() <= 2 * SHOW_BYTES && head.matches('\n').count() <= 2 * SHOW_LINES {
            return (head, false);
        }
        let first = take_head(&head, SHOW_LINES, SHOW_BYTES);
        let last = take_tail(tail.as_deref().unwrap_or(&head), SHOW_LINES, SHOW_BYTES);
        let shown_lines = (first.matches('\n').count() + last.matches('\n').count()) as u64;
        let omitted_lines = self.lines.saturating_sub(shown_lines);
        let omitted_bytes = self.total.saturating_sub((first.len() + last.len()) as u64);
        let mut out = String::with_capacity(first.len() + last.len() + 160);
        out.push_str(first);
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!(
            "… {omitted_lines} lines ({omitted_bytes} bytes) omitted; the full output is in {log} …\n"
        ));
        out.push_str(last);
        (out, true)
    }
}

/// The first `lines` lines of `text`, at most `bytes` long (cut at a char boundary).
fn take_head(text: &str, lines: usize, bytes: usize) -> &str {
    let mut end = 0;
    for (count, line) in text.split_inclusive('\n').enumerate() {
        if count == lines || end + line.len() > bytes {
            break;
        }
        end += line.len();
    }
    if end == 0 {
        end = floor_char_boundary(text, bytes.min(text.len()));
    }
    &text[..end]
}

/// The last `lines` lines of `text`, at most `bytes` long (cut at a char boundary).
fn take_tail(text: &str, lines: usize, bytes: usize) -> &str {
    let mut start = text.len();
    for (count, line) in text.split_inclusive('\n').rev().enumerate() {
        if count == lines || text.len() - start + line.len() > bytes {
            break;
        }
        start -= line.len();
    }
    if start == text.len() {
        let mut cut = text.len().saturating_sub(bytes);
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        start = cut;
    }
    &text[start..]
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}
