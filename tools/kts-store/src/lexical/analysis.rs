//! The words the lexical index keeps, made from the text `words::indexed_text`
//! gives the way FTS5's tokenizer (`words::FTS5_TOKENIZER`) makes them: runs
//! of letters, digits and marks, lowercased, diacritics removed, then Porter-stemmed (the original
//! algorithm, as FTS5's `porter` has it). Stop words are kept in the index, as
//! FTS5 keeps them: document lengths count them, and queries leave them out.

use frostem::{Algorithm, Stemmer};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::words::is_word_char;

/// The name the index's text field registers [`Analyzer`] under.
pub const NAME: &str = "kts";

/// FTS5's `porter` stems only words of this many bytes.
const STEMMED_LENGTHS: std::ops::RangeInclusive<usize> = 3..=64;

/// One word as the index keeps it; `None` when nothing of it is left.
pub fn term(word: &str) -> Option<String> {
    let folded = fold(word);
    (!folded.is_empty()).then(|| stem(&Stemmer::new(Algorithm::Porter), folded))
}

fn stem(stemmer: &Stemmer, folded: String) -> String {
    if STEMMED_LENGTHS.contains(&folded.len()) {
        stemmer.stem(&folded).into_owned()
    } else {
        folded
    }
}

/// Lowercase, and Latin letters without their diacritics (FTS5's
/// `remove_diacritics 2` leaves other scripts' marks alone).
fn fold(word: &str) -> String {
    let lower = word.to_lowercase();
    if lower.is_ascii() {
        return lower;
    }
    lower
        .chars()
        .map(|c| match c {
            'ς' => 'σ',
            _ => latin_base(c).unwrap_or(c),
        })
        .collect()
}

/// The ASCII letter a Latin letter with diacritics is made from.
fn latin_base(c: char) -> Option<char> {
    let mut parts = std::iter::once(c).nfd();
    let base = parts.next()?;
    (base.is_ascii_alphabetic() && parts.all(is_combining_mark)).then_some(base)
}

/// The index's tokenizer: see the module comment.
#[derive(Clone)]
pub struct Analyzer {
    stemmer: Stemmer,
}

impl Default for Analyzer {
    fn default() -> Self {
        Self {
            stemmer: Stemmer::new(Algorithm::Porter),
        }
    }
}

impl Tokenizer for Analyzer {
    type TokenStream<'a> = Tokens;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Tokens {
        let mut tokens = Vec::new();
        let words = text
            .split(|c: char| !is_word_char(c))
            .filter(|w| !w.is_empty());
        for word in words {
            let folded = fold(word);
            if folded.is_empty() {
                continue;
            }
            let offset_from = word.as_ptr() as usize - text.as_ptr() as usize;
            tokens.push(Token {
                offset_from,
                offset_to: offset_from + word.len(),
                position: tokens.len(),
                text: stem(&self.stemmer, folded),
                position_length: 1,
            });
        }
        Tokens {
            tokens,
            next: 0,
            current: Token::default(),
        }
    }
}

/// The tokens of one text, made up front.
pub struct Tokens {
    tokens: Vec<Token>,
    next: usize,
    current: Token,
}

impl TokenStream for Tokens {
    fn advance(&mut self) -> bool {
        match self.tokens.get_mut(self.next) {
            Some(token) => {
                self.current = std::mem::take(token);
                self.next += 1;
                true
            }
            None => false,
        }
    }

    fn token(&self) -> &Token {
        &self.current
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.current
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::{FTS5_TOKENIZER, indexed_text};

    fn analyze(text: &str) -> Vec<String> {
        let mut analyzer = Analyzer::default();
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while let Some(token) = stream.next() {
            out.push(token.text.clone());
        }
        out
    }

    #[test]
    fn words_are_folded_and_stemmed_like_fts5_porter() {
        assert_eq!(
            analyze("Running the Café's connections, E-5!"),
            ["run", "the", "cafe", "s", "connect", "e", "5"]
        );
        // The original Porter algorithm, not Porter2: "generously" → "gener".
        assert_eq!(analyze("generously"), ["gener"]);
    }

    #[test]
    fn tokens_are_the_ones_fts5_makes() {
        let text = "Generously running connections: naïve Ärzte übernehmen \
            E-5 error_code 42nd relational conditional hopping agreed feed \
            a ab abc 数据 Привет мир café's ὀδυσσεύς ÉCOLE flies dying \
            मुख्य कार्यालय 東京都 İstanbul Zu\u{0308}rich ﬁnancial Wi-Fi 2.14.3";
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = \"{FTS5_TOKENIZER}\");
             CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');"
        ))
        .unwrap();
        conn.execute("INSERT INTO t (x) VALUES (?1)", [indexed_text(text)])
            .unwrap();
        let fts5: Vec<String> = conn
            .prepare("SELECT term FROM v ORDER BY \"offset\"")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(analyze(&indexed_text(text)), fts5);
        // FTS5's Porter works on bytes, so a non-ASCII letter counts as two
        // consonants: "straße" loses its "e" there, not here.
        assert_eq!(analyze("Straße"), ["straße"]);
    }

    #[test]
    fn a_query_word_becomes_the_term_its_text_makes() {
        assert_eq!(term("Connections").as_deref(), Some("connect"));
        assert_eq!(term("naïve").as_deref(), Some("naiv"));
        assert_eq!(term("数据").as_deref(), Some("数据"));
    }
}
