//! What the side-by-side benchmarks (`precommit`, `linters`) share: their command line after `--`
//! (a bare number of rounds, `files=N`, words such as `keep`) and the median of their rounds.

/// The words after `--`.
pub(crate) struct Args(Vec<String>);

impl Args {
    pub(crate) fn from_env() -> Args {
        Args(std::env::args().skip(1).collect())
    }

    /// The rounds a bare number names, else `default`; at least one.
    pub(crate) fn rounds(&self, default: usize) -> usize {
        self.0
            .iter()
            .find_map(|a| a.parse::<usize>().ok())
            .unwrap_or(default)
            .max(1)
    }

    /// The files `files=N` names, else `default`; at least `least`.
    pub(crate) fn files(&self, default: usize, least: usize) -> usize {
        self.0
            .iter()
            .find_map(|a| a.strip_prefix("files=")?.parse::<usize>().ok())
            .unwrap_or(default)
            .max(least)
    }

    /// Whether `word` was given (`keep`, `config`).
    pub(crate) fn has(&self, word: &str) -> bool {
        self.0.iter().any(|a| a == word)
    }
}

/// The median of `samples` (the upper one of an even count).
pub(crate) fn median<T: PartialOrd + Copy>(mut samples: Vec<T>) -> T {
    samples.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    samples[samples.len() / 2]
}
