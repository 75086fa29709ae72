//! The words both keyword indexes (FTS5 and the lexical index) hold, and
//! the words a question is searched by, cut the same way.
//!
//! Their tokenizer (`unicode61`) cuts text wherever a character is not a
//! letter, digit or mark, and folds Latin letters' diacritics. Text reaches
//! it in a form where the same word written differently meets:
//! - [`normalized`]: compatibility forms (`ﬁ`, full-width `ＶＰＮ`, half-width
//!   kana, `CO₂`) as their plain letters; the diacritics of Latin, Greek,
//!   Cyrillic, Hebrew and Arabic letters removed in whatever form they were
//!   written (precomposed or combining: macOS writes the latter), as
//!   Elasticsearch's ICU folding does; letters no decomposition reaches
//!   (`ß`, `ø`, `ł`, `æ`, Turkish `ı`) spelled in ASCII; invisible characters
//!   (soft hyphens, zero-width joiners) dropped.
//! - [`words`]: Chinese, Japanese and Korean are written without spaces, so a
//!   whole clause would be one "word" no question could find a word in. A
//!   run of their characters is cut into its overlapping pairs (东京都 → 东京
//!   京都), as Lucene's CJK analyser does; a question is cut the same way.
//! - [`joined_words`]: a word a question writes with inner punctuation
//!   (`Wi-Fi`, `IL-6`, `2.14.3`) is cut into its parts, yet texts spell such
//!   words both ways: it is also searched joined (`wifi`; see
//!   `fts::search_terms`). The index does not add joined words: that lowered
//!   keyword-only search (SciFact nDCG@10 0.7024 → 0.6931).

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// The word analysis stores are written with (`meta.word_analysis`): 1 (or
/// none) before text was normalised and CJK cut in pairs; 2 before a
/// document's title was indexed with the words of its path.
pub const WORD_ANALYSIS: u32 = 3;

/// The FTS5 tokenizer of the keyword indexes: marks (`M*`) belong to words,
/// so that words of scripts whose vowels are marks (Devanagari) stay whole.
pub const FTS5_TOKENIZER: &str = "porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'";

/// What may join the parts of one written word: hyphens, dots, apostrophes,
/// slashes and underscores.
const INNER_PUNCTUATION: &[char] = &['-', '\u{2010}', '\u{2011}', '.', '\'', '\u{2019}', '/', '_'];

/// Most parts a written word joined back may have: longer runs are paths,
/// addresses and version numbers, which nobody types without their dots.
const MAX_JOINED_PARTS: usize = 4;

/// Whether `c` belongs to a script written without spaces between words:
/// Han ideographs, Hiragana, Katakana and Hangul.
pub fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30FF}'     // Hiragana, Katakana
        | '\u{31F0}'..='\u{31FF}'   // Katakana phonetic extensions
        | '\u{3400}'..='\u{4DBF}'   // Han extension A
        | '\u{4E00}'..='\u{9FFF}'   // Han
        | '\u{F900}'..='\u{FAFF}'   // Han compatibility
        | '\u{FF66}'..='\u{FF9F}'   // half-width Katakana
        | '\u{1100}'..='\u{11FF}'   // Hangul Jamo
        | '\u{3130}'..='\u{318F}'   // Hangul compatibility Jamo
        | '\u{AC00}'..='\u{D7AF}'   // Hangul syllables
        | '\u{20000}'..='\u{2FA1F}' // Han extensions B–F, compatibility supplement
    )
}

/// The words of `text` as the keyword indexes hold them, before folding and
/// stemming: runs of letters and digits, each run of CJK characters as its
/// overlapping pairs (a lone one as itself).
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_word_char(c))
        .filter(|run| !run.is_empty())
        .flat_map(Pieces::of)
}

/// Letters, digits and marks: what FTS5's tokenizer keeps in a word.
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || is_combining_mark(c)
}

/// `text` as the keyword indexes read it: see the module comment.
pub fn normalized(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut plain = String::with_capacity(text.len());
    let mut base_has_diacritics = false;
    for c in text.nfkd() {
        if is_combining_mark(c) {
            if !base_has_diacritics || c == '\u{3099}' || c == '\u{309A}' {
                plain.push(c);
            }
            continue;
        }
        base_has_diacritics = writes_diacritics_as_marks(c);
        match c {
            '\u{00AD}' | '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{0640}' => {}
            'ß' | 'ẞ' => plain.push_str("ss"),
            'æ' | 'Æ' => plain.push_str("ae"),
            'œ' | 'Œ' => plain.push_str("oe"),
            'þ' | 'Þ' => plain.push_str("th"),
            'ø' | 'Ø' => plain.push('o'),
            'ł' | 'Ł' => plain.push('l'),
            'đ' | 'Đ' | 'ð' | 'Ð' => plain.push('d'),
            'ħ' | 'Ħ' => plain.push('h'),
            'ı' => plain.push('i'),
            'ة' => plain.push('ه'),
            'ى' => plain.push('ي'),
            _ => plain.push(c),
        }
    }
    Cow::Owned(plain.nfc().collect())
}

/// Whether the marks after `c` are diacritics that spelling may leave out:
/// those of Latin, Greek, Cyrillic, Hebrew and Arabic letters (not the vowel
/// signs of Indic scripts, nor the voicing marks of kana).
fn writes_diacritics_as_marks(c: char) -> bool {
    c.is_ascii_alphabetic()
        || matches!(c,
            '\u{00C0}'..='\u{024F}'   // Latin-1 supplement, Latin extended A and B
            | '\u{1E00}'..='\u{1EFF}' // Latin extended additional
            | '\u{0370}'..='\u{052F}' // Greek, Cyrillic
            | '\u{1F00}'..='\u{1FFF}' // Greek extended
            | '\u{0590}'..='\u{06FF}' // Hebrew, Arabic
        )
}

/// The pieces of one run of letters and digits: the run itself unless it
/// holds CJK characters; then its other-script stretches whole, and its CJK
/// stretches as pairs.
struct Pieces<'a> {
    rest: &'a str,
    /// The CJK character before `rest`'s first, when `rest` continues a CJK stretch.
    in_cjk_stretch: bool,
}

impl<'a> Pieces<'a> {
    fn of(run: &'a str) -> Self {
        Pieces {
            rest: run,
            in_cjk_stretch: false,
        }
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        loop {
            let mut chars = self.rest.char_indices();
            let (_, first) = chars.next()?;
            if self.rest.is_ascii() || !is_cjk(first) {
                let end = self
                    .rest
                    .char_indices()
                    .find(|&(_, c)| is_cjk(c))
                    .map_or(self.rest.len(), |(at, _)| at);
                let piece = &self.rest[..end];
                self.rest = &self.rest[end..];
                self.in_cjk_stretch = false;
                return Some(piece);
            }
            let second = chars.next().filter(|&(_, c)| is_cjk(c));
            let after_first = first.len_utf8();
            match second {
                Some((_, c)) => {
                    let pair = &self.rest[..after_first + c.len_utf8()];
                    self.rest = &self.rest[after_first..];
                    self.in_cjk_stretch = true;
                    return Some(pair);
                }
                None => {
                    // The stretch's last character: already in the pair before
                    // it, unless the stretch is this character alone.
                    let lone = &self.rest[..after_first];
                    self.rest = &self.rest[after_first..];
                    let was_in_stretch = std::mem::replace(&mut self.in_cjk_stretch, false);
                    if !was_in_stretch {
                        return Some(lone);
                    }
                }
            }
        }
    }
}

/// The letters and the digits of each code-like word of `text` typed
/// without its separator (`LDG4012` → `ldg`, `4012`), as texts write such
/// codes with one (`LDG-4012`), which the indexes cut in two. Only two or
/// more letters then two or more digits: `5GHz`, `p53` or `E0277` stay whole.
pub fn code_parts(text: &str) -> impl Iterator<Item = String> + '_ {
    words(text).flat_map(|word| {
        let letters = word.bytes().take_while(u8::is_ascii_alphabetic).count();
        let digits = &word[letters..];
        let code = letters >= 2 && digits.len() >= 2 && digits.bytes().all(|b| b.is_ascii_digit());
        code.then(|| [word[..letters].to_lowercase(), digits.to_string()])
            .into_iter()
            .flatten()
    })
}

/// Each word of `text` written with inner punctuation, its 2 to
/// [`MAX_JOINED_PARTS`] parts joined and lowercased (`Wi-Fi` → `wifi`,
/// `2.14.3` → `2143`), when none is CJK and the joined word has at least 3
/// characters. Paired with the byte offset where the
/// written word ends.
pub fn joined_words(text: &str) -> impl Iterator<Item = String> + '_ {
    let written_words = text
        .split(|c: char| !(is_word_char(c) || INNER_PUNCTUATION.contains(&c)))
        .filter(|written| !written.is_empty());
    written_words.filter_map(|written| {
        let parts: Vec<&str> = written
            .split(|c: char| !is_word_char(c))
            .filter(|part| !part.is_empty())
            .collect();
        let joinable = (2..=MAX_JOINED_PARTS).contains(&parts.len())
            && !parts.iter().any(|part| part.chars().any(is_cjk));
        let joined = parts.concat().to_lowercase();
        (joinable && joined.chars().count() >= 3).then_some(joined)
    })
}

/// The text the keyword indexes are given for `text`: the [`words`] of its
/// [`normalized`] form, separated by spaces.
pub fn indexed_text(text: &str) -> String {
    words(&normalized(text)).collect::<Vec<_>>().join(" ")
}

/// The text the keyword indexes are given for a document's title: its
/// [`indexed_text`], then the words of its path that the title lacks. A file
/// is often named for what it is about (`runbooks/vpn-reset.md` titled
/// "Summary"), and people look for a file by its name, as qmd indexes paths.
/// A folder or file name without letters (`2024`, an id like `4983`) says
/// nothing and is left out; so is the file's extension (its type is a filter).
pub fn indexed_title(title: &str, path: &str) -> String {
    let mut indexed = indexed_text(title);
    let mut known: Vec<String> = indexed.split(' ').map(str::to_lowercase).collect();
    // Names written percent-encoded (saved web pages, ids made into file
    // names) are read as their words.
    for word in path_names(&kts_record::percent_decoded(path)).flat_map(|name| {
        words(&normalized(name))
            .map(str::to_string)
            .collect::<Vec<_>>()
    }) {
        let lower = word.to_lowercase();
        if !known.contains(&lower) {
            if !indexed.is_empty() {
                indexed.push(' ');
            }
            indexed.push_str(&word);
            known.push(lower);
        }
    }
    indexed
}

/// The folder and file names of a scope path (and of the part inside a file:
/// `mail.eml#attachment/report.pdf`) that hold a letter, file names without
/// their extension.
fn path_names(path: &str) -> impl Iterator<Item = &str> {
    path.split('#').flat_map(|file| {
        let names: Vec<&str> = file.split('/').collect();
        let last = names.len().saturating_sub(1);
        names.into_iter().enumerate().filter_map(move |(i, name)| {
            let name = match name.rsplit_once('.') {
                Some((stem, extension))
                    if i == last && !stem.is_empty() && extension.len() <= 5 =>
                {
                    stem
                }
                _ => name,
            };
            name.chars().any(char::is_alphabetic).then_some(name)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_indexed_with_the_words_its_path_adds() {
        assert_eq!(
            indexed_title("Summary", "runbooks/vpn-reset.md"),
            "Summary runbooks vpn reset"
        );
        assert_eq!(
            indexed_title("VPN reset", "docs/vpn_reset.md"),
            "VPN reset docs"
        );
        assert_eq!(indexed_title("Minutes", "2024/03-11.md"), "Minutes");
        assert_eq!(indexed_title("Results", "4983"), "Results");
        assert_eq!(indexed_title("am", "android%2Fam"), "am android");
        assert_eq!(
            indexed_title("Re: budget", "inbox.eml#attachment/Q3 plan.v2.xlsx"),
            "Re budget inbox attachment Q3 plan v2"
        );
        assert_eq!(indexed_title("", "notes/.env"), "notes env");
    }

    #[test]
    fn cjk_runs_are_cut_into_overlapping_pairs() {
        let cut: Vec<&str> = words("东京都的 API 服务器, 中 Rust言語 キャッシュ 한국어").collect();
        assert_eq!(
            cut,
            [
                "东京", "京都", "都的", "API", "服务", "务器", "中", "Rust", "言語", "キャ",
                "ャッ", "ッシ", "シュ", "한국", "국어"
            ]
        );
    }

    #[test]
    fn other_words_are_runs_of_letters_and_digits() {
        let cut: Vec<&str> = words("Café's naïve E-5 Привет, мир! 42nd").collect();
        assert_eq!(
            cut,
            ["Café", "s", "naïve", "E", "5", "Привет", "мир", "42nd"]
        );
    }

    #[test]
    fn words_written_with_inner_punctuation_are_also_joined() {
        let joined: Vec<String> = joined_words(
            "Wi-Fi at IL-6 in the U.S.A., e.g. 3.14 or v1.2.3.4.5 and 東京-大阪 O'Neill's",
        )
        .collect();
        assert_eq!(joined, ["wifi", "il6", "usa", "314", "oneills"]);
    }

    #[test]
    fn spellings_of_one_word_meet() {
        for (written, plain) in [
            (
                "Zu\u{0308}rich ﬁnancial ＶＰＮ CO₂",
                "Zurich financial VPN CO2",
            ),
            ("İstanbul BİLGİ İŞLEM ılık", "Istanbul BILGI ISLEM ilik"),
            (
                "Straße Øresund Łódź Œuvre Æsir Þór",
                "Strasse oresund lodz oeuvre aesir thor",
            ),
            ("Αθήνας ΆΘΗΝΑΣ ёлка", "Αθηνας ΑΘΗΝΑΣ елка"),
            ("مُسْتَخْدِمٍ الإجازة السنوية", "مستخدم الاجازه السنويه"),
            ("מִשְׁתַּמֵּשׁ", "משתמש"),
            ("docu\u{00AD}mentation ﾊﾟｽﾜｰﾄﾞ", "documentation パスワード"),
        ] {
            assert_eq!(normalized(written), plain, "{written}");
        }
    }

    #[test]
    fn marks_that_are_not_diacritics_stay_in_their_words() {
        let text = normalized("मुख्य कार्यालय दिल्ली パスワード");
        let cut: Vec<&str> = words(&text).collect();
        assert_eq!(
            cut,
            ["मुख्य", "कार्यालय", "दिल्ली", "パス", "スワ", "ワー", "ード"]
        );
    }

    #[test]
    fn the_indexed_text_holds_the_words_of_the_normalised_text() {
        assert_eq!(
            indexed_text("Turn Wi-Fi off; 东京都 IL-6 ＶＰＮ."),
            "Turn Wi Fi off 东京 京都 IL 6 VPN"
        );
        assert_eq!(indexed_text(""), "");
    }
}
