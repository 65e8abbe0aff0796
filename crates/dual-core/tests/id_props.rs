//! Property tests of resource id parsing: only canonical ULID text is an id, and two different
//! accepted strings never name the same id unless they differ only by case.

use dual_core::ResourceId;
use proptest::prelude::*;

/// 26 characters from a set larger than the Crockford alphabet (both cases, the excluded letters
/// I, L, O, U, and punctuation), with a first character that is usually a digit.
const CANDIDATE: &str = "[0-9A-Za-z][0-9A-Za-z._~-]{25}";

/// `text` with some characters changed: case flipped, or replaced by another character of the
/// candidate set, at the positions `edits` names.
fn mutate(text: &str, edits: &[(usize, u8, bool)]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for &(at, replacement, flip_case) in edits {
        let at = at % bytes.len();
        bytes[at] = if flip_case {
            if bytes[at].is_ascii_uppercase() {
                bytes[at].to_ascii_lowercase()
            } else {
                bytes[at].to_ascii_uppercase()
            }
        } else {
            replacement
        };
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn distinct_accepted_strings_name_distinct_ids_unless_case_differs(
        a in CANDIDATE,
        edits in proptest::collection::vec((0usize..26, proptest::sample::select(b"0789AHIJLOUZahilouz.~".to_vec()), any::<bool>()), 0..4),
    ) {
        let b = mutate(&a, &edits);
        if let (Ok(x), Ok(y)) = (a.parse::<ResourceId>(), b.parse::<ResourceId>()) {
            prop_assert_eq!(x == y, a.eq_ignore_ascii_case(&b), "{} vs {}", a, b);
        }
    }

    /// Flipping the first character of a valid id to one outside `0`–`7` is refused, never an alias.
    #[test]
    fn a_first_character_past_seven_is_refused(first in "[89A-Za-z]", rest in "[0-9A-HJKMNP-TV-Z]{25}") {
        let text = format!("{first}{rest}");
        prop_assert!(text.parse::<ResourceId>().is_err(), "{} was accepted", text);
    }

    /// Every accepted string prints back as itself in upper case.
    #[test]
    fn accepted_strings_print_back_in_upper_case(first in "[0-7]", rest in "[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}") {
        let text = format!("{first}{rest}");
        let id: ResourceId = text.parse().map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(id.to_string(), text.to_ascii_uppercase());
    }
}
