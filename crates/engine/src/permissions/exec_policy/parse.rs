//! Splits a shell command line into the simple commands bash would run.
//!
//! The policy must judge every command a line can start, not the line as a string:
//! `echo 'rm -rf /'` runs nothing dangerous, while `echo "$(rm -rf /)"` does. This
//! scanner knows just enough shell grammar for that: quoting, the list and pipe
//! operators, subshells, command and process substitution, `${...}`, arithmetic,
//! redirections and here-documents. It cuts the line into simple-command texts and
//! leaves word splitting and unquoting of each text to `shlex`.
//!
//! Where the grammar is ambiguous it errs towards finding more commands (a
//! here-document body is scanned for substitutions, a stray `)` ends a command),
//! because a command found by mistake only costs a question, while a command missed
//! could slip past a deny rule.

/// One simple command: its words (unquoted) and whether it redirects output into a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    pub words: Vec<String>,
    pub writes_file: bool,
}

/// Nesting deeper than this is refused: no real command needs it, and it bounds recursion.
const MAX_DEPTH: usize = 16;
/// Characters that end an unquoted word.
const WORD_END: &str = ";&|<>()";

/// Every simple command in `line`, substitutions included, in source order of discovery.
pub fn split(line: &str) -> Result<Vec<SimpleCommand>, String> {
    let mut scanner = Scanner::new(line, 0);
    scanner.list(false)?;
    scanner
        .out
        .into_iter()
        .map(|seg| {
            let words =
                shlex::split(&seg.text).ok_or_else(|| format!("cannot split `{}` into words", seg.text.trim()))?;
            Ok(SimpleCommand { words, writes_file: seg.writes })
        })
        .collect()
}

#[derive(Debug, Default)]
struct Segment {
    /// Source text of the command with redirections cut out and substitutions
    /// replaced by placeholders, ready for `shlex`.
    text: String,
    writes: bool,
}

impl Segment {
    fn at_word_start(&self) -> bool {
        self.text.chars().last().is_none_or(char::is_whitespace)
    }
}

struct Heredoc {
    delimiter: String,
    strip_tabs: bool,
    /// Unquoted delimiters mean the body undergoes expansion, so `$(...)` in it runs.
    expands: bool,
}

struct Scanner {
    s: Vec<char>,
    i: usize,
    depth: usize,
    out: Vec<Segment>,
    heredocs: Vec<Heredoc>,
}

impl Scanner {
    fn new(text: &str, depth: usize) -> Self {
        Scanner { s: text.chars().collect(), i: 0, depth, out: Vec::new(), heredocs: Vec::new() }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.s.get(self.i + ahead).copied()
    }

    fn starts_with(&self, pat: &str) -> bool {
        pat.chars().enumerate().all(|(k, c)| self.peek(k) == Some(c))
    }

    fn flush(&mut self, seg: &mut Segment) {
        let seg = std::mem::take(seg);
        if !seg.text.trim().is_empty() || seg.writes {
            self.out.push(seg);
        }
    }

    /// Runs `f` one level deeper, refusing absurd nesting.
    fn nested(&mut self, f: impl FnOnce(&mut Self) -> Result<(), String>) -> Result<(), String> {
        if self.depth >= MAX_DEPTH {
            return Err("the command nests too deeply to check".into());
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    /// Scans text that came out of quoting of its own (backquotes, here-document
    /// bodies) with a fresh scanner, keeping the commands it finds.
    fn sub_scan(&mut self, text: &str, expansions_only: bool) -> Result<(), String> {
        if self.depth >= MAX_DEPTH {
            return Err("the command nests too deeply to check".into());
        }
        let mut sub = Scanner::new(text, self.depth + 1);
        if expansions_only {
            sub.expansions_only()?;
        } else {
            sub.list(false)?;
        }
        self.out.append(&mut sub.out);
        Ok(())
    }

    /// A command list, up to the end of input or (when `closed`) a matching `)`.
    fn list(&mut self, closed: bool) -> Result<(), String> {
        let mut seg = Segment::default();
        loop {
            let Some(c) = self.peek(0) else {
                self.flush(&mut seg);
                return if closed { Err("a `(` is never closed".into()) } else { Ok(()) };
            };
            match c {
                ')' => {
                    self.i += 1;
                    self.flush(&mut seg);
                    if closed {
                        return Ok(());
                    }
                    // A stray `)` closes a `case` pattern; what follows is a new command.
                }
                '&' if self.peek(1) == Some('>') => self.redirect(&mut seg)?,
                ';' | '&' | '|' | '\n' => {
                    self.i += 1;
                    self.flush(&mut seg);
                    if c == '\n' {
                        self.heredoc_bodies()?;
                    }
                }
                '<' | '>' => self.redirect(&mut seg)?,
                '(' if seg.text.ends_with('=') => {
                    // Array assignment `a=(x y)`: words, not a subshell.
                    seg.text.push('(');
                    self.i += 1;
                    loop {
                        match self.peek(0) {
                            None => return Err("a `(` is never closed".into()),
                            Some(')') => {
                                seg.text.push(')');
                                self.i += 1;
                                break;
                            }
                            Some(_) => self.word_unit(&mut seg.text)?,
                        }
                    }
                }
                '(' => {
                    // A subshell, `((arithmetic))`, or the `()` of a function definition.
                    self.flush(&mut seg);
                    if self.peek(1) == Some('(') {
                        self.i += 2;
                        self.arithmetic()?;
                    } else {
                        self.i += 1;
                        self.nested(|s| s.list(true))?;
                    }
                }
                '#' if seg.at_word_start() => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                d if d.is_ascii_digit() && seg.at_word_start() && self.fd_redirect_ahead() => {
                    self.redirect(&mut seg)?
                }
                _ => self.word_unit(&mut seg.text)?,
            }
        }
    }

    /// Digits followed by `<` or `>`: a redirection of a numbered descriptor.
    fn fd_redirect_ahead(&self) -> bool {
        let mut k = 0;
        while self.peek(k).is_some_and(|c| c.is_ascii_digit()) {
            k += 1;
        }
        matches!(self.peek(k), Some('<' | '>'))
    }

    /// One unit of a word: an escaped char, a quoted string, an expansion or a char.
    fn word_unit(&mut self, buf: &mut String) -> Result<(), String> {
        let Some(c) = self.peek(0) else { return Ok(()) };
        match c {
            '\\' => {
                match self.peek(1) {
                    Some('\n') => {} // line continuation: joins the lines
                    Some(next) => {
                        buf.push('\\');
                        buf.push(next);
                    }
                    None => buf.push('\\'),
                }
                self.i += 2;
            }
            '\'' => {
                let end =
                    (self.i + 1..self.s.len()).find(|&k| self.s[k] == '\'').ok_or("a single quote is never closed")?;
                buf.extend(&self.s[self.i..=end]);
                self.i = end + 1;
            }
            '"' => {
                buf.push('"');
                self.i += 1;
                loop {
                    match self.peek(0) {
                        None => return Err("a double quote is never closed".into()),
                        Some('"') => {
                            buf.push('"');
                            self.i += 1;
                            return Ok(());
                        }
                        Some('\\') => {
                            buf.push('\\');
                            if let Some(next) = self.peek(1) {
                                buf.push(next);
                            }
                            self.i += 2;
                        }
                        Some('$' | '`') => self.expansion(buf)?,
                        Some(other) => {
                            buf.push(other);
                            self.i += 1;
                        }
                    }
                }
            }
            '$' | '`' => self.expansion(buf)?,
            _ => {
                buf.push(c);
                self.i += 1;
            }
        }
        Ok(())
    }

    /// `$(...)`, `` `...` ``, `$((...))`, `${...}`, `$'...'` or a plain `$`. The commands
    /// inside are collected; the word gets a placeholder, which marks it as dynamic.
    fn expansion(&mut self, buf: &mut String) -> Result<(), String> {
        if self.peek(0) == Some('`') {
            let mut inner = String::new();
            let mut k = self.i + 1;
            loop {
                match self.s.get(k) {
                    None => return Err("a backquote is never closed".into()),
                    Some('`') => break,
                    Some('\\') => {
                        match self.s.get(k + 1) {
                            Some(&n @ ('`' | '\\' | '$')) => inner.push(n),
                            Some(&n) => {
                                inner.push('\\');
                                inner.push(n);
                            }
                            None => {}
                        }
                        k += 2;
                    }
                    Some(&c) => {
                        inner.push(c);
                        k += 1;
                    }
                }
            }
            self.i = k + 1;
            self.sub_scan(&inner, false)?;
            buf.push_str("$(…)");
            return Ok(());
        }
        match (self.peek(1), self.peek(2)) {
            (Some('('), Some('(')) => {
                self.i += 3;
                self.arithmetic()?;
                buf.push_str("$((…))");
            }
            (Some('('), _) => {
                self.i += 2;
                self.nested(|s| s.list(true))?;
                buf.push_str("$(…)");
            }
            (Some('{'), _) => {
                self.i += 2;
                self.braced()?;
                buf.push_str("${…}");
            }
            (Some('\''), _) => {
                // ANSI-C quoting: a literal string with backslash escapes.
                let mut k = self.i + 2;
                loop {
                    match self.s.get(k) {
                        None => return Err("a `$'` string is never closed".into()),
                        Some('\\') => k += 2,
                        Some('\'') => break,
                        Some(_) => k += 1,
                    }
                }
                buf.extend(&self.s[self.i..=k]);
                self.i = k + 1;
            }
            _ => {
                buf.push('$');
                self.i += 1;
            }
        }
        Ok(())
    }

    /// The inside of `((...))`/`$((...))`: only the substitutions in it can run commands.
    fn arithmetic(&mut self) -> Result<(), String> {
        let mut depth = 0usize;
        let mut scratch = String::new();
        loop {
            match self.peek(0) {
                None => return Err("an arithmetic `((` is never closed".into()),
                Some('(') => {
                    depth += 1;
                    self.i += 1;
                }
                Some(')') if depth == 0 => {
                    self.i += if self.peek(1) == Some(')') { 2 } else { 1 };
                    return Ok(());
                }
                Some(')') => {
                    depth -= 1;
                    self.i += 1;
                }
                Some('$' | '`' | '"' | '\'' | '\\') => self.nested(|s| s.word_unit(&mut scratch))?,
                Some(_) => self.i += 1,
            }
        }
    }

    /// The inside of `${...}`, which may hold quotes and substitutions of its own.
    fn braced(&mut self) -> Result<(), String> {
        let mut depth = 0usize;
        let mut scratch = String::new();
        loop {
            match self.peek(0) {
                None => return Err("a `${` is never closed".into()),
                Some('}') if depth == 0 => {
                    self.i += 1;
                    return Ok(());
                }
                Some('}') => {
                    depth -= 1;
                    self.i += 1;
                }
                Some('{') => {
                    depth += 1;
                    self.i += 1;
                }
                Some('$' | '`' | '"' | '\'' | '\\') => self.nested(|s| s.word_unit(&mut scratch))?,
                Some(_) => self.i += 1,
            }
        }
    }

    /// A redirection (cut out of the command text) or a process substitution.
    fn redirect(&mut self, seg: &mut Segment) -> Result<(), String> {
        while self.peek(0).is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        const OPS: [&str; 14] = ["&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", "<(", ">>", ">|", ">&", ">(", "<", ">"];
        let op = OPS.iter().copied().find(|op| self.starts_with(op)).ok_or("a redirection has no operator")?;
        self.i += op.chars().count();
        if op == "<(" || op == ">(" {
            self.nested(|s| s.list(true))?;
            seg.text.push_str(" <(…) ");
            return Ok(());
        }
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.i += 1;
        }
        let mut target = String::new();
        while let Some(c) = self.peek(0) {
            if c.is_whitespace() || WORD_END.contains(c) {
                break;
            }
            self.word_unit(&mut target)?;
        }
        if target.is_empty() {
            return Err(format!("the redirection `{op}` has no target"));
        }
        match op {
            "<<" | "<<-" => {
                let quoted = target.contains(['\'', '"', '\\']);
                let delimiter = shlex::split(&target).and_then(|w| w.into_iter().next()).unwrap_or(target);
                self.heredocs.push(Heredoc { delimiter, strip_tabs: op == "<<-", expands: !quoted });
            }
            "<" | "<<<" | "<&" => {}
            ">&" if target.chars().all(|c| c.is_ascii_digit() || c == '-') => {}
            _ => {
                let harmless = ["/dev/null", "/dev/stdout", "/dev/stderr"];
                if !harmless.contains(&target.as_str()) {
                    seg.writes = true;
                }
            }
        }
        seg.text.push(' ');
        Ok(())
    }

    /// After a newline: the bodies of pending here-documents, scanned for
    /// substitutions when their delimiter was unquoted.
    fn heredoc_bodies(&mut self) -> Result<(), String> {
        for doc in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
            while self.i < self.s.len() {
                let start = self.i;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.i += 1;
                }
                let line: String = self.s[start..self.i].iter().collect();
                self.i = (self.i + 1).min(self.s.len());
                let bare = if doc.strip_tabs { line.trim_start_matches('\t') } else { line.as_str() };
                if bare == doc.delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if doc.expands {
                self.sub_scan(&body, true)?;
            }
        }
        Ok(())
    }

    /// Text in which quotes are literal but `$(...)` and backquotes still run.
    fn expansions_only(&mut self) -> Result<(), String> {
        let mut scratch = String::new();
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => self.i += 2,
                '$' | '`' => self.expansion(&mut scratch)?,
                _ => self.i += 1,
            }
        }
        Ok(())
    }
}
