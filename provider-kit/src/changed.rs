//! Which lines of one side of a change are new relative to the other side.
//!
//! The common prefix and suffix are unchanged; in the middle, a line counts as unchanged while the
//! other side still has an unmatched copy of it (ending included), so moved lines are not new. This is
//! linear in the number of lines, unlike a full diff, and never marks an untouched line as changed.

use std::collections::HashMap;

use crate::text::Text;

/// `changed[i]` is true when line `i` of `this` is not in `other`. No other side: every line is new.
pub fn changed_lines(this: &Text<'_>, other: Option<&Text<'_>>) -> Vec<bool> {
    let count = this.lines.len();
    let Some(other) = other else {
        return vec![true; count];
    };
    let theirs = other.lines.len();
    let mut prefix = 0;
    while prefix < count.min(theirs) && this.with_ending(prefix) == other.with_ending(prefix) {
        prefix += 1;
    }
    let mut suffix = 0;
    while suffix < (count - prefix).min(theirs - prefix)
        && this.with_ending(count - 1 - suffix) == other.with_ending(theirs - 1 - suffix)
    {
        suffix += 1;
    }
    let mut pool: HashMap<&str, usize> = HashMap::new();
    for index in prefix..theirs - suffix {
        *pool.entry(other.with_ending(index)).or_default() += 1;
    }
    let mut changed = vec![false; count];
    for (index, flag) in changed
        .iter_mut()
        .enumerate()
        .take(count - suffix)
        .skip(prefix)
    {
        match pool.get_mut(this.with_ending(index)) {
            Some(left) if *left > 0 => *left -= 1,
            _ => *flag = true,
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed(after: &str, before: Option<&str>) -> Vec<usize> {
        let after = Text::new(after);
        let before = before.map(Text::new);
        changed_lines(&after, before.as_ref())
            .into_iter()
            .enumerate()
            .filter_map(|(i, c)| c.then_some(i))
            .collect()
    }

    #[test]
    fn a_new_file_is_all_new() {
        assert_eq!(changed("a\nb\n", None), [0, 1]);
    }

    #[test]
    fn only_edited_and_inserted_lines_are_new() {
        assert_eq!(changed("a\nB\nc\nx\nd\n", Some("a\nb\nc\nd\n")), [1, 3]);
    }

    #[test]
    fn moved_lines_are_not_new_and_duplicates_count() {
        assert_eq!(changed("c\na\nb\n", Some("a\nb\nc\n")), Vec::<usize>::new());
        assert_eq!(changed("a\na\na\n", Some("a\nb\na\n")), [1]);
    }

    #[test]
    fn a_changed_ending_is_a_change() {
        assert_eq!(changed("a\r\nb\n", Some("a\nb\n")), [0]);
        assert_eq!(changed("a\nb", Some("a\nb\n")), [1]);
    }

    #[test]
    fn identical_sides_have_nothing_new() {
        assert_eq!(changed("a\nb", Some("a\nb")), Vec::<usize>::new());
    }
}
