//! Function words of languages other than English — articles, pronouns,
//! prepositions, conjunctions and the commonest auxiliary verbs — which say
//! nothing of what a document is about: a word list of keywords or topics
//! leaves them out. Words that are also English content words (`car`, `door`,
//! `plus`, `war`) are not listed.

/// German, French, Spanish, Italian, Portuguese, Dutch, Greek, Russian and
/// Arabic function words, lowercase.
const FUNCTION_WORDS: &str = "\
    der die das den dem des ein eine einen einem einer eines und oder aber nicht ist sind \
    waren wird werden wurde wurden hat haben hatte kann können muss müssen soll sollen darf \
    gilt gelten beträgt für von vom zum zur mit bei beim nach aus auf über unter vor hinter \
    neben zwischen durch gegen ohne bis seit innerhalb außerhalb während wegen als wie auch \
    noch nur schon sehr sich sie wir ihr ihre ihren ihrem ihrer sein seine seinen seinem \
    seiner dieser diese dieses diesen diesem jeder jede jedes alle allen dass daß wenn weil \
    damit dabei dazu hier dort kein keine keinen ins \
    les une des aux est sont être été avoir ont fait peut doit dans sur sous avec pour sans \
    entre vers chez selon depuis pendant avant après cet cette ces qui que quoi dont ils elle \
    elles nous vous leur leurs ses notre nos votre vos tout tous toute toutes aussi comme \
    très lui donc \
    los las unos unas una pero está están fue han hay puede debe del con por para sin sobre \
    hasta desde durante según quien cual cuales cuando donde como más muy sus este esta \
    estos estas ese esa eso les todo todos toda todas también \
    gli uno non sono essere stato hanno può deve dello della dei degli delle dal dallo dalla \
    dai dagli dalle nel nello nella nei negli nelle sul sulla sui tra fra che cui più molto \
    suo sua suoi sue questo questa questi queste quello quella anche tutto tutti \
    uma uns umas mas não são estão foi tem têm pode deve dos das nos nas aos com pelo pela \
    pelos pelas sem até que quem qual onde mais muito seu sua seus suas estes esse essa \
    isso também \
    het een maar niet zijn waren wordt worden werd heeft hebben kan moet van voor met bij \
    naar uit onder tussen tegen zonder tot sinds binnen als ook nog alleen dat dit deze wie \
    wat waar wanneer hij zij wij jullie hun haar aan \
    και του της των την τον στο στη στην στα στις στους τις τους για από με που είναι οι το \
    τα σε ως θα να δεν μια ένα ενός μιας αυτό αυτή αυτά κατά μετά πριν όπως έχει έχουν ή \
    όταν πρέπει \
    и в во не что он на с со как а то все она так его но да к у же вы за бы по только ее её \
    было от еще ещё нет о из ему для при или это этот эта эти быть был была были есть также \
    который которые которая которое должен должны после через между над под без до их они \
    мы чем если когда \
    في من إلى الى على عن مع هذا هذه ذلك تلك التي الذي الذين هو هي هم أن إن كان كانت لا ما \
    لم لن قد بين بعد قبل حتى أو ثم كل عند غير أي يتم";

static FUNCTION_WORD_SET: std::sync::LazyLock<std::collections::HashSet<&'static str>> =
    std::sync::LazyLock::new(|| FUNCTION_WORDS.split_whitespace().collect());

/// Whether `word`, lowercase, is a function word of a language other than
/// English (see the module comment).
pub fn is_function_word(word: &str) -> bool {
    FUNCTION_WORD_SET.contains(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_words_of_several_languages_are_known() {
        for word in [
            "die", "für", "les", "des", "los", "della", "não", "het", "της", "для", "على",
        ] {
            assert!(is_function_word(word), "{word}");
        }
        for word in ["kündigung", "congés", "vacaciones", "door", "car", "Die"] {
            assert!(!is_function_word(word), "{word}");
        }
    }
}
