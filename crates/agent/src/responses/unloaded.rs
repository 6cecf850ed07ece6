//! What goes beside a loading search's `tool_search_output` about the
//! matches it did not load (`[providers.NAME] unloaded_matches`).
//!
//! The output carries only the loaded definitions, so a model that sees
//! nothing else cannot know what else matched; but every byte beside it is
//! new on the one request whose prefix the search was meant to keep. Whole
//! descriptions cost ~1.1 KB a search on a 15-tool head, 4.6 points of the
//! loading requests' cacheable share (`exec_bench`); the search's own JSON
//! repeats each name three times. So the note is plain text, each name
//! once, and by default without descriptions: the model knows the names
//! (as on the Anthropic wire, where the result's text is the search's
//! `nextInstruction`), and `tool_search`'s description says `select:NAME`
//! loads one. `describe` adds each
//! match's first clause, bounded, for models that pick better with it.
//!
//! Every byte follows from the search's result, so a repeated note is
//! identical.

/// How much a loading search says about the matches it did not load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnloadedMatches {
    /// Each one's name and the first clause of its description (at most
    /// [`LINE_CHARS`] characters).
    Describe,
    /// Their names, best first, as many as fit in
    /// [`LOAD_NOTE_MAX`](crate::deferred::LOAD_NOTE_MAX) bytes with the rest
    /// of the note ([`crate::deferred::load_note`], as on every wire).
    #[default]
    Name,
    /// Nothing (a `select:` name that was not found and discovery notes
    /// still go: the output cannot say them).
    Omit,
}

impl UnloadedMatches {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "describe" => Some(UnloadedMatches::Describe),
            "name" => Some(UnloadedMatches::Name),
            "omit" => Some(UnloadedMatches::Omit),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            UnloadedMatches::Describe => "describe",
            UnloadedMatches::Name => "name",
            UnloadedMatches::Omit => "omit",
        }
    }
}

/// The longest description line `describe` sends, in characters.
pub const LINE_CHARS: usize = 80;

/// The note beside a search's `tool_search_output` that loaded `loaded`:
/// `None` when it has nothing to say (every match loaded, `omit` with no
/// missing names or notes) or `content` is not a search's JSON.
pub fn note(content: &str, loaded: &[String], mode: UnloadedMatches) -> Option<String> {
    if mode == UnloadedMatches::Name {
        return crate::deferred::load_note(content, loaded, crate::deferred::LOAD_NOTE_MAX).filter(|t| !t.is_empty());
    }
    let search = crate::deferred::search_json(content)?;
    let rest = crate::deferred::not_loaded(&search, loaded)?;
    let mut parts: Vec<String> = Vec::new();
    if mode == UnloadedMatches::Describe && !rest.is_empty() {
        // How to load one (`select:NAME`) is in `tool_search`'s own description.
        let lines: Vec<String> = rest.iter().map(|(n, d)| format!("- {n}: {}", one_line(d))).collect();
        parts.push(format!("tool_search also matched, not loaded:\n{}", lines.join("\n")));
    }
    parts.extend(crate::deferred::search_notes(&search));
    let text = parts.into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join("\n");
    (!text.is_empty()).then_some(text)
}

/// A description's first clause: its first sentence, cut before a colon or
/// semicolon that opens a list (when what comes before says enough), then
/// bounded to [`LINE_CHARS`] at a word boundary.
pub fn one_line(description: &str) -> String {
    let text = description.lines().next().unwrap_or_default().trim();
    let sentence_end = text
        .match_indices(". ")
        .find(|(i, _)| text[i + 2..].chars().next().is_some_and(char::is_uppercase))
        .map_or(text.len(), |(i, _)| i);
    let sentence = &text[..sentence_end];
    // A clause long enough to say what the tool is for (shorter ones, "Git:",
    // are labels).
    const CLAUSE_MIN: usize = 24;
    let cut = [": ", "; "].iter().filter_map(|sep| sentence.find(sep)).filter(|&i| i >= CLAUSE_MIN).min();
    let clause = cut.map_or(sentence, |i| &sentence[..i]).trim_end_matches('.');
    if clause.chars().count() <= LINE_CHARS {
        return clause.to_string();
    }
    let limit = clause.char_indices().nth(LINE_CHARS - 1).map_or(clause.len(), |(i, _)| i);
    let at_word = clause[..limit].rfind(' ').filter(|&i| i > 0).unwrap_or(limit);
    format!("{}…", clause[..at_word].trim_end_matches([',', ';', ':', ' ']))
}

#[cfg(test)]
#[path = "unloaded_tests.rs"]
mod tests;
