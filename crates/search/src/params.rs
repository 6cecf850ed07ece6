//! Ranking parameters: BM25F field weights and the weights of the extra
//! ranking signals. Defaults are the tuned values.

/// Indexed fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Words of the tool's own name.
    Name = 0,
    /// Pieces of compound name words (`keyvault` -> `key`, `vault`).
    NamePart = 1,
    Alias = 2,
    Domain = 3,
    Server = 4,
    Description = 5,
    Snippet = 6,
    ParamName = 7,
    ParamDesc = 8,
    /// First sentence of the description (also part of Description).
    Summary = 9,
    /// Search-only example requests (the everyday ways people ask for a
    /// tool), from the manifest; never sent to a model.
    Phrase = 10,
    /// Synthetic example requests (the manifest's `examples`: about ten
    /// plausible requests per tool, written from its documentation alone);
    /// search-only like `Phrase`, weighted on their own. Not indexed at all
    /// when their weight is 0.
    Example = 11,
}

pub const NFIELDS: usize = 12;

/// Field names as accepted by [`RankParams::set`].
pub const FIELD_NAMES: [&str; NFIELDS] = [
    "name", "namepart", "alias", "domain", "server", "desc", "snippet", "pname", "pdesc", "summary", "phrase",
    "example",
];

/// Tunable ranking parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct RankParams {
    /// BM25F weight per field.
    pub field_weight: [f32; NFIELDS],
    /// BM25F length normalisation per field.
    pub field_b: [f32; NFIELDS],
    /// BM25 saturation.
    pub k1: f32,
    /// Exponent on IDF (above 1 favours rare, specific words).
    pub idf_pow: f32,

    /// Stem words (Snowball English).
    pub stem: bool,
    /// Index the literal values in example requests (file names, paths,
    /// URLs, quoted text, identifiers) with their other words; off, only the
    /// words around a value count: a request's own values would match an
    /// example's by accident.
    pub example_values: bool,
    /// Index only the words of example requests found in at least this many
    /// of a tool's examples (1 = every word).
    pub example_min: f32,
    /// Split compound name words into known words.
    pub decompound: bool,
    /// Also index adjacent word pairs under their joined spelling when that
    /// spelling occurs in the catalog (`node pool` ~ `nodePool`).
    pub join_pairs: bool,
    /// Cap the IDF of a synonym / abbreviation / prefix expansion at the IDF
    /// of the query word it came from.
    pub expansion_idf_cap: bool,
    /// Count document frequency over name / alias / description / snippet
    /// only (parameter text is often boilerplate shared by every tool).
    pub primary_idf: bool,
    /// Weight of synonym expansions.
    pub w_synonym: f32,
    /// Weight of abbreviation expansions (`vm` -> `virtual machine`).
    pub w_abbrev: f32,
    /// Weight of compound joins / splits of query words.
    pub w_compound: f32,
    /// Weight of prefix matches (`postgres` ~ `postgresql`).
    pub w_prefix: f32,
    /// Weight of the shared-prefix fallback for words the catalog lacks.
    pub w_fuzzy: f32,
    /// Weight of words inside `<placeholders>`.
    pub w_placeholder: f32,
    /// Weight of words in a literal value: quoted text, a path, a file name
    /// or a URL in the request (the tool's argument, not its description).
    pub w_literal: f32,
    /// Weight of the kind of value a literal is: a URL in the request adds
    /// the word `url` (the tool that takes one is the likely target, whatever
    /// the URL's own words say).
    pub w_value_kind: f32,
    /// Weight of the word `file` added when a request names a file
    /// (`Cargo.toml`, `src/lib.rs`, `Makefile`) without saying "file".
    pub w_file_kind: f32,
    /// Weight of the word `command` added when a request carries a command
    /// line (`make`, `cargo build`, `uname -a`) without saying "command".
    pub w_command_kind: f32,
    /// Weight of the word `read` added when a request names a file and asks
    /// to see it (`cat Cargo.toml`, `what's inside package.json`).
    pub w_file_read: f32,
    /// A tool with the word `file` accounts for a named file's words in the
    /// match share (`SearchIndex::match_share`).
    pub file_share: bool,
    /// Weight of the word `wait` added when a request asks whether something
    /// has finished ("is the npm install done"); 0 = the rule is off.
    pub w_completion: f32,
    /// Weight of the word `name` added when a request looks a file up by its
    /// name ("the file called routes", "where is package.json"); 0 = off.
    pub w_file_name: f32,
    /// Weight of the word `edit` added when a request changes something
    /// inside a named file ("set timeout = 30 in config.toml", "remove the
    /// print on line 12 of utils.py"), and of `write` when it puts content
    /// into one ("dump this json into fixtures/users.json"); 0 = off.
    pub w_file_edit: f32,
    /// Weight of the word `read` added for "look at" / "take a look at"
    /// anywhere in a request (to look at is to view, not to look up); 0 = off.
    pub w_look_at: f32,
    /// Weight of camelCase/digit pieces whose joined form is a known word.
    pub w_part: f32,
    /// Multiplicative bonus for the share of the name covered by the query.
    pub coverage: f32,
    /// 0: name coverage counts every name word alike; 1: weighted by name IDF.
    pub coverage_idf: f32,
    /// Weight of words in the scope part of a request ("in resource group X").
    pub w_scope: f32,
    /// Weight of a request's payload: the words after a label ending in a
    /// colon ("note: ...", "make a checklist: ...").
    pub w_payload: f32,
    /// Weight of the two words of an opening phrasal verb ("shut down",
    /// "set up"), whose meaning (stop, create) counts in their place.
    pub w_phrasal: f32,
    /// Weight of words after `using` / `via` (the means of the request).
    pub w_instrument: f32,
    /// Weight of a generic read verb opening the request (`show me ...`).
    pub w_opener: f32,
    /// Weight of the list / get terms implied by the request's shape.
    pub w_intent: f32,
    /// Factor for tools whose name verb disagrees with the request's verb.
    pub action_penalty: f32,
    /// Further factor when a sibling of the tool (same server, same name
    /// words besides the verb) has a name verb that agrees with the request's.
    pub sibling_penalty: f32,
    /// Additive bonus for name-IDF mass of matched name terms.
    pub name_bonus: f32,
    /// Bonus per adjacent query word pair found adjacent in name/description.
    pub bigram: f32,
    /// Largest position distance of a word pair counted as adjacent in a
    /// doc (2 lets one stopword sit between: "text to speech").
    pub bigram_gap: f32,
    /// Parameters shared by at least this share of a server's tools are
    /// boilerplate and not indexed (0 = index all).
    pub boiler_share: f32,
    /// A score is multiplied by `match_share ^ share_pow`: the share of the
    /// request's content words (by weight and IDF) the tool contains. It
    /// demotes a tool that scores on one rare word while the tool that
    /// accounts for the whole request scores a little lower (0 = off).
    pub share_pow: f32,
    /// Weight of the word `pattern` added when a request looks for where a
    /// code identifier occurs ("where do we use tenant_id"); 0 = off.
    pub w_pattern: f32,
    /// Factor on the `url` kind's weight when every URL in a request is a
    /// GitHub issue or pull request's (it names the issue more than a page).
    pub w_reference_url: f32,
    /// Weight of the words on lines of program output pasted into a request
    /// (a traceback, a compiler error) beside the line that asks; 1 = off.
    pub w_pasted: f32,
    /// Factor on a tool that takes one thing ("Append one item ...") when
    /// the request lists several; 1 = off.
    pub one_penalty: f32,
    /// Factor on a tool named for listing (`task_list`) when the request
    /// names one instance by its number ("status of task 42"); 1 = off.
    pub list_penalty: f32,
    /// Weight of the words that say what a requested tool should do ("is
    /// there a tool to resize images"); 1 = off.
    pub w_tool_purpose: f32,
    /// Weight of the word `call` added when a request names a tool by its
    /// identifier ("use the get_event tool"); 0 = off.
    pub w_tool_named: f32,
}

impl Default for RankParams {
    fn default() -> Self {
        RankParams {
            field_weight: [1.5, 1.5, 2.5, 1.0, 1.0, 1.0, 0.8, 0.0, 0.2, 0.5, 2.4, 0.2],
            field_b: [0.3, 0.3, 0.3, 0.3, 0.3, 0.75, 0.75, 0.5, 0.75, 0.5, 0.75, 0.75],
            k1: 1.2,
            idf_pow: 1.4,
            stem: true,
            example_values: true,
            example_min: 1.0,
            decompound: true,
            join_pairs: false,
            expansion_idf_cap: true,
            primary_idf: false,
            w_synonym: 0.4,
            w_abbrev: 0.8,
            w_compound: 0.7,
            w_prefix: 0.7,
            w_fuzzy: 0.5,
            w_placeholder: 1.0,
            w_literal: 0.4,
            w_value_kind: 1.0,
            w_file_kind: 0.5,
            w_command_kind: 0.7,
            w_file_read: 0.5,
            file_share: true,
            w_completion: 0.5,
            w_file_name: 0.5,
            w_file_edit: 0.5,
            w_look_at: 0.5,
            w_part: 0.3,
            coverage: 1.0,
            coverage_idf: 0.0,
            w_scope: 0.5,
            w_payload: 0.5,
            w_phrasal: 0.3,
            w_instrument: 1.0,
            w_intent: 1.0,
            w_opener: 0.5,
            action_penalty: 0.75,
            sibling_penalty: 0.65,
            name_bonus: 1.0,
            bigram: 0.3,
            bigram_gap: 2.0,
            boiler_share: 0.7,
            share_pow: 0.25,
            w_pattern: 0.5,
            w_reference_url: 0.25,
            w_pasted: 0.3,
            one_penalty: 0.4,
            list_penalty: 0.6,
            w_tool_purpose: 0.5,
            w_tool_named: 0.5,
        }
    }
}

/// A name [`RankParams::set`] or `FusionParams::set` does not know (the
/// bench's `--set KEY=VALUE`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} {key}")]
pub struct UnknownParam {
    pub kind: &'static str,
    pub key: String,
}

impl UnknownParam {
    pub(crate) fn new(kind: &'static str, key: &str) -> Self {
        UnknownParam { kind, key: key.to_string() }
    }
}

impl RankParams {
    /// Plain BM25 over name + description: no stemming, no expansions, no
    /// extra signals. Used as the comparison baseline.
    pub fn baseline() -> Self {
        let mut field_weight = [0.0; NFIELDS];
        field_weight[Field::Name as usize] = 1.0;
        field_weight[Field::Description as usize] = 1.0;
        RankParams {
            field_weight,
            field_b: [0.75; NFIELDS],
            k1: 1.2,
            idf_pow: 1.0,
            stem: false,
            example_values: false,
            example_min: 1.0,
            decompound: false,
            join_pairs: false,
            expansion_idf_cap: false,
            primary_idf: false,
            w_synonym: 0.0,
            w_abbrev: 0.0,
            w_compound: 0.0,
            w_prefix: 0.0,
            w_fuzzy: 0.0,
            w_placeholder: 1.0,
            w_literal: 1.0,
            w_value_kind: 0.0,
            w_file_kind: 0.0,
            w_command_kind: 0.0,
            w_file_read: 0.0,
            file_share: false,
            w_completion: 0.0,
            w_file_name: 0.0,
            w_file_edit: 0.0,
            w_look_at: 0.0,
            w_part: 1.0,
            coverage: 0.0,
            coverage_idf: 0.0,
            w_scope: 1.0,
            w_payload: 1.0,
            w_phrasal: 1.0,
            w_instrument: 1.0,
            w_intent: 0.0,
            w_opener: 1.0,
            action_penalty: 1.0,
            sibling_penalty: 1.0,
            name_bonus: 0.0,
            bigram: 0.0,
            bigram_gap: 1.0,
            boiler_share: 0.0,
            share_pow: 0.0,
            w_pattern: 0.0,
            w_reference_url: 1.0,
            w_pasted: 1.0,
            one_penalty: 1.0,
            list_penalty: 1.0,
            w_tool_purpose: 1.0,
            w_tool_named: 0.0,
        }
    }

    /// Set one parameter by name (`k1`, `w_synonym`, `name` (field weight),
    /// `b.desc` (field b) ...). Used by the bench for tuning.
    pub fn set(&mut self, key: &str, value: f32) -> Result<(), UnknownParam> {
        if let Some(f) = key.strip_prefix("b.") {
            let i = FIELD_NAMES.iter().position(|n| *n == f).ok_or_else(|| UnknownParam::new("field", f))?;
            self.field_b[i] = value;
            return Ok(());
        }
        if let Some(i) = FIELD_NAMES.iter().position(|n| *n == key) {
            self.field_weight[i] = value;
            return Ok(());
        }
        let slot = match key {
            "k1" => &mut self.k1,
            "idf_pow" => &mut self.idf_pow,
            "w_synonym" => &mut self.w_synonym,
            "w_abbrev" => &mut self.w_abbrev,
            "w_compound" => &mut self.w_compound,
            "w_prefix" => &mut self.w_prefix,
            "w_fuzzy" => &mut self.w_fuzzy,
            "w_placeholder" => &mut self.w_placeholder,
            "w_literal" => &mut self.w_literal,
            "w_value_kind" => &mut self.w_value_kind,
            "w_file_kind" => &mut self.w_file_kind,
            "w_command_kind" => &mut self.w_command_kind,
            "w_file_read" => &mut self.w_file_read,
            "w_part" => &mut self.w_part,
            "coverage" => &mut self.coverage,
            "coverage_idf" => &mut self.coverage_idf,
            "bigram" => &mut self.bigram,
            "bigram_gap" => &mut self.bigram_gap,
            "name_bonus" => &mut self.name_bonus,
            "w_scope" => &mut self.w_scope,
            "w_payload" => &mut self.w_payload,
            "w_phrasal" => &mut self.w_phrasal,
            "w_instrument" => &mut self.w_instrument,
            "w_intent" => &mut self.w_intent,
            "w_opener" => &mut self.w_opener,
            "boiler_share" => &mut self.boiler_share,
            "share_pow" => &mut self.share_pow,
            "w_pattern" => &mut self.w_pattern,
            "w_reference_url" => &mut self.w_reference_url,
            "w_pasted" => &mut self.w_pasted,
            "one_penalty" => &mut self.one_penalty,
            "list_penalty" => &mut self.list_penalty,
            "w_tool_purpose" => &mut self.w_tool_purpose,
            "w_tool_named" => &mut self.w_tool_named,
            "action_penalty" => &mut self.action_penalty,
            "sibling_penalty" => &mut self.sibling_penalty,
            "w_completion" => &mut self.w_completion,
            "w_file_name" => &mut self.w_file_name,
            "w_file_edit" => &mut self.w_file_edit,
            "w_look_at" => &mut self.w_look_at,
            "example_min" => &mut self.example_min,
            "stem" => {
                self.stem = value != 0.0;
                return Ok(());
            }
            "decompound" => {
                self.decompound = value != 0.0;
                return Ok(());
            }
            "expansion_idf_cap" => {
                self.expansion_idf_cap = value != 0.0;
                return Ok(());
            }
            "primary_idf" => {
                self.primary_idf = value != 0.0;
                return Ok(());
            }
            "file_share" => {
                self.file_share = value != 0.0;
                return Ok(());
            }
            "join_pairs" => {
                self.join_pairs = value != 0.0;
                return Ok(());
            }
            "example_values" => {
                self.example_values = value != 0.0;
                return Ok(());
            }
            _ => return Err(UnknownParam::new("parameter", key)),
        };
        *slot = value;
        Ok(())
    }
}
