//! Entity and relation extraction from chunk text.
//!
//! Rule-based and deterministic: regular expressions and small word lists find
//! the terms, systems, concepts, acronyms, error codes and configured names a
//! chunk of Markdown-ish text mentions, the terms it defines, the acronyms it
//! expands, and verb-typed relations between entities of one sentence.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;

use kts_record::function_words::is_function_word;
use regex::{Captures, Match, Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EntityKind {
    Term,
    System,
    Concept,
    Acronym,
    ErrorCode,
    Person,
}

impl EntityKind {
    pub const ALL: [EntityKind; 6] = [
        EntityKind::Term,
        EntityKind::System,
        EntityKind::Concept,
        EntityKind::Acronym,
        EntityKind::ErrorCode,
        EntityKind::Person,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EntityKind::Term => "TERM",
            EntityKind::System => "SYSTEM",
            EntityKind::Concept => "CONCEPT",
            EntityKind::Acronym => "ACRONYM",
            EntityKind::ErrorCode => "ERROR_CODE",
            EntityKind::Person => "PERSON",
        }
    }

    /// Case-insensitive inverse of [`EntityKind::as_str`]; also "error-code" and "tool".
    pub fn parse(text: &str) -> Option<EntityKind> {
        let wanted = text.trim().to_ascii_uppercase().replace('-', "_");
        if wanted == "TOOL" {
            return Some(EntityKind::System);
        }
        EntityKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == wanted)
    }
}

/// A configured entity: always extracted when its name occurs (case-insensitive, whole words).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Seed {
    pub name: String,
    pub kind: EntityKind,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkEntities {
    /// One per (kind, key), sorted by (kind, key).
    pub mentions: Vec<Mention>,
    /// Sorted by key.
    pub definitions: Vec<Definition>,
    /// Sorted by acronym key.
    pub expansions: Vec<Expansion>,
    /// Deduplicated, sorted by (from, to, label).
    pub relations: Vec<Relation>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Mention {
    pub kind: EntityKind,
    /// Normalised identity: lowercase (uppercase for error codes), whitespace collapsed.
    pub key: String,
    /// The surface form of its first occurrence in the chunk.
    pub name: String,
    /// Occurrences in the chunk.
    pub count: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Definition {
    /// Key of the defined TERM (which also appears in mentions as a TERM).
    pub key: String,
    pub name: String,
    /// The defining sentence, whitespace collapsed, at most 300 chars.
    pub text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expansion {
    /// ACRONYM key.
    pub acronym: String,
    /// Surface form, e.g. "Pooling and Servicing Agreement".
    pub expansion: String,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Relation {
    pub from: (EntityKind, String),
    pub to: (EntityKind, String),
    /// One of [`RELATION_LABELS`].
    pub label: &'static str,
}

pub const RELATION_LABELS: [&str; 8] = [
    "uses",
    "implements",
    "extends",
    "calls",
    "depends_on",
    "requires",
    "defined_as",
    "instance_of",
];

const MAX_PHRASE_WORDS: usize = 6;
const MAX_PHRASE_CHARS: usize = 80;
const MAX_DEFINITION_CHARS: usize = 300;
/// The longest text between two entities that can still hold a relation verb.
const MAX_RELATION_GAP: usize = 64;

const CAP_WORD: &str = r"\p{Lu}[\p{L}\p{N}-]*";
const DEFINING_VERB: &str = r"(?:shall\s+mean|means|is\s+defined\s+as|refers\s+to)";
const ADVERB: &str = r"(?:also|directly|only|internally)";
/// One named group per relation label.
const RELATION_VERB: &str = concat!(
    r"(?P<uses>uses|use|using)|(?P<implements>implements|implement)|(?P<extends>extends)",
    r"|(?P<calls>calls)|(?P<depends_on>depends\s+on|depend\s+on)|(?P<requires>requires|require)",
    r"|(?P<instance_of>is\s+an\s+instance\s+of|instance\s+of|refers\s+to)|(?P<defined_as>is\s+an?)",
);

/// Lowercase words allowed between the capitalized words of a name.
const CONNECTORS: [&str; 8] = ["of", "and", "for", "the", "in", "on", "to", "de"];
/// Words that start a sentence-initial Title Case run without being part of the name.
const LEADING_DETERMINERS: &str =
    "the a an this that these those our your its their each every all any some no";
/// Capitalized words before "means" / "refers to" that do not name a term ("It means ...").
const PRONOUNS: &str = "it which what there here he she they we you who everything nothing";
/// Capital words that are not acronyms: placeholders, times and RFC 2119 keywords.
const NON_ACRONYMS: &str = "OK AM PM TODO NOTE FIXME TBD NB MUST SHALL SHOULD MAY NOT AND OR THE FOR BUT ALL NO YES NEW ONLY";
/// Letter prefixes of code-shaped tokens (SHA256, UTF-8) that name standards, versions or hardware.
/// Prefixes that make a code an error code by themselves.
const ERROR_PREFIXES: &str = "E ERR ERROR EX EXC FAIL FAULT WARN HTTP STATUS";
const NON_ERROR_CODE_PREFIXES: &str = "SHA MD ISO UTF RFC AES RSA CRC IPV HTTP TLS SSL ES ECMA PEP \
    CVE BM ARM AVX SSE DDR USB ID WIN AMD INT UINT";
/// English function words and words too generic to be a document's topic.
const STOPWORDS: &str = "\
    the and for are but not you all any can had her was our out has his how its now own she \
    too who why yes yet via per off nor him let did few get got way also been both does \
    done each else from have here into just like more most much only other over same some \
    such than that them then there these they this those through under until upon very were \
    what when where which while with within without would your yours about above after \
    again against among because before being below between could doing down during further \
    having hers herself himself itself myself ours ourselves their theirs themselves whom \
    yourself yourselves should shall will must may might can cannot use used uses using one \
    two new see example examples etc don doesn didn isn aren wasn weren won wouldn shouldn \
    couldn hasn haven hadn even ever every however thus therefore well make makes made many \
    once either neither";

/// Where a candidate came from; decides which candidate wins an overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    Seed,
    /// A term before "means" / "is defined as": always kept, so its definition has a TERM.
    Defined,
    /// The phrase an acronym expands to.
    Expansion,
    /// Any other built-in rule.
    Pattern,
}

/// One occurrence of an entity, before overlaps are resolved.
#[derive(Clone, Debug)]
struct Candidate {
    kind: EntityKind,
    span: Range<usize>,
    key: String,
    name: String,
    origin: Origin,
}

impl Candidate {
    fn new(kind: EntityKind, span: Range<usize>, surface: &str, origin: Origin) -> Option<Self> {
        let name = display_name(surface);
        let key = entity_key(kind, &name);
        is_valid_key(kind, &key).then_some(Candidate {
            kind,
            span,
            key,
            name,
            origin,
        })
    }

    fn from_match(kind: EntityKind, found: Match, origin: Origin) -> Option<Self> {
        Candidate::new(kind, found.range(), found.as_str(), origin)
    }

    fn pattern(kind: EntityKind, found: Match) -> Option<Self> {
        Candidate::from_match(kind, found, Origin::Pattern)
    }

    /// Higher wins when candidates share a span.
    fn rank(&self) -> u8 {
        if self.origin == Origin::Seed {
            return 6;
        }
        match self.kind {
            EntityKind::ErrorCode => 5,
            EntityKind::System | EntityKind::Person => 4,
            EntityKind::Acronym => 3,
            EntityKind::Term => 2,
            EntityKind::Concept => 1,
        }
    }

    fn identity(&self) -> (EntityKind, String) {
        (self.kind, self.key.clone())
    }
}

/// The compiled rules; build once, then extract from every chunk.
#[derive(Clone, Debug)]
pub struct Extractor {
    seeds: Option<Regex>,
    seed_kinds: HashMap<String, EntityKind>,
    taxonomy: Option<Regex>,
    backtick: Regex,
    /// Text in double quotes: English, German, Polish, French, Russian,
    /// Chinese and Japanese ones.
    quoted: Regex,
    identifier: Regex,
    title_phrase: Regex,
    acronym: Regex,
    caps_run: Regex,
    error_code: Regex,
    /// Words that make a letters-and-digits token an error code.
    error_context: Regex,
    marked_definition: Regex,
    plain_definition: Regex,
    list_marker: Regex,
    acronym_after_phrase: Regex,
    acronym_before_phrase: Regex,
    word: Regex,
    relation_verb: Regex,
}

impl Extractor {
    /// `taxonomy`: names of systems/tools (matched case-insensitively as whole words) => SYSTEM.
    pub fn new(seeds: &[Seed], taxonomy: &[String]) -> Extractor {
        let mut seed_kinds = HashMap::new();
        for seed in seeds {
            seed_kinds.entry(fold(&seed.name)).or_insert(seed.kind);
        }
        let connector = format!("(?:{})", CONNECTORS.join("|"));
        Extractor {
            seeds: whole_word_alternation(seeds.iter().map(|seed| seed.name.as_str())),
            seed_kinds,
            taxonomy: whole_word_alternation(taxonomy.iter().map(String::as_str)),
            backtick: compile(r"`([^`\n]+)`"),
            quoted: compile(concat!(
                r#""([^"\n]+)"|“([^”\n]+)”|„([^“”\n]+)[“”]|«\s*([^»\n]+?)\s*»"#,
                r"|「([^」\n]+)」|『([^』\n]+)』",
            )),
            identifier: compile(r"\b[A-Z][A-Za-z0-9]*\b"),
            title_phrase: compile(&format!(r"\b{CAP_WORD}(?: (?:{connector} )*{CAP_WORD})+\b")),
            acronym: compile(r"\b[A-Z]{2,5}s?\b"),
            caps_run: compile(r"\b[A-Z][A-Z0-9'’-]*\b(?:[,:;!.]?[ \t]+[A-Z][A-Z0-9'’-]*\b){3,}"),
            error_context: compile(
                r"(?i)\b(?:errors?|codes?|fail\w*|fault\w*|exceptions?|status|crash\w*|abort\w*|denied|invalid|warnings?|rejects?|rejected)\b",
            ),
            error_code: compile(concat!(
                r"\b(?:0[xX][0-9A-Fa-f]{4,8}",                 // 0x8007000E
                r"|E(?:\d{3,5}|-\d{1,5})",                     // E0308, E-5
                r"|(?P<hyphenated>[A-Z]{2,})(?:-[A-Z]+)*-\d+", // ERR-AUTH-401
                r"|(?P<glued>[A-Z]{2,6})\d{2,5})\b",           // AUTH401
            )),
            marked_definition: compile(&format!(
                r#"(?:"(?P<quoted>[^"\n]+)"|“(?P<curly>[^”\n]+)”|`(?P<code>[^`\n]+)`|\*\*(?P<bold>[^*\n]+)\*\*)\s+{DEFINING_VERB}\b"#
            )),
            plain_definition: compile(&format!(
                r"\b(?P<term>{CAP_WORD}(?: (?:{connector} )*{CAP_WORD})*)\s+(?P<verb>{DEFINING_VERB})\b"
            )),
            list_marker: compile(r"^[\s>]*(?:(?:[-*+]|#{1,6}|\d+[.)])\s+)?"),
            acronym_after_phrase: compile(r"\((?P<acronym>[A-Z]{2,5})s?\)"),
            acronym_before_phrase: compile(
                r"\b(?P<acronym>[A-Z]{2,5})s?\s+\((?P<phrase>[^()\n]{3,100})\)",
            ),
            word: compile(r"[\p{L}\p{N}]+"),
            relation_verb: compile(&format!(
                r"(?i)^\s*(?:{ADVERB}\s+)*(?:{RELATION_VERB})(?:\s+{ADVERB})*(?:\s+(?:the|an?))?\s*$"
            )),
        }
    }

    /// Whether `text` spells `acronym` out, as `extract` finds expansions:
    /// "Return Position Impl Trait (RPIT)" or "RPIT (return position impl trait)".
    pub fn spells_out(&self, text: &str, acronym: &str) -> bool {
        let prose = mask_fenced_code(text);
        self.expansions(&prose, &mut Vec::new())
            .iter()
            .any(|e| e.acronym.eq_ignore_ascii_case(acronym))
    }

    pub fn extract(&self, text: &str) -> ChunkEntities {
        let prose = mask_fenced_code(text);
        let sentences = self.sentence_ranges(&prose);
        let mut candidates = Vec::new();
        // Configured names, error codes and identifiers count inside code blocks too.
        self.configured_candidates(text, &mut candidates);
        self.error_code_candidates(text, &mut candidates);
        self.identifier_candidates(text, &mut candidates);
        self.term_candidates(&prose, &mut candidates);
        self.concept_candidates(&prose, &mut candidates);
        self.acronym_candidates(&prose, &mut candidates);
        let definitions = self.definitions(&prose, &sentences, &mut candidates);
        let mut expansions = self.expansions(&prose, &mut candidates);

        let entities = resolve_overlaps(candidates);
        let mentions = count_mentions(&entities);
        let known: BTreeSet<(EntityKind, &str)> =
            mentions.iter().map(|m| (m.kind, m.key.as_str())).collect();
        expansions.retain(|e| known.contains(&(EntityKind::Acronym, e.acronym.as_str())));
        let mut relations = self.sentence_relations(&prose, &sentences, &entities);
        for expansion in &expansions {
            let concept = entity_key(EntityKind::Concept, &expansion.expansion);
            if known.contains(&(EntityKind::Concept, concept.as_str())) {
                relations.insert(Relation {
                    from: (EntityKind::Acronym, expansion.acronym.clone()),
                    to: (EntityKind::Concept, concept),
                    label: "defined_as",
                });
            }
        }
        ChunkEntities {
            mentions,
            definitions,
            expansions,
            relations: relations.into_iter().collect(),
        }
    }

    fn configured_candidates(&self, text: &str, out: &mut Vec<Candidate>) {
        if let Some(seeds) = &self.seeds {
            for found in seeds.find_iter(text) {
                if let Some(&kind) = self.seed_kinds.get(&fold(found.as_str())) {
                    out.extend(Candidate::from_match(kind, found, Origin::Seed));
                }
            }
        }
        if let Some(taxonomy) = &self.taxonomy {
            let systems = taxonomy.find_iter(text);
            out.extend(systems.filter_map(|found| Candidate::pattern(EntityKind::System, found)));
        }
    }

    /// Hex and `E`-codes are codes wherever they are; letters-and-digits
    /// codes (`AUTH401`, `ERR-AUTH-401`) only with an error-like prefix or
    /// an error word nearby, since SKU-4563, INV-1234 or COVID-19 look the same.
    fn error_code_candidates(&self, text: &str, out: &mut Vec<Candidate>) {
        for caps in self.error_code.captures_iter(text) {
            let Some(code) = caps.get(0) else {
                continue;
            };
            let lettered = [("hyphenated", true), ("glued", false)]
                .into_iter()
                .find_map(|(group, hyphenated)| caps.name(group).map(|p| (p.as_str(), hyphenated)));
            let accepted = match lettered {
                None => true,
                Some((prefix, hyphenated)) => {
                    !is_excluded_code_prefix(prefix, hyphenated)
                        && (is_listed(ERROR_PREFIXES, prefix)
                            || self
                                .error_context
                                .is_match(around(text, code.start(), code.end())))
                }
            };
            if accepted {
                out.extend(Candidate::pattern(EntityKind::ErrorCode, code));
            }
        }
    }

    fn identifier_candidates(&self, text: &str, out: &mut Vec<Candidate>) {
        let camel = self
            .identifier
            .find_iter(text)
            .filter(|found| is_upper_camel(found.as_str()));
        out.extend(camel.filter_map(|found| Candidate::pattern(EntityKind::System, found)));
    }

    fn term_candidates(&self, prose: &str, out: &mut Vec<Candidate>) {
        for caps in self.backtick.captures_iter(prose) {
            if let Some(inner) = caps.get(1) {
                out.extend(Candidate::pattern(EntityKind::Term, inner));
            }
        }
        for caps in self.quoted.captures_iter(prose) {
            if let Some(inner) = caps.iter().skip(1).flatten().next()
                && is_quotable_term(inner.as_str())
            {
                out.extend(Candidate::pattern(EntityKind::Term, inner));
            }
        }
    }

    fn concept_candidates(&self, prose: &str, out: &mut Vec<Candidate>) {
        for found in self.title_phrase.find_iter(prose) {
            if let Some(span) = self.concept_span(prose, found.range()) {
                out.extend(Candidate::new(
                    EntityKind::Concept,
                    span.clone(),
                    &prose[span],
                    Origin::Pattern,
                ));
            }
        }
    }

    /// The part of a Title Case run that names a concept: capitals that only
    /// mark a sentence start do not count, except after a determiner ("The Token Cache").
    fn concept_span(&self, prose: &str, span: Range<usize>) -> Option<Range<usize>> {
        let span = if self.is_sentence_start(prose, span.start) {
            let stripped = without_leading_determiner(prose, span.clone());
            if stripped == span {
                return None;
            }
            stripped
        } else {
            span
        };
        let capitalized: Vec<&str> = prose[span.clone()]
            .split(' ')
            .filter(|word| starts_uppercase(word))
            .collect();
        let has_plain_word = capitalized.iter().any(|word| is_plain_title_word(word));
        (capitalized.len() >= 2 && has_plain_word).then_some(span)
    }

    fn acronym_candidates(&self, prose: &str, out: &mut Vec<Candidate>) {
        let shouting: Vec<Range<usize>> = self
            .caps_run
            .find_iter(prose)
            .map(|run| run.range())
            .collect();
        for found in self.acronym.find_iter(prose) {
            let in_shouting = shouting.iter().any(|run| contains(run, &found.range()));
            if !in_shouting && is_meaningful_acronym(strip_plural(found.as_str())) {
                out.extend(Candidate::pattern(EntityKind::Acronym, found));
            }
        }
    }

    fn definitions(
        &self,
        prose: &str,
        sentences: &[Range<usize>],
        out: &mut Vec<Candidate>,
    ) -> Vec<Definition> {
        let mut definitions = Vec::new();
        for sentence in sentences {
            let text = &prose[sentence.clone()];
            for term in self.defined_terms(text) {
                let span = sentence.start + term.start..sentence.start + term.end;
                let surface = &prose[span.clone()];
                let Some(candidate) =
                    Candidate::new(EntityKind::Term, span, surface, Origin::Defined)
                else {
                    continue;
                };
                definitions.push(Definition {
                    key: candidate.key.clone(),
                    name: candidate.name.clone(),
                    text: self.definition_text(text),
                });
                out.push(candidate);
            }
        }
        definitions.sort_by(|a, b| a.key.cmp(&b.key));
        definitions.dedup_by(|later, first| later.key == first.key);
        definitions
    }

    /// Spans (within `sentence`) of the terms the sentence defines.
    fn defined_terms(&self, sentence: &str) -> Vec<Range<usize>> {
        let marked = self
            .marked_definition
            .captures_iter(sentence)
            .filter_map(|caps| {
                ["quoted", "curly", "code", "bold"]
                    .into_iter()
                    .find_map(|group| caps.name(group))
                    .map(|term| term.range())
            });
        let plain = self
            .plain_definition
            .captures_iter(sentence)
            .filter_map(|caps| self.plain_defined_term(sentence, &caps));
        marked.chain(plain).collect()
    }

    /// An unmarked term defines only as a Title Case name; before "means" it
    /// must also open the sentence ("Servicer means", not "In short, Servicer means").
    fn plain_defined_term(&self, sentence: &str, caps: &Captures) -> Option<Range<usize>> {
        let term = caps.name("term")?;
        let verb = caps.name("verb")?.as_str();
        if verb.contains("mean") && !self.is_line_lead(&sentence[..term.start()]) {
            return None;
        }
        let span = without_leading_determiner(sentence, term.range());
        let folded = sentence[span.clone()].to_lowercase();
        let is_function_word =
            is_listed(LEADING_DETERMINERS, &folded) || is_listed(PRONOUNS, &folded);
        (!is_function_word).then_some(span)
    }

    fn definition_text(&self, sentence: &str) -> String {
        let marker_end = self.list_marker.find(sentence).map_or(0, |m| m.end());
        truncate_chars(
            &collapse_whitespace(&sentence[marker_end..]),
            MAX_DEFINITION_CHARS,
        )
    }

    fn expansions(&self, prose: &str, out: &mut Vec<Candidate>) -> Vec<Expansion> {
        let mut found = Vec::new();
        for caps in self.acronym_after_phrase.captures_iter(prose) {
            let (Some(whole), Some(acronym)) = (caps.get(0), caps.name("acronym")) else {
                continue;
            };
            if let Some(span) = self.expansion_before(prose, whole.start(), acronym.as_str()) {
                found.extend(record_expansion(prose, acronym.as_str(), span, out));
            }
        }
        for caps in self.acronym_before_phrase.captures_iter(prose) {
            let (Some(acronym), Some(phrase)) = (caps.name("acronym"), caps.name("phrase")) else {
                continue;
            };
            let words: Vec<&str> = self
                .word
                .find_iter(phrase.as_str())
                .map(|w| w.as_str())
                .collect();
            let letters: Vec<char> = acronym.as_str().chars().collect();
            if spells_acronym(&words, &letters) {
                let span = trim_range(prose, phrase.range());
                found.extend(record_expansion(prose, acronym.as_str(), span, out));
            }
        }
        found.sort_by(|a, b| a.acronym.cmp(&b.acronym));
        found.dedup_by(|later, first| later.acronym == first.acronym);
        found
    }

    /// The shortest run of words right before "(ACR)" (in the same clause)
    /// whose initials spell the acronym, of at most acronym length + 3 words
    /// (a CamelCase word may give several letters, so fewer words can do).
    fn expansion_before(&self, prose: &str, paren: usize, acronym: &str) -> Option<Range<usize>> {
        let line_start = prose[..paren].rfind('\n').map_or(0, |i| i + 1);
        let clause_start = prose[line_start..paren]
            .char_indices()
            .rev()
            .find(|&(_, c)| is_clause_break(c))
            .map_or(line_start, |(i, c)| line_start + i + c.len_utf8());
        let words: Vec<Range<usize>> = self
            .word
            .find_iter(&prose[clause_start..paren])
            .map(|w| clause_start + w.start()..clause_start + w.end())
            .collect();
        let letters: Vec<char> = acronym.chars().collect();
        (1..=letters.len() + 3)
            .take_while(|&n| n <= words.len())
            .find_map(|n| {
                let window = &words[words.len() - n..];
                let texts: Vec<&str> = window.iter().map(|w| &prose[w.clone()]).collect();
                spells_acronym(&texts, &letters).then(|| window[0].start..window[n - 1].end)
            })
    }

    fn sentence_relations(
        &self,
        prose: &str,
        sentences: &[Range<usize>],
        entities: &[Candidate],
    ) -> BTreeSet<Relation> {
        let mut relations = BTreeSet::new();
        for sentence in sentences {
            let inside: Vec<&Candidate> = entities
                .iter()
                .filter(|e| contains(sentence, &e.span))
                .collect();
            for (index, first) in inside.iter().enumerate() {
                for second in &inside[index + 1..] {
                    let same_entity = first.kind == second.kind && first.key == second.key;
                    if second.span.start < first.span.end || same_entity {
                        continue;
                    }
                    let between = &prose[first.span.end..second.span.start];
                    if let Some(label) = self.relation_label(between) {
                        relations.insert(Relation {
                            from: first.identity(),
                            to: second.identity(),
                            label,
                        });
                    }
                }
            }
        }
        relations
    }

    fn relation_label(&self, between: &str) -> Option<&'static str> {
        if between.len() > MAX_RELATION_GAP {
            return None;
        }
        let unmarked: String = between.chars().filter(|&c| !is_markup(c)).collect();
        let caps = self.relation_verb.captures(&unmarked)?;
        RELATION_LABELS
            .into_iter()
            .find(|label| caps.name(label).is_some())
    }

    /// Sentences of the prose: split after `.`, `!` or `?` followed by
    /// whitespace, at blank lines, and around list items and headings.
    fn sentence_ranges(&self, prose: &str) -> Vec<Range<usize>> {
        let mut sentences = Vec::new();
        let mut start = 0;
        let mut line_start = 0;
        for line in prose.split_inclusive('\n') {
            let content = line.trim_end();
            if content.is_empty() || self.starts_block(content) {
                push_trimmed(prose, start..line_start, &mut sentences);
                start = line_start;
            }
            for (index, c) in content.char_indices() {
                let end = index + c.len_utf8();
                let followed_by_space = content[end..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace);
                if matches!(c, '.' | '!' | '?')
                    && followed_by_space
                    && !ends_with_abbreviation(&content[..end])
                {
                    push_trimmed(prose, start..line_start + end, &mut sentences);
                    start = line_start + end;
                }
            }
            if content.trim_start().starts_with('#') {
                push_trimmed(prose, start..line_start + content.len(), &mut sentences);
                start = line_start + content.len();
            }
            line_start += line.len();
        }
        push_trimmed(prose, start..prose.len(), &mut sentences);
        sentences
    }

    fn starts_block(&self, line: &str) -> bool {
        self.list_marker
            .find(line)
            .is_some_and(|marker| !marker.as_str().trim().is_empty())
    }

    /// Whether `prefix` (the text before a word on its line or in its
    /// sentence) holds nothing but list/heading/quote markers and opening markup.
    fn is_line_lead(&self, prefix: &str) -> bool {
        let marker_end = self.list_marker.find(prefix).map_or(0, |m| m.end());
        prefix[marker_end..].chars().all(is_opening_markup)
    }

    fn is_sentence_start(&self, prose: &str, position: usize) -> bool {
        let before = &prose[..position];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        if self.is_line_lead(&before[line_start..]) {
            return true;
        }
        let unmarked = before.trim_end_matches(is_opening_markup);
        let trimmed = unmarked.trim_end();
        trimmed.len() < unmarked.len() && trimmed.ends_with(['.', '!', '?', ':'])
    }
}

/// Content words of a text with their counts, for TF-IDF keyword topics:
/// lowercase alphabetic words of ≥ 3 letters (ASCII or not), neither English
/// stopwords nor other languages' function words, sorted by word.
pub fn keywords(text: &str) -> Vec<(String, u32)> {
    let prose = mask_fenced_code(text);
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    for word in prose.split(|c: char| !c.is_alphabetic()) {
        if word.chars().count() < 3 {
            continue;
        }
        let word = word.to_lowercase();
        if !STOPWORD_SET.contains(word.as_str()) && !is_function_word(&word) {
            *counts.entry(word).or_default() += 1;
        }
    }
    counts.into_iter().collect()
}

/// [`STOPWORDS`] as a set: `keywords` looks up every word of the corpus.
static STOPWORD_SET: std::sync::LazyLock<std::collections::HashSet<&'static str>> =
    std::sync::LazyLock::new(|| STOPWORDS.split_whitespace().collect());

/// Whether `word` is one of the whitespace-separated words of `list`.
fn is_listed(list: &str, word: &str) -> bool {
    list.split_whitespace().any(|listed| listed == word)
}

fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).expect("built-in extraction pattern is valid")
}

/// One case-insensitive regex matching any of `names` as whole words, longest first.
fn whole_word_alternation<'a>(names: impl Iterator<Item = &'a str>) -> Option<Regex> {
    let mut names: Vec<String> = names
        .map(collapse_whitespace)
        .filter(|name| name.chars().count() >= 2)
        .collect();
    names.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    names.dedup();
    if names.is_empty() {
        return None;
    }
    let alternatives: Vec<String> = names.iter().map(|name| whole_word_pattern(name)).collect();
    let regex = RegexBuilder::new(&alternatives.join("|"))
        .case_insensitive(true)
        .size_limit(1 << 28)
        .build()
        .expect("escaped names form a valid pattern");
    Some(regex)
}

/// `\b` only at word-character edges, so names like "C++" or ".NET" still match.
fn whole_word_pattern(name: &str) -> String {
    let boundary = |edge: Option<char>| {
        if edge.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            r"\b"
        } else {
            ""
        }
    };
    let body: Vec<String> = name.split(' ').map(regex::escape).collect();
    format!(
        "{}(?:{}){}",
        boundary(name.chars().next()),
        body.join(r"\s+"),
        boundary(name.chars().last())
    )
}

/// The text with fenced code blocks blanked to spaces (newlines kept), so
/// that byte offsets stay those of the original text.
fn mask_fenced_code(text: &str) -> String {
    let mut prose = String::with_capacity(text.len());
    let mut open_fence: Option<(char, usize)> = None;
    for line in text.split_inclusive('\n') {
        let in_code = match (open_fence, fence_marker(line)) {
            (None, Some(fence)) => {
                open_fence = Some(fence);
                true
            }
            (Some((open, open_len)), Some((close, close_len)))
                if open == close && close_len >= open_len =>
            {
                open_fence = None;
                true
            }
            (open, _) => open.is_some(),
        };
        if !in_code {
            prose.push_str(line);
            continue;
        }
        for c in line.chars() {
            if c == '\n' {
                prose.push('\n');
            } else {
                prose.extend(std::iter::repeat_n(' ', c.len_utf8()));
            }
        }
    }
    prose
}

/// The fence character and length of a ``` or ~~~ line.
fn fence_marker(line: &str) -> Option<(char, usize)> {
    let unindented = line.trim_start_matches(' ');
    if line.len() - unindented.len() > 3 {
        return None;
    }
    let fence = unindented
        .chars()
        .next()
        .filter(|c| matches!(c, '`' | '~'))?;
    let length = unindented.chars().take_while(|&c| c == fence).count();
    (length >= 3).then_some((fence, length))
}

fn push_trimmed(text: &str, range: Range<usize>, out: &mut Vec<Range<usize>>) {
    let trimmed = trim_range(text, range);
    if !trimmed.is_empty() {
        out.push(trimmed);
    }
}

fn trim_range(text: &str, range: Range<usize>) -> Range<usize> {
    let slice = &text[range.clone()];
    let start = range.start + (slice.len() - slice.trim_start().len());
    let end = range.start + slice.trim_end().len();
    start..end.max(start)
}

fn ends_with_abbreviation(text: &str) -> bool {
    let tail_start = text.char_indices().rev().nth(5).map_or(0, |(i, _)| i);
    let tail = text[tail_start..].to_lowercase();
    ["e.g.", "i.e.", "vs.", "cf."]
        .into_iter()
        .any(|abbreviation| {
            tail.strip_suffix(abbreviation)
                .is_some_and(|rest| !rest.ends_with(char::is_alphanumeric))
        })
}

/// Keeps one candidate per span (the best ranked), drops pattern matches
/// inside seeds, acronyms inside error codes and concepts overlapping an
/// acronym's expansion; sorted by position.
fn resolve_overlaps(candidates: Vec<Candidate>) -> Vec<Candidate> {
    let spans_where = |wanted: fn(&Candidate) -> bool| -> Vec<Range<usize>> {
        candidates
            .iter()
            .filter(|c| wanted(c))
            .map(|c| c.span.clone())
            .collect()
    };
    let seeds = spans_where(|c| c.origin == Origin::Seed);
    let codes = spans_where(|c| c.kind == EntityKind::ErrorCode);
    let expansions = spans_where(|c| c.origin == Origin::Expansion);
    let mut best_rank: HashMap<(usize, usize), u8> = HashMap::new();
    for candidate in &candidates {
        let best = best_rank
            .entry((candidate.span.start, candidate.span.end))
            .or_default();
        *best = (*best).max(candidate.rank());
    }
    let survives = |c: &Candidate| {
        if c.origin == Origin::Defined {
            return true;
        }
        let inside_seed = c.origin != Origin::Seed && seeds.iter().any(|s| contains(s, &c.span));
        let inside_code =
            c.kind == EntityKind::Acronym && codes.iter().any(|s| contains(s, &c.span));
        let beside_expansion = c.kind == EntityKind::Concept
            && c.origin == Origin::Pattern
            && expansions
                .iter()
                .any(|s| s.start < c.span.end && c.span.start < s.end);
        let outranked = c.rank() < best_rank[&(c.span.start, c.span.end)];
        !(inside_seed || inside_code || beside_expansion || outranked)
    };
    let mut kept: Vec<Candidate> = candidates.iter().filter(|c| survives(c)).cloned().collect();
    kept.sort_by_key(|c| (c.span.start, c.span.end, c.kind));
    kept.dedup_by(|later, first| later.span == first.span && later.kind == first.kind);
    kept
}

/// One mention per (kind, key), named after its first occurrence.
fn count_mentions(entities: &[Candidate]) -> Vec<Mention> {
    let mut mentions: BTreeMap<(EntityKind, &str), Mention> = BTreeMap::new();
    for entity in entities {
        mentions
            .entry((entity.kind, entity.key.as_str()))
            .or_insert_with(|| Mention {
                kind: entity.kind,
                key: entity.key.clone(),
                name: entity.name.clone(),
                count: 0,
            })
            .count += 1;
    }
    mentions.into_values().collect()
}

fn record_expansion(
    prose: &str,
    acronym: &str,
    span: Range<usize>,
    out: &mut Vec<Candidate>,
) -> Option<Expansion> {
    if !is_meaningful_acronym(acronym) {
        return None;
    }
    let surface = &prose[span.clone()];
    let capitalized = surface.split_whitespace().filter(|w| starts_uppercase(w));
    if capitalized.count() >= 2 {
        let concept = Candidate::new(EntityKind::Concept, span, surface, Origin::Expansion);
        out.extend(concept);
    }
    Some(Expansion {
        acronym: entity_key(EntityKind::Acronym, acronym),
        expansion: display_name(surface),
    })
}

/// Whether the initials of `words` spell `letters`. When some word is
/// capitalized, connectors ("of", "and", ...) inside the phrase may be skipped
/// and a CamelCase word may give all its capitals ("JavaScript" → "JS");
/// an all-lowercase phrase must match word for word.
fn spells_acronym(words: &[&str], letters: &[char]) -> bool {
    let lenient = words.iter().any(|word| starts_uppercase(word));
    spells(words, letters, lenient, true)
}

fn spells(words: &[&str], letters: &[char], lenient: bool, at_start: bool) -> bool {
    let Some((word, rest)) = words.split_first() else {
        return letters.is_empty();
    };
    let skippable = lenient
        && !at_start
        && !rest.is_empty()
        && CONNECTORS.contains(&word.to_lowercase().as_str());
    if skippable && spells(rest, letters, lenient, false) {
        return true;
    }
    word_initials(word, lenient).iter().any(|initials| {
        letters.len() >= initials.len()
            && letters
                .iter()
                .zip(initials)
                .all(|(l, i)| l.eq_ignore_ascii_case(i))
            && spells(rest, &letters[initials.len()..], lenient, false)
    })
}

fn word_initials(word: &str, with_humps: bool) -> Vec<Vec<char>> {
    let first: Vec<char> = word.chars().take(1).collect();
    if with_humps && hump_count(word) >= 2 {
        let capitals = word.chars().filter(|c| c.is_uppercase()).collect();
        vec![first, capitals]
    } else {
        vec![first]
    }
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Case- and spacing-insensitive form of a configured name.
fn fold(name: &str) -> String {
    collapse_whitespace(name).to_lowercase()
}

/// The surface form: whitespace collapsed, surrounding quotes and punctuation trimmed.
fn display_name(surface: &str) -> String {
    let name = collapse_whitespace(surface)
        .trim_start_matches(|c: char| c.is_whitespace() || "\"'“”‘’*,;:!?".contains(c))
        .trim_end_matches(|c: char| c.is_whitespace() || ".,;:!?\"'“”‘’*".contains(c))
        .to_string();
    // A phrase cut inside inline code ("return position `impl Trait") keeps no stray backtick.
    if name.matches('`').count() % 2 == 1 {
        name.replace('`', "")
    } else {
        name
    }
}

fn entity_key(kind: EntityKind, name: &str) -> String {
    match kind {
        EntityKind::ErrorCode => name.to_uppercase(),
        EntityKind::Acronym => strip_plural(name).to_lowercase(),
        _ => name.to_lowercase(),
    }
}

fn is_valid_key(kind: EntityKind, key: &str) -> bool {
    let chars = key.chars().count();
    let is_phrase = matches!(kind, EntityKind::Term | EntityKind::Concept);
    let short_enough =
        !is_phrase || (chars <= MAX_PHRASE_CHARS && key.split(' ').count() <= MAX_PHRASE_WORDS);
    chars >= 2 && key.chars().any(char::is_alphabetic) && short_enough
}

/// "APIs" → "API".
fn strip_plural(word: &str) -> &str {
    match word.strip_suffix('s') {
        Some(stem) if stem.len() >= 2 && stem.chars().all(|c| c.is_ascii_uppercase()) => stem,
        _ => word,
    }
}

fn is_meaningful_acronym(letters: &str) -> bool {
    !is_listed(NON_ACRONYMS, letters) && !is_roman_numeral(letters)
}

/// II to XXXIX, written canonically (other letters like "CLI" are real acronyms).
fn is_roman_numeral(letters: &str) -> bool {
    const UNITS: [&str; 10] = ["", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"];
    letters.chars().all(|c| matches!(c, 'I' | 'V' | 'X'))
        && (2..40).any(|n| format!("{}{}", "X".repeat(n / 10), UNITS[n % 10]) == letters)
}

/// The text within a sentence's reach of `start..end` (clipped to char boundaries).
fn around(text: &str, start: usize, end: usize) -> &str {
    let mut from = start.saturating_sub(100);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = (end + 60).min(text.len());
    while !text.is_char_boundary(to) {
        to += 1;
    }
    &text[from..to]
}

fn is_excluded_code_prefix(prefix: &str, hyphenated: bool) -> bool {
    // "HTTP-500" is a status error, while "HTTP2" is a protocol version.
    !(hyphenated && prefix == "HTTP") && is_listed(NON_ERROR_CODE_PREFIXES, prefix)
}

fn is_quotable_term(inner: &str) -> bool {
    inner.starts_with(char::is_alphanumeric) && !inner.ends_with(['.', ',', '!', '?', ';', ':'])
}

/// Humps of a CamelCase word: 1 + the capitals that follow a lowercase letter or digit.
fn hump_count(word: &str) -> usize {
    let inner_humps = word
        .chars()
        .zip(word.chars().skip(1))
        .filter(|&(before, c)| {
            (before.is_lowercase() || before.is_ascii_digit()) && c.is_uppercase()
        })
        .count();
    1 + inner_humps
}

/// `AuthService`, `Win32Api`, `XMLHttpRequest`; not `OAuth`, `PhD` or `HTTP`.
fn is_upper_camel(word: &str) -> bool {
    word.chars().count() >= 4
        && starts_uppercase(word)
        && word.chars().any(|c| c.is_ascii_lowercase())
        && hump_count(word) >= 2
}

/// "Agreement", "Cut-off": capitalized, neither CamelCase nor ALL-CAPS.
fn is_plain_title_word(word: &str) -> bool {
    word.chars().any(char::is_lowercase) && hump_count(word) == 1
}

fn starts_uppercase(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

/// Drops a leading "The" / "This" / "All of the" ... from a Title Case span.
fn without_leading_determiner(text: &str, span: Range<usize>) -> Range<usize> {
    let Some((first, _)) = text[span.clone()].split_once(' ') else {
        return span;
    };
    if !is_listed(LEADING_DETERMINERS, &first.to_lowercase()) {
        return span;
    }
    let mut start = span.start + first.len() + 1;
    while let Some((word, _)) = text[start..span.end].split_once(' ') {
        if !CONNECTORS.contains(&word) {
            break;
        }
        start += word.len() + 1;
    }
    start..span.end
}

fn truncate_chars(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars - 1) {
        Some((cut, _)) if text.chars().count() > max_chars => format!("{}…", &text[..cut]),
        _ => text.to_string(),
    }
}

fn contains(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

fn is_opening_markup(c: char) -> bool {
    matches!(c, '*' | '_' | '"' | '“' | '\'' | '‘' | '(' | '[' | '`')
}

fn is_markup(c: char) -> bool {
    matches!(c, '`' | '"' | '“' | '”' | '*' | '_' | '\'' | '‘' | '’')
}

fn is_clause_break(c: char) -> bool {
    matches!(c, ',' | ';' | ':' | '.' | '!' | '?' | '(' | ')' | '[' | ']')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extract(text: &str) -> ChunkEntities {
        Extractor::new(&[], &[]).extract(text)
    }

    fn keys(found: &ChunkEntities, kind: EntityKind) -> Vec<&str> {
        found
            .mentions
            .iter()
            .filter(|m| m.kind == kind)
            .map(|m| m.key.as_str())
            .collect()
    }

    fn mention<'a>(found: &'a ChunkEntities, kind: EntityKind, key: &str) -> &'a Mention {
        found
            .mentions
            .iter()
            .find(|m| m.kind == kind && m.key == key)
            .unwrap_or_else(|| panic!("no {kind:?} {key:?} in {:#?}", found.mentions))
    }

    fn relation(from: (EntityKind, &str), to: (EntityKind, &str), label: &'static str) -> Relation {
        Relation {
            from: (from.0, from.1.into()),
            to: (to.0, to.1.into()),
            label,
        }
    }

    #[test]
    fn entity_kinds_parse_their_names() {
        for kind in EntityKind::ALL {
            assert_eq!(EntityKind::parse(&kind.as_str().to_lowercase()), Some(kind));
        }
        assert_eq!(EntityKind::parse("error-code"), Some(EntityKind::ErrorCode));
        assert_eq!(EntityKind::parse("Tool"), Some(EntityKind::System));
        assert_eq!(EntityKind::parse("topic"), None);
    }

    #[test]
    fn quoted_term_before_means_is_defined() {
        let found =
            extract("\"Servicer\" means the entity that services the loans. It reports monthly.");
        assert_eq!(
            found.definitions,
            vec![Definition {
                key: "servicer".into(),
                name: "Servicer".into(),
                text: "\"Servicer\" means the entity that services the loans.".into(),
            }]
        );
        assert_eq!(mention(&found, EntityKind::Term, "servicer").count, 1);
    }

    #[test]
    fn title_case_term_is_defined_as() {
        let found = extract(
            "Payments stop then.\n\nThe Cut-off Date is defined as the first day of the month.",
        );
        assert_eq!(found.definitions.len(), 1);
        assert_eq!(found.definitions[0].key, "cut-off date");
        assert_eq!(found.definitions[0].name, "Cut-off Date");
        assert_eq!(
            found.definitions[0].text,
            "The Cut-off Date is defined as the first day of the month."
        );
        assert_eq!(keys(&found, EntityKind::Term), ["cut-off date"]);
        assert!(keys(&found, EntityKind::Concept).is_empty());
    }

    #[test]
    fn means_needs_a_marked_term_or_a_sentence_start() {
        let text = "- “Closing Date” shall mean March 1.\n\
                    - **Trustee** means the bank holding the assets.\n\
                    Servicer means the company. This means nothing. In short, Owner means the holder.\n\
                    `max_tokens` refers to the output budget.";
        let found = extract(text);
        let defined: Vec<&str> = found.definitions.iter().map(|d| d.key.as_str()).collect();
        assert_eq!(
            defined,
            ["closing date", "max_tokens", "servicer", "trustee"]
        );
        let closing = &found.definitions[0];
        assert_eq!(closing.text, "“Closing Date” shall mean March 1.");
        assert_eq!(mention(&found, EntityKind::Term, "trustee").name, "Trustee");
    }

    #[test]
    fn long_definitions_are_cut_with_an_ellipsis() {
        let text = format!("\"Pool\" means {}.", "the set of loans ".repeat(30));
        let definition = &extract(&text).definitions[0];
        assert_eq!(definition.text.chars().count(), MAX_DEFINITION_CHARS);
        assert!(definition.text.ends_with('…'));
    }

    #[test]
    fn spelling_an_acronym_out_is_told_from_naming_it() {
        let extractor = Extractor::new(&[], &[]);
        let defines = "Each deal follows the Pooling and Servicing Agreement (PSA).";
        let defines_after = "Clients call the API (application programming interface).";
        let names = "The PSA (see above) says so, and the API is (PSA) bound.";
        assert!(extractor.spells_out(defines, "PSA"));
        assert!(extractor.spells_out(defines_after, "api"));
        assert!(!extractor.spells_out(defines, "API"));
        assert!(!extractor.spells_out(names, "PSA"));
    }

    #[test]
    fn acronyms_expand_in_both_orders() {
        let text = "Each deal follows the Pooling and Servicing Agreement (PSA). \
                    Clients call the API (Application Programming Interface) daily.";
        let found = extract(text);
        assert_eq!(
            found.expansions,
            vec![
                Expansion {
                    acronym: "api".into(),
                    expansion: "Application Programming Interface".into()
                },
                Expansion {
                    acronym: "psa".into(),
                    expansion: "Pooling and Servicing Agreement".into()
                },
            ]
        );
        assert_eq!(
            keys(&found, EntityKind::Concept),
            [
                "application programming interface",
                "pooling and servicing agreement"
            ]
        );
        assert!(found.relations.contains(&relation(
            (EntityKind::Acronym, "psa"),
            (EntityKind::Concept, "pooling and servicing agreement"),
            "defined_as"
        )));
    }

    #[test]
    fn expansions_at_a_sentence_start_and_in_lowercase() {
        let text = "Pooling and Servicing Agreement (PSA) terms apply.\n\n\
                    We built a retrieval augmented generation (RAG) system on JavaScript Object Notation (JSON) files. \
                    The quick brown fox (QBX) is not one.";
        let found = extract(text);
        let expanded: Vec<(&str, &str)> = found
            .expansions
            .iter()
            .map(|e| (e.acronym.as_str(), e.expansion.as_str()))
            .collect();
        assert_eq!(
            expanded,
            [
                ("json", "JavaScript Object Notation"),
                ("psa", "Pooling and Servicing Agreement"),
                ("rag", "retrieval augmented generation"),
            ]
        );
        assert!(keys(&found, EntityKind::Concept).contains(&"pooling and servicing agreement"));
        assert!(!keys(&found, EntityKind::Concept).contains(&"retrieval augmented generation"));
    }

    #[test]
    fn acronyms_plurals_numerals_and_shouting() {
        let text = "Our APIs call one API over TLS. See Part II and Annex IV for details, TODO OK.\n\
                    WARNING: DO NOT SHARE THE PSK.";
        let found = extract(text);
        assert_eq!(keys(&found, EntityKind::Acronym), ["api", "tls"]);
        let api = mention(&found, EntityKind::Acronym, "api");
        assert_eq!((api.name.as_str(), api.count), ("APIs", 2));
    }

    #[test]
    fn error_codes_of_every_form() {
        let text = "Login fails with ERR-AUTH-401 or AUTH401; the installer returns 0x8007000E, \
                    rustc reports E0308 and E-5. HTTP-500 and ERR42 are logged; retry on 0X80070005.";
        let found = extract(text);
        assert_eq!(
            keys(&found, EntityKind::ErrorCode),
            [
                "0X80070005",
                "0X8007000E",
                "AUTH401",
                "E-5",
                "E0308",
                "ERR-AUTH-401",
                "ERR42",
                "HTTP-500"
            ]
        );
        assert_eq!(
            mention(&found, EntityKind::ErrorCode, "0X8007000E").name,
            "0x8007000E"
        );
        // "AUTH" inside "ERR-AUTH-401" and "HTTP" inside "HTTP-500" are not acronyms.
        assert!(keys(&found, EntityKind::Acronym).is_empty());
    }

    #[test]
    fn product_and_reference_numbers_are_not_error_codes() {
        let text = "Order SKU-4563 shipped with invoice INV-1234 during COVID-19; see GPT-4.";
        assert!(keys(&extract(text), EntityKind::ErrorCode).is_empty());
        let near_error = "The gateway rejects the call with PAY-402 when the card is declined.";
        assert_eq!(
            keys(&extract(near_error), EntityKind::ErrorCode),
            ["PAY-402"]
        );
    }

    #[test]
    fn standards_and_versions_are_not_error_codes() {
        let text = "Hashes use SHA256 or SHA-256, dates ISO8601, text UTF8 or UTF-8, \
                    see RFC7231, CVE-2021-44228, HTTP2 and AVX512.";
        assert!(keys(&extract(text), EntityKind::ErrorCode).is_empty());
    }

    #[test]
    fn camel_case_identifiers_are_systems() {
        let text = "The AuthService calls HashMap from Win32Api in PowerShell; \
                    getUser, OAuth, PhD and HTTP are not systems.";
        assert_eq!(
            keys(&extract(text), EntityKind::System),
            ["authservice", "hashmap", "powershell", "win32api"]
        );
    }

    #[test]
    fn a_backticked_identifier_is_a_system_not_a_term() {
        let found = extract("Call `TokenCache` or `TokenCache::clear()`.");
        assert_eq!(keys(&found, EntityKind::Term), ["tokencache::clear()"]);
        assert_eq!(mention(&found, EntityKind::System, "tokencache").count, 2);
    }

    #[test]
    fn taxonomy_names_match_whole_words_in_any_case() {
        let taxonomy = ["Kubernetes".to_string(), "Active Directory".to_string()];
        let extractor = Extractor::new(&[], &taxonomy);
        let found = extractor.extract(
            "Deploy to kubernetes with KUBERNETES manifests; users live in Active  Directory, not in kubernetesx.",
        );
        assert_eq!(
            keys(&found, EntityKind::System),
            ["active directory", "kubernetes"]
        );
        let kubernetes = mention(&found, EntityKind::System, "kubernetes");
        assert_eq!(
            (kubernetes.name.as_str(), kubernetes.count),
            ("kubernetes", 2)
        );
        assert_eq!(
            mention(&found, EntityKind::System, "active directory").name,
            "Active Directory"
        );
        assert!(keys(&found, EntityKind::Concept).is_empty());
    }

    #[test]
    fn person_seeds_count_every_occurrence_and_win_overlaps() {
        let seeds = [Seed {
            name: "Alice Smith".into(),
            kind: EntityKind::Person,
        }];
        let found = Extractor::new(&seeds, &[])
            .extract("Approved by Alice Smith. Later alice smith and ALICE SMITH reviewed it.");
        let alice = mention(&found, EntityKind::Person, "alice smith");
        assert_eq!((alice.name.as_str(), alice.count), ("Alice Smith", 3));
        assert_eq!(found.mentions.len(), 1, "{:#?}", found.mentions);
    }

    #[test]
    fn title_case_concepts_skip_sentence_starts() {
        let text = "## Token Refresh Flow\n\
                    Requests pass through the Payment Gateway Service before the Bank of England settles them.\n\
                    Payment Gateway Service retries. Note: Ledger Sync Job runs nightly.\n\
                    - Audit Trail Export is weekly.\n\
                    The Token Cache holds sessions for AuthService TokenCache users.";
        assert_eq!(
            keys(&extract(text), EntityKind::Concept),
            ["bank of england", "payment gateway service", "token cache"]
        );
    }

    #[test]
    fn typed_relations_within_a_sentence() {
        let text = "The AuthService uses the TokenCache to store sessions. \
                    PaymentGateway depends on AuthService. \
                    The `TokenCache` implements the `CacheProvider` interface. \
                    PaymentGateway is a `GatewayComponent`. \
                    AuthService and RetryPolicy are unrelated. \
                    RetryPolicy is an instance of BackoffStrategy.";
        let found = extract(text);
        let edges: Vec<(&str, &str, &str)> = found
            .relations
            .iter()
            .map(|r| (r.from.1.as_str(), r.to.1.as_str(), r.label))
            .collect();
        assert_eq!(
            edges,
            [
                ("authservice", "tokencache", "uses"),
                ("paymentgateway", "authservice", "depends_on"),
                ("paymentgateway", "gatewaycomponent", "defined_as"),
                ("retrypolicy", "backoffstrategy", "instance_of"),
                ("tokencache", "cacheprovider", "implements"),
            ]
        );
        let system = EntityKind::System;
        assert!(
            found
                .relations
                .iter()
                .all(|r| r.from.0 == system && r.to.0 == system)
        );
    }

    #[test]
    fn counts_per_occurrence_sorted_and_deterministic() {
        let text = "AuthService logs ERR-42X. The AuthService retries, then AuthService fails with AUTH401 \
                    and the \"retry budget\" is spent; the \"retry budget\" resets hourly via the API.";
        let extractor = Extractor::new(&[], &[]);
        let found = extractor.extract(text);
        assert_eq!(mention(&found, EntityKind::System, "authservice").count, 3);
        assert_eq!(mention(&found, EntityKind::Term, "retry budget").count, 2);
        let order: Vec<(EntityKind, &str)> = found
            .mentions
            .iter()
            .map(|m| (m.kind, m.key.as_str()))
            .collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
        assert_eq!(found, extractor.extract(text));
    }

    #[test]
    fn terms_are_quoted_the_ways_languages_quote() {
        let text = "Open “Account settings”, „Kontoeinstellungen“, „Ustawienia konta”, \
                    « Paramètres du compte », «Настройки», 「アカウント設定」 and 『設定』.";
        let found = extract(text);
        let mut terms = keys(&found, EntityKind::Term);
        terms.sort_unstable();
        assert_eq!(
            terms,
            [
                "account settings",
                "kontoeinstellungen",
                "paramètres du compte",
                "ustawienia konta",
                "настройки",
                "アカウント設定",
                "設定"
            ]
        );
    }

    #[test]
    fn numbers_and_single_letters_are_dropped() {
        let found =
            extract("Set `x` to `42` or `v2`; the \"7\" and \"2.5\" flags and `-` do nothing.");
        assert_eq!(keys(&found, EntityKind::Term), ["v2"]);
    }

    #[test]
    fn fenced_code_hides_prose_rules_but_not_codes_or_identifiers() {
        let text = "Start the cache.\n\n```rust\n// Token Cache Manager handles \"Servicer\" (API)\n\
                    let cache = TokenCache::new(); // ERR-CACHE-503\n```\n\nThen retry.";
        let found = extract(text);
        assert_eq!(keys(&found, EntityKind::ErrorCode), ["ERR-CACHE-503"]);
        assert_eq!(keys(&found, EntityKind::System), ["tokencache"]);
        assert!(keys(&found, EntityKind::Concept).is_empty());
        assert!(keys(&found, EntityKind::Term).is_empty());
        assert!(keys(&found, EntityKind::Acronym).is_empty());
    }

    #[test]
    fn keywords_leave_out_function_words_of_other_languages() {
        let text = "Die Kündigung muss innerhalb von vier Wochen erfolgen. Les congés des salariés. \
                    Los días de vacaciones. Η άδεια της εταιρείας. Отпуск для сотрудников. \
                    الإجازة على الموظفين";
        let words: Vec<String> = keywords(text).into_iter().map(|(word, _)| word).collect();
        assert_eq!(
            words,
            [
                "congés",
                "días",
                "erfolgen",
                "kündigung",
                "salariés",
                "vacaciones",
                "vier",
                "wochen",
                "άδεια",
                "εταιρείας",
                "отпуск",
                "сотрудников",
                "الإجازة",
                "الموظفين",
            ]
        );
    }

    #[test]
    fn keywords_count_content_words_outside_code() {
        let text = "The retrieval pipeline uses retrieval scores; see the example for Übersicht.\n\
                    ```\nlet ignored_words = tokens;\n```\n";
        assert_eq!(
            keywords(text),
            [
                ("pipeline".to_string(), 1),
                ("retrieval".to_string(), 2),
                ("scores".to_string(), 1),
                ("übersicht".to_string(), 1),
            ]
        );
    }
}
