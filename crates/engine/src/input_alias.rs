//! Old spellings of tool arguments. Every tool input uses one vocabulary
//! (`job_id`, `task_id`, `offset`/`limit`, `limit`, `*_ms`, ...), but recorded
//! transcripts hold calls made under earlier words, and they must still
//! replay. A tool lists its earlier words in [`crate::Tool::INPUT_ALIASES`];
//! dispatch rewrites a call's arguments with them before the schema check
//! (schemas refuse unknown properties, so an old word must be gone by then).
//! The aliases never reach a schema: a model only ever reads the new words.

use serde_json::{Map, Number, Value};

/// How an old argument's value becomes the new one's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// The same value under a new name.
    Same,
    /// Seconds → milliseconds (× 1000).
    SecondsToMs,
    /// A 1-based inclusive last line → a count from the first line
    /// (`limit = end - start + 1`). `start` names the old first-line argument;
    /// without it the call's `offset` is the first line.
    InclusiveEnd { start: &'static str },
}

/// One old argument name of a tool, and what it became.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputAlias {
    pub old: &'static str,
    pub new: &'static str,
    pub unit: Unit,
    /// Applies only when the call's argument `.0` is the string `.1`: what
    /// an argument meant may depend on another (`handle_read`'s `op`).
    pub when: Option<(&'static str, &'static str)>,
    /// Not applied when the call gives this argument: the old word is then a
    /// current one with another meaning (`task_shell_wait`'s `task_id` named
    /// the shell job before `job_id`, and names the durable task now).
    pub unless: Option<&'static str>,
}

impl InputAlias {
    pub const fn rename(old: &'static str, new: &'static str) -> Self {
        InputAlias { old, new, unit: Unit::Same, when: None, unless: None }
    }

    pub const fn converted(old: &'static str, new: &'static str, unit: Unit) -> Self {
        InputAlias { old, new, unit, when: None, unless: None }
    }

    pub const fn when(self, field: &'static str, value: &'static str) -> Self {
        InputAlias { when: Some((field, value)), ..self }
    }

    pub const fn unless_given(self, field: &'static str) -> Self {
        InputAlias { unless: Some(field), ..self }
    }
}

/// Rewrites the old words in `args` into the new ones, in table order. Each
/// conversion reads the call as the model sent it, so the order of a table
/// does not change the outcome. A call giving an old word and its new one
/// with different values is refused, naming both: which one the model meant
/// cannot be known. The same value twice is fine.
pub fn apply(tool: &str, aliases: &[InputAlias], args: &mut Map<String, Value>) -> Result<(), String> {
    // A call in today's words (nearly every one) is left as it is, without
    // the copy below: every alias acts only on a call that holds its old word.
    if !aliases.iter().any(|alias| args.contains_key(alias.old)) {
        return Ok(());
    }
    let original = args.clone();
    // Old words read so far, and new words written: in task_shell_wait the
    // old `task_id` becomes `job_id` and then the old `task` becomes
    // `task_id`, so a word can be both.
    let mut consumed: Vec<&str> = Vec::new();
    // (new word, the old word that wrote it)
    let mut written: Vec<(&str, &str)> = Vec::new();
    for alias in aliases {
        if alias.unless.is_some_and(|field| original.contains_key(field)) {
            continue;
        }
        if let Some((field, value)) = alias.when
            && original.get(field).and_then(Value::as_str) != Some(value)
        {
            continue;
        }
        let Some(old_value) = original.get(alias.old) else { continue };
        let value = convert(tool, alias, old_value, &original)?;
        // The new word as the model sent it: one an earlier alias read as an
        // old word was not sent as the new one.
        if let Some(given) = original.get(alias.new).filter(|_| !consumed.contains(&alias.new))
            && !same_number_or_value(given, &value)
        {
            return Err(disagreement(tool, alias, old_value, &value, given));
        }
        // Two old words for one new one (`n` and `end` both became `limit`).
        if let Some((_, first)) = written.iter().find(|(new, _)| *new == alias.new)
            && let Some(earlier) = args.get(alias.new)
            && !same_number_or_value(earlier, &value)
        {
            return Err(format!(
                "invalid arguments for {tool}: `{first}` and `{old}` are both former names of `{new}`, and this \
                 call gives them different values ({earlier} and {value}); give only `{new}`",
                old = alias.old,
                new = alias.new,
            ));
        }
        consumed.push(alias.old);
        if !written.iter().any(|(new, _)| *new == alias.old) {
            args.remove(alias.old);
        }
        args.insert(alias.new.to_string(), value);
        written.push((alias.new, alias.old));
    }
    Ok(())
}

fn convert(tool: &str, alias: &InputAlias, value: &Value, call: &Map<String, Value>) -> Result<Value, String> {
    // A value of the wrong type is passed on as is: the schema check then
    // names the new argument and the type it wants.
    let Some(number) = value.as_f64() else { return Ok(value.clone()) };
    match alias.unit {
        Unit::Same => Ok(value.clone()),
        Unit::SecondsToMs => Ok(number_value(number * 1000.0)),
        Unit::InclusiveEnd { start } => {
            let first = match call.get(start).and_then(Value::as_f64) {
                Some(first) => first,
                None => call.get("offset").and_then(Value::as_f64).ok_or_else(|| needs_start(tool, alias, start))?,
            };
            if number < first {
                return Err(format!(
                    "invalid arguments for {tool}: `{}` {number} is before `{start}` {first}",
                    alias.old
                ));
            }
            Ok(number_value(number - first + 1.0))
        }
    }
}

fn needs_start(tool: &str, alias: &InputAlias, start: &str) -> String {
    format!(
        "invalid arguments for {tool}: `{}` (a last line) needs `{start}`; give `offset` (first line, 1-based) and `limit` (lines)",
        alias.old
    )
}

/// Whole numbers stay integers, so the schema's `integer` types accept them.
fn number_value(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        // In range and whole (checked above): the cast is exact.
        #[allow(clippy::cast_possible_truncation)]
        let whole = n as i64;
        Value::Number(Number::from(whole))
    } else {
        Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

/// `5` and `5.0` are the same argument.
fn same_number_or_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn disagreement(tool: &str, alias: &InputAlias, old: &Value, converted: &Value, given: &Value) -> String {
    let reads_as =
        if alias.unit == Unit::Same { String::new() } else { format!(" (read as `{}`: {converted})", alias.new) };
    format!(
        "invalid arguments for {tool}: `{old_name}` is the former name of `{new}`, and this call gives both with \
         different values: `{old_name}`: {old}{reads_as}, `{new}`: {given}; give only `{new}`",
        old_name = alias.old,
        new = alias.new,
    )
}

#[cfg(test)]
#[path = "input_alias_tests.rs"]
mod tests;
