//! "Did you mean": the known name closest to a misspelt one.

/// The name of `known` closest to `wrong` by edit distance (case folded),
/// if it is close enough to be a likely slip: at most a third of the
/// longer name's length, and at least one edit allowed.
pub(crate) fn closest<'a>(
    wrong: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let wrong = wrong.to_lowercase();
    known
        .into_iter()
        .map(|k| (distance(&wrong, &k.to_lowercase()), k))
        .filter(|(d, k)| *d <= (wrong.chars().count().max(k.chars().count()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// The edit distance between `a` and `b` in characters, a swap of two
/// neighbours counting as one edit (optimal string alignment).
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slip_finds_its_name_and_a_stranger_finds_none() {
        let known = ["places", "text", "region"];
        assert_eq!(closest("place", known), Some("places"));
        assert_eq!(closest("Txet", known), Some("text"));
        assert_eq!(
            closest("ecoh", ["echo", "add"]),
            Some("echo"),
            "a swap is one slip"
        );
        assert_eq!(closest("regoin", known), Some("region"));
        assert_eq!(closest("colour", known), None);
        assert_eq!(closest("x", known), None);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
    }
}
